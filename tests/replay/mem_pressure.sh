#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: TCP memory pressure from the host (DETER_V_MEM). The
# original runs under a tcp_mem (50 100 4096 pages) so low that A's and
# B's buffers push the host's TCP memory over its pressure limit (and
# not near the hard one): TCP stops
# growing windows and buffers while it lasts. A sends 6 MB with a 4 MB
# sndbuf to B, which reads 1 MB every 0.5 s from a 4 MB rcvbuf; both on
# CPU 0; 100 Mbit/s, 1 ms each way, offloads off. The buffers are set
# with SO_SNDBUFFORCE and SO_RCVBUFFORCE: SO_SNDBUF and SO_RCVBUF stop at
# net.core's wmem_max and rmem_max (416 kB by default), and raising
# rmem_max changes the window scale TCP offers (tests/replay/rmem_max.sh
# covers that). tcp_mem is global: the
# replay runs with the default again, so every decision that read it
# must come from the log. The logs must show the pressure the kernel
# counted (TcpExtTCPMemoryPressures), and the replay must match tcpdump.
source "$(dirname "$0")/lib.sh"

host_keep /proc/sys/net/ipv4/tcp_mem || exit $ksft_fail
MEM_ORIG=$(sysctl -n net.ipv4.tcp_mem)
MEM_LOW=${MEM_LOW:-"50 100 4096"}
MEM_SRV=${MEM_SRV:-"--rcvbuf 4000000 --force-bufs --read-size 1048576 --read-delay-us 500000"}
MEM_CLI=${MEM_CLI:-"--sndbuf 4000000 --force-bufs --bytes 6000000"}

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	local srv

	sysctl -qw net.ipv4.tcp_mem="$MEM_LOW" || return 1
	# Each CPU adds its sockets' charges to the host's total only in
	# 1 MB steps (net.core.mem_pcpu_rsv), and what the CPUs keep back
	# is left over from earlier sockets: the host's total may lag the
	# sockets' by up to 2 MB. The 6 MB in flight here take it past the
	# pressure limit in every run; buffers capped at 416 kB did not in
	# one CI run.
	# shellcheck disable=SC2086
	ip netns exec "$B" taskset -c 0 "$TCPWL" server -b "$B_IP" $MEM_SRV > /dev/null &
	srv=$!
	wait_listen "$B" 5201 || return 1
	# shellcheck disable=SC2086
	ip netns exec "$A" taskset -c 0 "$TCPWL" client -c "$B_IP" $MEM_CLI > /dev/null
	wait $srv
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
	done
	p=$(( $(pressures "$A") + $(pressures "$B") ))
	[ "$p" -gt 0 ] && [ "$n" -gt 0 ]
	check_err $? "kernel counted $p memory pressure entries, the logs have $n"
	[ "$(sysctl -n net.ipv4.tcp_mem)" = "$MEM_ORIG" ]
	check_err $? "tcp_mem not restored"
	log_test $CHECK_RC "mem_pressure: both ends logged the pressure the kernel counted ($p entries, $n logged)"
	scenario_replays mem_pressure
fi
exit $RET
