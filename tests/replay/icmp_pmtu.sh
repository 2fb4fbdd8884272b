#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: ICMP errors (DETER_NET_ICMP). The switch's link to
# B has an MTU of 1200 while both hosts keep 1500, so A's first
# full-sized segments, sent with DF, come back as ICMP
# fragmentation-needed errors (type 3 code 4, MTU 1200) and A lowers its
# MSS. A's log must have one NET ICMP per error tcpdump saw reach A, with
# its type, code and MTU. The replay's switch keeps 1500: no error comes
# from the network, deter.ko hands A each logged one at its turn (while
# A's application owned the socket, or not, as in the original), and A's
# egress must be what tcpdump saw, the oversized segments and the
# retransmissions at 1200 included.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
ip -n "$SW" link set s1 mtu 1200
log_test $? "icmp_pmtu: switch link to B at MTU 1200"

workload() {
	capture_start "$A" a0 icmp "icmp and dst host $A_IP" || return 1
	tcpwl_pair '' '--bytes 200000'
}

if scenario_record icmp_pmtu; then
	CHECK_RC=0
	want=$(tcpdump -r "$TB_TMP/icmp.pcap" -n 2>/dev/null |
	       grep -c "unreachable - need to frag (mtu 1200)")
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	got=$(grep -c "^.*net        icmp type 3 code 4 info 1200, " "$TB_TMP/show-a.txt")
	owned=$(grep -c "^.*net        icmp type 3 code 4 info 1200, .*(socket owned)$" "$TB_TMP/show-a.txt")
	[ "$want" -gt 0 ] && [ "$got" = "$want" ]
	check_err $? "A's log has $got ICMP fragmentation-needed errors, tcpdump saw $want reach A"
	log_test $CHECK_RC "icmp_pmtu: A's log has every ICMP error tcpdump saw ($got, $owned while A's application owned the socket)"

	scenario_replays icmp_pmtu
fi
exit $RET
