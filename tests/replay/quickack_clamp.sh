#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: socket options that act on the connection rather than
# set a field (DETER_CALL_SETSOCKOPT). A sends 300 kB to B; B clamps its
# window to 12000 B right after accept() (TCP_WINDOW_CLAMP, which TCP
# also moves by itself) and sets TCP_QUICKACK after each 4000 B read,
# 2 ms apart (it ACKs at once instead of delaying, and leaves pingpong
# mode). 1 ms each way, offloads off. B's log must have every one of the
# calls strace saw, and the replay must issue them where B did: without
# the clamp B advertises a larger window from the first data on, without
# the quickacks its ACKs come at other times.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	local srv

	ip netns exec "$B" strace -f -qq -e trace=setsockopt -o "$TB_TMP/strace.txt" \
		"$TCPWL" server -b "$B_IP" --window-clamp 12000 --quickack \
		--read-size 4000 --read-delay-us 2000 > /dev/null &
	srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes 300000 > /dev/null
	wait $srv
}

if scenario_record quickack_clamp; then
	CHECK_RC=0
	B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	"$DETER" show -d "$LOGS" "$B_ID" > "$TB_TMP/show-b.txt"
	for opt in TCP_WINDOW_CLAMP TCP_QUICKACK; do
		want=$(grep -c "setsockopt([0-9]*, SOL_TCP, $opt, \[[0-9]*\], 4) = 0" "$TB_TMP/strace.txt")
		got=$(grep -c "call       setsockopt $opt = " "$TB_TMP/show-b.txt")
		[ "$want" -gt 0 ] && [ "$got" = "$want" ]
		check_err $? "B's log has $got setsockopt($opt) calls, strace saw $want"
	done
	grep -q "call       setsockopt TCP_WINDOW_CLAMP = 12000 " "$TB_TMP/show-b.txt"
	check_err $? "B's log lacks TCP_WINDOW_CLAMP = 12000"
	log_test $CHECK_RC "quickack_clamp: B's log has the setsockopt() calls strace saw"
	scenario_replays quickack_clamp
fi
exit $RET
