#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: tail drop. A sends 10 requests of 14480 B (ten full
# segments each) and B answers each with 100 B; the switch drops the last
# data segment of the third request, so A recovers with a tail loss probe
# or an RTO.

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms
switch_drop_nth "$A_IP" 30

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" --rpc 14480:100 > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --rpc 10:14480:100 > /dev/null
	wait $srv
}

scenario_run tail_drop
exit $RET
