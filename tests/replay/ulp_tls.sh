#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: A attaches the "tls" ULP once connected, sets a kTLS transmit
# key and sends 1 MB, which kTLS encrypts into records. A ULP or a BPF
# sockmap puts a layer above TCP that calls it past deter's hooks
# (kTLS's sends reach TCP through tcp_sendmsg_locked(), not
# tcp_sendmsg()), so A's log would have lock turns without their calls:
# it must be marked incomplete, "unseen-calls", B's
# (which reads the records as plain bytes) must be complete, and deter
# replay must refuse the pair in one line saying why.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 1000000 --ulp tls-tx'
}

REC_INCOMPLETE_OK=1 scenario_record ulp_tls || exit $ksft_fail
unseen_check ulp_tls a
exit $RET
