#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sockperf's TCP throughput test (wl_sockperf in lib.sh); RED queues
# marking CE each way, DCTCP at both hosts. Every connection recorded is
# replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed ecn || exit $ksft_fail

workload() {
	wl_sockperf tp
}

app_run sockperf_tp_ecn 11111
exit $RET
