#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sockperf's TCP throughput test (wl_sockperf in lib.sh); nothing at the
# switch. Every connection recorded is replayed against tcpdump's ground
# truth.

source "$(dirname "$0")/lib.sh"

app_testbed clean || exit $ksft_fail

workload() {
	wl_sockperf tp
}

app_run sockperf_tp 11111
exit $RET
