#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# memcached (four threads) under memcslap (wl_memcached in lib.sh); 2 %
# random loss each way at the switch. Every connection recorded is
# replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed loss || exit $ksft_fail

workload() {
	wl_memcached
}

app_run memcached_loss 11211
exit $RET
