#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# OpenSSH: scp of a 1 MiB file to B and back (wl_scp in lib.sh); a 20 Mbit/s bottleneck with a 16 KB queue towards B.
# Every connection recorded is replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed taildrop || exit $ksft_fail

workload() {
	wl_scp
}

app_run ssh_scp_taildrop 22
exit $RET
