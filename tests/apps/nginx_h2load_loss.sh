#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nginx serving h2load over HTTP/2 (wl_nginx_h2load in lib.sh); 2 %
# random loss each way at the switch. Every connection recorded is
# replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed loss || exit $ksft_fail

workload() {
	wl_nginx_h2load
}

app_run nginx_h2load_loss 80
exit $RET
