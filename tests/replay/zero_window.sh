#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: zero window from a slow reader. B reads 500 B every
# 50 ms from a small receive buffer while A sends 30 kB, faster than B
# reads even at one segment per delayed ACK (behind e1000e, whose skbs
# cost less receive memory than veth's or virtio-net's, B's window never
# closes at 1000 B every 20 ms); B's window closes, A probes it and
# resumes when it reopens.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rcvbuf 8192 --read-size 500 --read-delay-us 50000' '--bytes 30000'
}

scenario_run zero_window premise_truth zero_window b ", win 0," "B advertise a zero window"
exit $RET
