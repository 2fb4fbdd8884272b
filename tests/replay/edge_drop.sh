#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: drops at the edges of both IP ID series, where no
# later packet shows them missing. A sends 300 kB to B, shuts down and
# reads until B closes. The switch drops
#   - A's first pure ACK, the handshake's: B's first arrival is A's
#     first data segment (B, the passive end, knows A's SYN's IP ID and
#     counts the loss when it records);
#   - B's first packet after the handshake: A's first arrival is B's
#     second (A cannot know B's first IP ID: only the pair of logs
#     counts it);
#   - A's ACK of B's FIN, its last packet before time-wait: B sends its
#     FIN again and A's time-wait socket answers with IP ID 0, outside
#     A's series (only the pair of logs counts it).
# tcpdump on both sides of the switch must agree with deter ls (2 drops
# for B, 1 for A), and the replay must drop the same packets.
#
#   A (10.0.1.1) ---- switch (drops) ---- B (10.0.2.1:5201)

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
ip netns exec "$SW" nft -f - <<NFT || { log_test 1 "switch: B's FIN set added"; exit $ksft_fail; }
table inet deter_tb {
	set fin_from { type ipv4_addr; flags dynamic; }
}
NFT
switch_nft drop_edges "ip saddr $A_IP tcp flags == ack ip length <= 52 numgen inc mod 1000000000 == 0 counter drop
	ip saddr $B_IP tcp flags & syn == 0 numgen inc mod 1000000000 == 0 counter drop
	ip saddr $B_IP tcp flags & fin == fin update @fin_from { ip saddr }
	ip saddr $A_IP ip daddr @fin_from tcp flags == ack ip length <= 52 numgen inc mod 1000000000 == 0 counter drop" ||
	exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 300000' || return 1
	# B's FIN again and A's time-wait answer, before the captures stop.
	sleep 1
}

# edge_check: B counted the head drop itself (a GAP before its first
# arrival), and each log has the drops tcpdump saw.
edge_check() {
	local b show gap rx

	b=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	show=$("$DETER" show -d "$LOGS" "$b")
	gap=$(echo "$show" | grep -n '^ *[0-9]*  net        gap' | head -1 | cut -d: -f1)
	rx=$(echo "$show" | grep -n -E '^ *[0-9]*  (rx         ipid|value      child_ipid)' | head -1 | cut -d: -f1)
	CHECK_RC=0
	[ -n "$gap" ] && [ -n "$rx" ] && [ "$gap" -lt "$rx" ]
	check_err $? "B's log has no gap before its first arrival (gap at line ${gap:-none}, arrival at ${rx:-none})"
	log_test $CHECK_RC "edge_drop: B's log counts A's lost handshake ACK as it records"
	net_check edge_drop b 2 0 0
	net_check edge_drop a 1 0 0
}

CAPTURE_IN='a b'
scenario_run edge_drop edge_check
exit $RET
