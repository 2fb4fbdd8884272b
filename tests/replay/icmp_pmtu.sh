#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Recording scenario: ICMP errors (DETER_NET_ICMP). The switch's link to
# B has an MTU of 1200 while both hosts keep 1500, so A's first
# full-sized segments, sent with DF, come back as ICMP
# fragmentation-needed errors (type 3 code 4, MTU 1200) and A lowers its
# MSS. A's log must have one NET ICMP per error tcpdump saw reach A, with
# its type, code and MTU; deter replay, which cannot deliver ICMP errors
# yet, must refuse the pair with a one-line error naming the event.

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
	[ "$want" -gt 0 ] && [ "$got" = "$want" ]
	check_err $? "A's log has $got ICMP fragmentation-needed errors, tcpdump saw $want reach A"
	log_test $CHECK_RC "icmp_pmtu: A's log has every ICMP error tcpdump saw"

	replay_refused icmp_pmtu \
		"an ICMP error (type 3 code 4) reached this end; replay does not deliver ICMP errors yet"
fi
exit $RET
