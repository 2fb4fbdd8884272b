#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: ECN with DCTCP and RED marking. Both ends run DCTCP;
# the switch's egress to B is a 50 Mbit/s RED queue that marks CE above
# a small threshold, during a 1 MB transfer from A.

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms
switch_queue s1 red limit 400000 min 15000 max 45000 avpkt 1500 burst 20 \
	bandwidth 50mbit probability 1 ecn
ip netns exec "$A" sysctl -qw net.ipv4.tcp_ecn=1
ip netns exec "$B" sysctl -qw net.ipv4.tcp_ecn=1

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --cc dctcp --bytes 1000000 > /dev/null
	wait $srv
}

scenario_run ecn_dctcp
exit $RET
