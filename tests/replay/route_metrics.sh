#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: routes with metrics TCP reads. A's default route has
# initcwnd 20, rto_min 20ms and a locked reordering of 10 (the first
# flight, the RTO floor, the dupthresh); B's has initrwnd 40 (the window
# its SYN-ACK offers). Bulk, 2 MB from A to B through a 100 Mbit/s, 1 ms
# link, offloads off. Each log must carry its route's metrics as
# `ip route` shows them (CONFIG SYSCTL route.*), and the replay must
# give its own routes the same: identical egress at both hosts.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

ip -n "$A" route change default via "$SW_A_IP" initcwnd 20 rto_min 20ms reordering lock 10 &&
ip -n "$B" route change default via "$SW_B_IP" initrwnd 40
log_test $? "route_metrics: testbed routes configured"

workload() {
	tcpwl_pair '' '--bytes 2000000'
}

# route_logged ID NS: ID's log has each TCP metric NS's default route
# shows, and no other.
route_logged() {
	local id=$1 want got

	want=$(ip -n "$2" route show default |
	       grep -o -E '(initcwnd|initrwnd|window|advmss|rto_min lock|cwnd lock|ssthresh lock|reordering lock) [0-9]+' |
	       sed 's/ lock//' | sort)
	got=$("$DETER" show -d "$LOGS" "$id" |
	      sed -n 's/.*config     sysctl route\.\([a-z_]*\) = \([0-9]*\)$/\1 \2/p' | sort)
	[ -n "$want" ] && [ "$want" = "$got" ]
	check_err $? "log $id has route metrics '$(echo $got)', ip route shows '$(echo $want)'"
}

if scenario_record route_metrics; then
	CHECK_RC=0
	route_logged "$ID" "$A"
	route_logged "$(log_id "$B_IP:5201" "$A_IP:[0-9]*")" "$B"
	log_test $CHECK_RC "route_metrics: both logs carry their route's metrics"
	scenario_replays route_metrics
fi
exit $RET
