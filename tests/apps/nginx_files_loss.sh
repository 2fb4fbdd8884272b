#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nginx sending 1 MiB, 64 KiB and 4 KiB files with sendfile() to curl
# (wl_nginx_files in lib.sh); 2 % random loss each way at the switch.
# Every connection recorded is replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed loss || exit $ksft_fail

workload() {
	wl_nginx_files
}

app_run nginx_files_loss 80
exit $RET
