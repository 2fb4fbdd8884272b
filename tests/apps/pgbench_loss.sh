#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PostgreSQL on B and pgbench on A: a COPY load of its tables, then four
# clients of 50 transactions each (wl_pgbench in lib.sh); 2 % random
# loss each way at the switch. Every connection recorded is replayed
# against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed loss || exit $ksft_fail

workload() {
	wl_pgbench
}

app_run pgbench_loss 5432
exit $RET
