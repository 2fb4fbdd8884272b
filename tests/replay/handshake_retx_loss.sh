#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a handshake whose request socket timed out and sent
# its SYN-ACK again, and whose last ACK was lost. The switch drops B's
# first SYN-ACK and A's second SYN, so that B's request socket times out
# after 1 s and sends its SYN-ACK again, which A answers; and it drops
# A's first pure ACK, so that a later segment creates B's connection.
# B's log counts the SYN and the ACK lost before that segment, and has
# where the timeout came among A's segments; the replay drops the
# SYN-ACK and the SYN as the switch did and runs the timeout there, so
# that B's connection starts with it counted, as the original did.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_first_synack "$B_IP" && switch_drop_first_ack "$A_IP" &&
	switch_drop_nth_syn "$A_IP" 2 || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000' '--rpc 5:200:2000'
}

# B's log: the ACK lost before the segment that created B's connection
# is a drop (net_check counts it against tcpdump's captures), and the
# request socket's timeout is there.
retx_check() {
	local id n

	net_check "$@"
	id=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-b.txt"
	n=$(grep -c ' value      synack_clock_ns ' "$TB_TMP/show-b.txt")
	[ "$n" -ge 2 ] && grep -q ' net        synack-timer after ' "$TB_TMP/show-b.txt"
	log_test $? "$1: B sent its SYN-ACK $n times, once on its timeout (log $id: $(grep -m1 'synack-timer' "$TB_TMP/show-b.txt"))"
}

CAPTURE_IN=b
scenario_run handshake_retx_loss retx_check handshake_retx_loss b 2 0 0
exit $RET
