#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nginx (two workers, epoll, keep-alive) serving wrk (wl_nginx_wrk in
# lib.sh); the switch reorders each way (netem: a quarter of the packets
# overtake those sent up to 1 ms before them). Every connection recorded
# is replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed reorder || exit $ksft_fail

workload() {
	wl_nginx_wrk
}

app_run nginx_wrk_reorder 80
exit $RET
