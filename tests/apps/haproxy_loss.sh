#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# haproxy (mode http, splicing response bodies) on B in front of nginx
# on B's lo, wrk and curl on A (wl_haproxy in lib.sh); 2 % random loss
# each way at the switch. Every connection recorded, A's to haproxy and
# haproxy's to nginx (over lo), is replayed against tcpdump's ground
# truth.

source "$(dirname "$0")/lib.sh"

app_testbed loss || exit $ksft_fail

workload() {
	wl_haproxy
}

premise() {
	haproxy_premise "$1"
}

app_run haproxy_loss 80 8080
exit $RET
