#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: ACK drops. The switch drops every third pure ACK B
# sends during a 1 MB transfer from A; A sees the cumulative ACKs jump,
# and its log has the drops tcpdump saw between B's egress and A's
# ingress.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_nft drop_acks "ip saddr $B_IP tcp flags & (syn | fin | rst) == 0 ip length 52 numgen inc mod 3 == 2 counter drop"

workload() {
	tcpwl_pair '' '--bytes 1000000'
}

CAPTURE_IN=a
scenario_run ack_drop net_check ack_drop a 10 0 0
exit $RET
