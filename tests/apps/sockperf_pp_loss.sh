#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sockperf's TCP ping-pong (wl_sockperf in lib.sh); 2 % random loss each
# way at the switch. Every connection recorded is replayed against
# tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed loss || exit $ksft_fail

workload() {
	wl_sockperf pp
}

app_run sockperf_pp_loss 11111
exit $RET
