#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: RPC over one persistent connection, 20 requests of
# 200 B answered with 2000 B, 1 ms each way, offloads off.

source "$(dirname "$0")/lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" --rpc 200:2000 > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --rpc 20:200:2000 > /dev/null
	wait $srv
}

scenario_run rpc
exit $RET
