#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: tail drop. A sends 10 requests of 14480 B (ten full
# segments each) and B answers each with 100 B; the switch drops the last
# data segment of the third request, so A recovers with a tail loss probe
# or an RTO.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_nth "$A_IP" 30

workload() {
	tcpwl_pair '--rpc 14480:100' '--rpc 10:14480:100'
}

CAPTURE_IN=b
scenario_run tail_drop net_check tail_drop b 1 0 0
exit $RET
