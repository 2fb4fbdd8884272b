#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: ACK drops. The switch drops every third pure ACK B
# sends during a 1 MB transfer from A; A sees the cumulative ACKs jump.

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms 100mbit
link_shape "$B" b0 1ms
ip netns exec "$SW" nft -f - <<NFT
table inet deter_tb {
	chain drop_acks {
		type filter hook forward priority 0;
		ip saddr $B_IP tcp flags & (syn | fin | rst) == 0 ip length 52 numgen inc mod 3 == 2 counter drop
	}
}
NFT

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes 1000000 > /dev/null
	wait $srv
}

scenario_run ack_drop
exit $RET
