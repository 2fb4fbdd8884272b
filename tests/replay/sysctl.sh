#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: hosts whose TCP sysctls are not a new namespace's.
# A sends with autocorking and slow start after idle off and a small
# tcp_wmem; B receives with a small tcp_rmem, tcp_adv_win_scale 2 and no
# compressed SACKs; RPC over one connection, 1 ms each way. The logs must
# carry the values (CONFIG SYSCTL) and the replay must set them in its
# own namespaces: B's advertised window, from the first SYN-ACK on,
# depends on tcp_rmem and tcp_adv_win_scale.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

ip netns exec "$A" sysctl -qw net.ipv4.tcp_autocorking=0 \
	net.ipv4.tcp_slow_start_after_idle=0 "net.ipv4.tcp_wmem=4096 32768 262144" &&
ip netns exec "$B" sysctl -qw net.ipv4.tcp_adv_win_scale=2 \
	net.ipv4.tcp_comp_sack_nr=0 "net.ipv4.tcp_rmem=4096 65536 1048576"
log_test $? "sysctl: testbed hosts configured"

workload() {
	tcpwl_pair '--rpc 200:2000' '--rpc 20:200:2000'
}

# sysctl_logged END PATTERN...: each PATTERN is a line of deter show.
sysctl_logged() {
	local id=$1 p

	shift
	"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$id.txt"
	for p in "$@"; do
		grep -qF "config     sysctl $p" "$TB_TMP/show-$id.txt"
		check_err $? "log $id lacks 'sysctl $p'"
	done
}

if scenario_record sysctl; then
	CHECK_RC=0
	B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	sysctl_logged "$ID" "net.ipv4.tcp_autocorking = 0" \
		"net.ipv4.tcp_slow_start_after_idle = 0" "net.ipv4.tcp_wmem[1] = 32768"
	sysctl_logged "$B_ID" "net.ipv4.tcp_adv_win_scale = 2" \
		"net.ipv4.tcp_comp_sack_nr = 0" "net.ipv4.tcp_rmem[1] = 65536"
	# What is at its default is not logged.
	! grep -q "sysctl net.ipv4.tcp_sack " "$TB_TMP/show-$ID.txt"
	check_err $? "log $ID has tcp_sack, which is at its default"
	log_test $CHECK_RC "sysctl: both logs carry their host's non-default sysctls"
	scenario_replays sysctl
fi
exit $RET
