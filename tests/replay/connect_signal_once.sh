#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a blocking connect() that a signal ends, and an
# application that does not call it again. As connect_signal.sh (A's
# first SYN dropped, SIGALRM every 100 ms from before connect()), but
# after its connect() says EINTR, A goes on to its RPCs: the first send()
# waits for the handshake in sk_stream_wait_connect(), where the signals
# end it again (send() = EINTR, made again). The replay's generator must
# not call connect() again here: the application's next lock turn was
# send()'s.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_first_syn "$A_IP"

workload() {
	tcpwl_pair '--rpc 200:2000' \
		   '--rpc 20:200:2000 --signal-us 100000 --signal-connect --connect-once'
}

# A's log: the one connect() = EINTR (one or two signals before the
# first call), and each send() = EINTR tcpwl counted.
once_check() {
	local connects sends got eintr

	CHECK_RC=0
	connects=$(sed -n 's/^eintr .*connect \([0-9]*\).*/\1/p' "$TB_TMP/client.out")
	sends=$(sed -n 's/^eintr send \([0-9]*\).*/\1/p' "$TB_TMP/client.out")
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	got=$(grep -c ": a signal ends the call (connect())$" "$TB_TMP/show-a.txt")
	eintr=$(grep -c "return     sendmsg = -512$" "$TB_TMP/show-a.txt")
	[ "$connects" = 1 ] && [ "$got" -ge 1 ] && [ "$got" -le 2 ] &&
		[ "${sends:-0}" -ge 1 ] && [ "$eintr" = "$sends" ]
	check_err $? "tcpwl counted ${connects:-no} connect() and ${sends:-no} send() = EINTR; A's log has $got signals before its first call and $eintr sendmsg = -512"
	log_test $CHECK_RC "connect_signal_once: A's log has the connect() = EINTR and the ${sends:-?} send() = EINTR tcpwl saw"
}

scenario_run connect_signal_once once_check
exit $RET
