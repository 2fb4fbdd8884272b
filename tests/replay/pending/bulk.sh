#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: bulk transfer, 2 MB from A to B through a 100 Mbit/s,
# 1 ms link, offloads off.

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms 100mbit
link_shape "$B" b0 1ms

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes 2000000 > /dev/null
	wait $srv
}

scenario_run bulk
exit $RET
