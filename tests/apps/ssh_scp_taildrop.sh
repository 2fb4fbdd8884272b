#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# OpenSSH: scp of a 1 MiB file to B and back (wl_scp in lib.sh); a 10
# Mbit/s bottleneck with an 8 KB queue each way. Every connection
# recorded is replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed taildrop || exit $ksft_fail

workload() {
	wl_scp
}

app_run ssh_scp_taildrop 22
exit $RET
