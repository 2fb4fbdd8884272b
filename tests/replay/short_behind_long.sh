#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario (DETER §2.1): a short RPC flow behind long flows. Two
# bulk transfers from A to B (ports 5202, 5203) fill a shallow switch
# queue towards B while the connection of interest (port 5201) sends
# 3-segment requests that B answers in one segment. Its losses come from
# the long flows' tail drops; its ACKs meet B's delayed-ACK timer.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_queue s1 tbf rate 50mbit burst 8k limit 16k

# long_flow PORT: an 8 MB transfer from A to B:PORT, in the background.
long_flow() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" -p "$1" > /dev/null &
	LONG+=($!)
	wait_listen "$B" "$1" || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" -p "$1" \
		--bytes 8000000 > /dev/null &
	LONG+=($!)
}

workload() {
	LONG=()
	long_flow 5202 && long_flow 5203 || return 1
	sleep 0.2
	tcpwl_pair '--rpc 4344:100' '--rpc 50:4344:100'
	wait "${LONG[@]}"
}

scenario_run short_behind_long premise_qdisc_drops short_behind_long s1
exit $RET
