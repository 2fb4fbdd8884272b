#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iperf3 with two parallel streams (wl_iperf3 in lib.sh); nothing at the
# switch. iperf3's one thread writes both streams from one event loop, so
# the two share the thread's page fragment (sk_page_frag()): each of
# their sends copies into a fragment the other stream's sends moved on.
# Every connection recorded (the control connection and both streams) is
# replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed clean || exit $ksft_fail

workload() {
	wl_iperf3 2
}

# The premise: one thread sent on all of iperf3's connections from A, the
# two streams' bulk sends among them (the tid of their logs' sendmsg
# calls).
premise() {
	iperf3_premise "$1"
}

app_run iperf3_parallel 5201
exit $RET
