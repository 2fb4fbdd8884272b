#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# OpenSSH: scp of a 1 MiB file to B and back (wl_scp in lib.sh); nothing
# at the switch. Every connection recorded is replayed against tcpdump's
# ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed clean || exit $ksft_fail

workload() {
	wl_scp
}

app_run ssh_scp 22
exit $RET
