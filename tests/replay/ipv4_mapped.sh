#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: IPv6 sockets. B's server listens on :: (an AF_INET6
# socket) and A's client connects to ::ffff:10.0.2.1: both ends are
# AF_INET6 sockets with an IPv4 peer (v4-mapped), whose segments are
# IPv4's; deter records and replays them as such. Meanwhile a pure IPv6
# connection on the same port runs over A's loopback (::1): deter records
# none of IPv6, and must not log it wrong: deter record says it left 2
# connection ends out, and the directory has the mapped connection's two
# logs only, none with a 0.0.0.0 or garbage identity and no segment
# received.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
ip netns exec "$A" sysctl -qw net.ipv6.conf.lo.disable_ipv6=0 || exit $ksft_fail

workload() {
	local srv6

	ip netns exec "$A" "$TCPWL" server -b ::1 > "$TB_TMP/server6.out" &
	srv6=$!
	wait_listen "$A" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c ::1 --bytes 300000 > "$TB_TMP/client6.out" ||
		return 1
	wait $srv6 || return 1
	tcpwl_pair '-b ::' "-c ::ffff:$B_IP --bytes 1000000"
}

scenario_record ipv4_mapped || exit $RET
CHECK_RC=0
grep -q "^deter record: 2 IPv6 connections not recorded" "$TB_TMP/record.err"
check_err $? "deter record did not say it left the IPv6 connection out: $(cat "$TB_TMP/record.err")"
n=$(grep -c '"id"' "$TB_TMP/ls.json")
[ "$n" -eq 2 ] && ! grep -q -e '0\.0\.0\.0' -e '127\.' "$TB_TMP/ls.json"
check_err $? "$n logs, expected A's and B's of the mapped connection: $(cat "$TB_TMP/ls.json")"
B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
[ -n "$B_ID" ]
check_err $? "no log of B's end of the mapped connection: $(cat "$TB_TMP/ls.json")"
grep -q "\"id\":\"$ID\".*\"bytes_sent\":1000002," "$TB_TMP/ls.json"
check_err $? "A's log does not have the 1000000 B sent (+ SYN and FIN): $(grep "$ID" "$TB_TMP/ls.json")"
log_test $CHECK_RC "ipv4_mapped: the mapped connection's two logs, the IPv6 one left out and said so"
scenario_replays ipv4_mapped
exit $RET
