#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: SYN loss during setup. The switch drops A's first SYN;
# A retransmits it after its initial RTO (1 s), then runs 5 RPCs.

source "$(dirname "$0")/lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms
ip netns exec "$SW" nft -f - <<NFT
table inet deter_tb {
	chain drop_syn {
		type filter hook forward priority 0;
		ip saddr $A_IP tcp flags & (syn | ack) == syn numgen inc mod 1000000000 == 0 counter drop
	}
}
NFT

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" --rpc 200:2000 > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --rpc 5:200:2000 > /dev/null
	wait $srv
}

scenario_run syn_loss
exit $RET
