#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sockperf's TCP throughput test (wl_sockperf in lib.sh); the switch
# reorders each way (netem: a quarter of the packets overtake those sent
# up to 1 ms before them). Every connection recorded is replayed against
# tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed reorder || exit $ksft_fail

workload() {
	wl_sockperf tp
}

app_run sockperf_tp_reorder 11111
exit $RET
