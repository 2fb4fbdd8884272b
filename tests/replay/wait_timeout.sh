#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a blocking call whose wait times out (DETER_HOST_TIMEOUT).
# A sends 6 requests with a 100 ms receive timeout (SO_RCVTIMEO); B holds
# its third response back 250 ms, so A's recv() gives up with EAGAIN
# twice and is made again. Whether a wait timed out or was woken first
# depends on the host's scheduling: A's log must have one timed-out wait
# and one recv() returning EAGAIN per timeout tcpwl counted, and the
# replay, which sets no timeouts, must time the same waits out at the
# same turns (identical egress at both hosts).

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	local srv

	ip netns exec "$B" "$TCPWL" server -b "$B_IP" --rpc 200:2000 \
		--resp-delay-ms 3:250 > /dev/null &
	srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --rpc 6:200:2000 \
		--rcvtimeo-ms 100 > "$TB_TMP/client.out"
	wait $srv
}

if scenario_record wait_timeout; then
	CHECK_RC=0
	want=$(sed -n 's/^timeouts //p' "$TB_TMP/client.out")
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	waits=$(grep -c "value      host_after [0-9]*: wait timed out$" "$TB_TMP/show-a.txt")
	eagain=$(grep -c "return     recvmsg = -11$" "$TB_TMP/show-a.txt")
	[ "${want:-0}" -gt 0 ] && [ "$waits" = "$want" ] && [ "$eagain" = "$want" ]
	check_err $? "tcpwl counted ${want:-?} timeouts; A's log has $waits timed-out waits and $eagain recv() = EAGAIN"
	log_test $CHECK_RC "wait_timeout: A's log has each of the ${want:-?} timeouts tcpwl saw"
	scenario_replays wait_timeout
fi
exit $RET
