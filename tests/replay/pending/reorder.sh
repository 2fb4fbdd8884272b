#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: reordering. The switch holds back a quarter of A's
# segments by 2 ms (netem reorder) during a 1 MB transfer: B sees them
# late, SACKs the gaps, and A's RACK/dupACK threshold adapts (§5.2).

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms 100mbit
link_shape "$B" b0 1ms
switch_queue s1 netem delay 2ms reorder 75% 50% limit 100000

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes 1000000 > /dev/null
	wait $srv
}

scenario_run reorder
exit $RET
