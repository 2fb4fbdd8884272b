#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sockperf's TCP throughput test (wl_sockperf in lib.sh); a 10 Mbit/s
# bottleneck with an 8 KB queue each way. Every connection recorded is
# replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed taildrop || exit $ksft_fail

workload() {
	wl_sockperf tp
}

app_run sockperf_tp_taildrop 11111
exit $RET
