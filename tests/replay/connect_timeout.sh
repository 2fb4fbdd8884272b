#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: waits for the connection that time out. The switch
# drops A's first SYN, which A sends again after its initial RTO (1 s).
# A has a 300 ms send timeout (SO_SNDTIMEO): its blocking connect() gives
# up with EINPROGRESS while the handshake goes on (inet_wait_for_connect()),
# and its first send() waits for the connection (sk_stream_wait_connect())
# and gives up with EAGAIN until the SYN-ACK comes; then 5 RPCs. A's log
# must have one timed-out wait per timeout tcpwl counted, and the replay,
# which sets no timeouts, must end the same waits at the same turns.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_first_syn "$A_IP"

workload() {
	tcpwl_pair '--rpc 200:2000' '--rpc 5:200:2000 --sndtimeo-ms 300'
}

# A's log: a timed-out wait per timeout tcpwl counted (the connect()'s
# and each send()'s), and a send() = EAGAIN per send() timeout.
timeouts_check() {
	local want waits eagain

	CHECK_RC=0
	want=$(sed -n 's/^timeouts //p' "$TB_TMP/client.out")
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	waits=$(grep -c "value      host_after [0-9]*: wait timed out$" "$TB_TMP/show-a.txt")
	eagain=$(grep -c "return     sendmsg = -11$" "$TB_TMP/show-a.txt")
	[ "${want:-0}" -ge 2 ] && [ "$waits" = "$want" ] && [ "$eagain" = $((want - 1)) ]
	check_err $? "tcpwl counted ${want:-?} timeouts (connect() and send()); A's log has $waits timed-out waits and $eagain send() = EAGAIN"
	log_test $CHECK_RC "connect_timeout: A's log has each of the ${want:-?} timeouts tcpwl saw"
}

scenario_run connect_timeout timeouts_check
exit $RET
