#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a data drop in a bulk transfer. The switch drops A's
# 100th data segment of a 2 MB transfer; A repairs it by fast retransmit
# after SACKed duplicate ACKs.

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms 100mbit
link_shape "$B" b0 1ms
switch_drop_nth "$A_IP" 100

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes 2000000 > /dev/null
	wait $srv
}

scenario_run data_drop
exit $RET
