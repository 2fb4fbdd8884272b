#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: TCP Fast Open. B's namespace serves it (tcp_fastopen 3, and
# TCP_FASTOPEN on the listener), A connects with TCP_FASTOPEN_CONNECT.
# Two recorded connections: the first asks for a cookie (its SYN carries
# an empty Fast Open option, B's SYN-ACK a cookie made from B's
# namespace's secret key, which A's host caches), the second sends it
# with its first request in the SYN. Neither the key, nor the cookie A's
# cache gave, nor the one B sent is logged, and a replay's fresh hosts
# have neither: both ends' logs of both connections must say so (VALUE
# MISSING FASTOPEN, "incomplete,missing-values"), as tcpdump's SYNs
# show Fast Open options, and deter replay must refuse each pair in one
# line naming it.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
ip netns exec "$B" sysctl -qw net.ipv4.tcp_fastopen=3 &&
	ip netns exec "$A" sysctl -qw net.ipv4.tcp_fastopen=1
log_test $? "fastopen: tcp_fastopen 1 at A, 3 at B"

workload() {
	tcpwl_pair '--fastopen --rpc 200:2000' '--fastopen --rpc 5:200:2000' &&
		tcpwl_pair '--fastopen --rpc 200:2000' '--fastopen --rpc 50:200:2000'
}

fastopen_check() {
	local syns req ck ids id n=0 bad=0

	# Ground truth: A's SYNs as tcpdump saw them.
	tcpdump -nr "$TB_TMP/a0.pcap" -v 'tcp[tcpflags] & tcp-syn != 0' 2>/dev/null |
		grep -A1 'Flags \[S\]' > "$TB_TMP/syns.txt"
	syns=$(grep -c 'Flags \[S\]' "$TB_TMP/syns.txt")
	req=$(grep -c 'tfo *cookiereq' "$TB_TMP/syns.txt")
	ck=$(grep -E 'tfo *cookie [0-9a-f]+' "$TB_TMP/syns.txt" | grep -c 'length 200')
	CHECK_RC=0
	[ "$syns" = 2 ] && [ "$req" = 1 ] && [ "$ck" = 1 ]
	check_err $? "tcpdump: $syns SYNs from A, $req asking for a cookie, $ck with one and 200 bytes: $(cat "$TB_TMP/syns.txt")"
	log_test $CHECK_RC "fastopen: tcpdump saw A ask for a cookie, then send one with its first request"

	CHECK_RC=0
	ids=$(sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p' "$TB_TMP/ls.json")
	for id in $ids; do
		n=$((n + 1))
		grep "\"id\":\"$id\"" "$TB_TMP/ls.json" | grep -q '"status":"incomplete,missing-values"' &&
			"$DETER" show -d "$LOGS" "$id" | grep -q 'missing.*TCP Fast Open' || bad=$((bad + 1))
	done
	[ "$n" = 4 ] && [ "$bad" = 0 ]
	check_err $? "$n logs, $bad without Fast Open's missing values: $(cat "$TB_TMP/ls.json")"
	log_test $CHECK_RC "fastopen: the 4 logs of both connections are incomplete, lacking Fast Open's cookies"

	for id in $(sed -n "s/.*\"id\":\"\([0-9a-f]*\)\".*\"local\":\"$A_IP:[0-9]*\",\"remote\":\"$B_IP:5201\".*/\1/p" \
			"$TB_TMP/ls.json"); do
		ID=$id replay_refused fastopen "incomplete log (missing-values: TCP Fast Open" "" pair
		n=$((n + 1))
	done
	[ "$n" = 6 ]
	log_test $? "fastopen: both pairs tried ($((n - 4)) of 2)"
}

REC_INCOMPLETE_OK=1 scenario_record fastopen || exit $ksft_fail
fastopen_check
exit $RET
