#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nginx (two workers, epoll, keep-alive) serving wrk GETs of a 64 KiB
# file (wl_nginx_wrk in lib.sh); RED queues marking CE each way, DCTCP
# at both hosts. Every connection recorded is replayed against
# tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed ecn || exit $ksft_fail

workload() {
	wl_nginx_wrk 64k
}

app_run nginx_wrk_ecn 80
exit $RET
