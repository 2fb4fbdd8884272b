#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: zero window from a slow reader. B reads 1000 B every
# 20 ms from a small receive buffer while A sends 60 kB; B's window
# closes, A probes it and resumes when it reopens.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rcvbuf 8192 --read-size 1000 --read-delay-us 20000' '--bytes 60000'
}

scenario_run zero_window premise_truth zero_window b ", win 0," "B advertise a zero window"
exit $RET
