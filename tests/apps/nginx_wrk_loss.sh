#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nginx (two workers, epoll, keep-alive) serving wrk (wl_nginx_wrk in
# lib.sh); 2 % random loss each way at the switch. Every connection
# recorded is replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed loss || exit $ksft_fail

workload() {
	wl_nginx_wrk
}

app_run nginx_wrk_loss 80
exit $RET
