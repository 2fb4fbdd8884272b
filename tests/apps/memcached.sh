#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# memcached (four threads) under memcslap (wl_memcached in lib.sh);
# nothing at the switch. Every connection recorded is replayed against
# tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed clean || exit $ksft_fail

workload() {
	wl_memcached
}

app_run memcached 11211
exit $RET
