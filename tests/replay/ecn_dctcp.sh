#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: ECN with DCTCP and RED marking. Both ends run DCTCP;
# the switch's egress to B is a 50 Mbit/s RED queue that marks CE above
# a small threshold, during a 1 MB transfer from A.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_queue s1 red limit 400000 min 15000 max 45000 avpkt 1500 burst 20 \
	bandwidth 50mbit probability 1 ecn
ip netns exec "$A" sysctl -qw net.ipv4.tcp_ecn=1
ip netns exec "$B" sysctl -qw net.ipv4.tcp_ecn=1

workload() {
	tcpwl_pair '' '--cc dctcp --bytes 1000000'
}

scenario_run ecn_dctcp
exit $RET
