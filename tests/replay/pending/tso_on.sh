#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: TSO, GSO and GRO on. A 1 MB transfer from A whose
# segments leave as TSO super-packets, and an RPC exchange after it.

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 on
offload "$B" b0 on
link_shape "$A" a0 1ms 100mbit
link_shape "$B" b0 1ms

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes 1000000 > /dev/null
	wait $srv
}

scenario_run tso_on
exit $RET
