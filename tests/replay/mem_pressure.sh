#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: TCP memory pressure from the host (DETER_V_MEM). The
# original runs under a tcp_mem so low that A's and B's buffers push the
# host's TCP memory over its pressure and hard limits: TCP stops growing
# windows and buffers, moderates A's sndbuf and refuses charges. A sends
# 1 MB to B, 100 Mbit/s, 1 ms each way, offloads off. tcp_mem is global:
# the replay runs with the default again, so every decision that read it
# must come from the log. The logs must show the pressure the kernel
# counted (TcpExtTCPMemoryPressures), and the replay must match tcpdump.

source "$(dirname "$0")/lib.sh"

MEM_ORIG=$(sysctl -n net.ipv4.tcp_mem)
MEM_LOW=${MEM_LOW:-"50 100 400"}
MEM_SRV=${MEM_SRV:-"--rcvbuf 4000000 --read-size 1048576 --read-delay-us 300000"}
MEM_CLI=${MEM_CLI:-"--sndbuf 4000000 --bytes 4000000"}
mem_restore() {
	sysctl -qw net.ipv4.tcp_mem="$MEM_ORIG"
	cleanup
}
trap mem_restore EXIT

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	sysctl -qw net.ipv4.tcp_mem="$MEM_LOW" || return 1
	tcpwl_pair "$MEM_SRV" "$MEM_CLI"
	sysctl -qw net.ipv4.tcp_mem="$MEM_ORIG"
}

pressures() {
	ip netns exec "$1" nstat -az TcpExtTCPMemoryPressures | awk '$1 == "TcpExtTCPMemoryPressures" { print $2 }'
}

if scenario_record mem_pressure; then
	CHECK_RC=0
	B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	n=0
	for id in "$ID" "$B_ID"; do
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$id.txt"
		n=$((n + $(grep -c "value      mem_after [0-9]*: pressure now 1" "$TB_TMP/show-$id.txt")))
		[ -n "${MEM_DEBUG:-}" ] && grep "mem_after" "$TB_TMP/show-$id.txt" | sort | uniq -c | sort -rn | head
	done
	p=$(( $(pressures "$A") + $(pressures "$B") ))
	[ "$p" -gt 0 ] && [ "$n" -gt 0 ]
	check_err $? "kernel counted $p memory pressure entries, the logs have $n"
	[ "$(sysctl -n net.ipv4.tcp_mem)" = "$MEM_ORIG" ]
	check_err $? "tcp_mem not restored"
	log_test $CHECK_RC "mem_pressure: both ends logged the pressure the kernel counted ($p entries, $n logged)"
	for i in $(seq "$REPLAYS"); do
		scenario_replay mem_pressure "$i"
	done
fi
exit $RET
