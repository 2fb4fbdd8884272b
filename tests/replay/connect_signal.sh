#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a blocking connect() that signals end. The switch
# drops A's first SYN, which A sends again after its initial RTO (1 s).
# A gets SIGALRM every 100 ms from before its connect() on, with a
# handler that does not restart calls: the wait for the handshake ends
# with EINTR about ten times (inet_wait_for_connect() and
# __inet_stream_connect() test for a signal, patch 0018), and tcpwl calls
# connect() again each time; then 20 RPCs. A's log must have the signals
# that ended each of those connect()s, before its first call, and the
# replay (whose application gets no signals) must be identical to the
# original.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_first_syn "$A_IP"

workload() {
	tcpwl_pair '--rpc 200:2000' \
		   '--rpc 20:200:2000 --signal-us 100000 --signal-connect'
}

# A's log: each connect() = EINTR tcpwl counted ended at one or both of
# connect()'s signal tests (the wait's, then __inet_stream_connect()'s,
# with the lock held throughout), so between that many signals before
# the first call (deter show: "(connect())") and twice as many, and no
# timed-out wait before that call.
connect_check() {
	local want got waits

	CHECK_RC=0
	want=$(sed -n 's/^eintr .*connect \([0-9]*\).*/\1/p' "$TB_TMP/client.out")
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	got=$(grep -c ": a signal ends the call (connect())$" "$TB_TMP/show-a.txt")
	waits=$(sed '/^ *[0-9]* *call /q' "$TB_TMP/show-a.txt" |
		grep -c ": wait timed out$")
	[ "${want:-0}" -ge 3 ] && [ "$got" -ge "$want" ] &&
		[ "$got" -le $((2 * want)) ] && [ "$waits" = 0 ]
	check_err $? "tcpwl counted ${want:-no} connect() = EINTR; A's log has $got signals and $waits timed-out waits before its first call"
	log_test $CHECK_RC "connect_signal: A's log has the signals that ended the ${want:-?} connect()s tcpwl saw"
}

scenario_run connect_signal connect_check
exit $RET
