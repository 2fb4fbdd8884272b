#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a handshake that sent its SYN and SYN-ACK again and
# lost its last ACK. The switch drops B's first SYN-ACK, so A sends its
# SYN again and B its SYN-ACK again (each after its 1 s timeout), and
# A's first pure ACK, so that a later segment creates B's connection.
# The SYN sent again took an IP ID between the first SYN's and that
# segment's: B's log tells it from the lost ACK and counts the ACK. The
# request socket's timer is not replayed: B's log says so at record time
# and deter replay refuses it in one line.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_first_synack "$B_IP" && switch_drop_first_ack "$A_IP" || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000' '--rpc 5:200:2000'
}

# B's log: the SYN-ACK went out more than once, and the ACK lost before
# the segment that created B's connection is a drop (net_check counts it
# against tcpdump's captures). Then the refusal, for both ends' pair.
retx_check() {
	local id n

	net_check "$@"
	id=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-b.txt"
	n=$(grep -c ' value      synack_clock_ns ' "$TB_TMP/show-b.txt")
	[ "$n" -ge 2 ]
	log_test $? "$1: B sent its SYN-ACK $n times (log $id)"
	grep -q '"id":"'"$id"'".*"status":"incomplete,missing-values"' "$TB_TMP/ls.json"
	log_test $? "$1: B's log is incomplete, lacking the request socket's timer"
	replay_refused "$1" "incomplete log (missing-values: a SYN-ACK its request socket's timer sent again" \
		"" pair
}

CAPTURE_IN=b REC_INCOMPLETE_OK=1
scenario_record handshake_retx_loss && retx_check handshake_retx_loss b 1 0 0
exit $RET
