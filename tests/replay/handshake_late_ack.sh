#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: the handshake's last ACK arrives late. The switch
# holds A's first pure ACK (the one completing the handshake) back by
# 20 ms, so A's first data segments reach B's listener before it: the
# first creates B's connection (it carries the ACK), and the handshake's
# ACK then arrives at the established socket as an old duplicate. A
# client that sends as soon as connect() returns sends its ACK from
# softirq and its data from the process, and on two CPUs the two can
# cross on their way to B even without a switch that holds one back.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_delay_first_ack "$A_IP" s1 20ms || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 200000'
}

# B's log: a data segment created its connection (its shape is logged
# right before the child's first arrival, CHILD_IPID), and arrived late.
child_check() {
	local id

	CHECK_RC=0
	net_check "$@"
	id=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-b.txt"
	grep -B1 -m1 ' value      child_ipid ' "$TB_TMP/show-b.txt" | grep -q ' net        shape '
	log_test $? "$1: a data segment created B's connection (log $id: $(grep -m1 'child_ipid' "$TB_TMP/show-b.txt"))"
}

CAPTURE_IN=b
scenario_run handshake_late_ack child_check handshake_late_ack b 0 1 0
exit $RET
