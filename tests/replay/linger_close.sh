#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: close() with SO_LINGER whose wait times out. A writes
# 600 kB to a slow reader (B reads 16 KB every 100 ms into a 64 KB buffer)
# and closes at once with a 1 s linger time: close() waits for the peer
# to acknowledge everything (sk_stream_wait_close()), gives up after 1 s
# and orphans the socket, which sends the rest on its own. Whether and
# when that wait timed out depends on the host's timing: A's log must
# have a timed-out wait exactly when tcpwl's close() took the linger
# time, and the replay (its own linger timer overruled by the log) must
# match tcpdump.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--read-size 16384 --read-delay-us 100000 --rcvbuf 65536' \
		'--bytes 600000 --linger 1'
}

linger_check() {
	local ms waits

	CHECK_RC=0
	ms=$(sed -n 's/^close_ms //p' "$TB_TMP/client.out")
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	waits=$(grep -c "value      host_after [0-9]*: wait timed out$" "$TB_TMP/show-a.txt")
	[ "${ms:-0}" -ge 990 ] && [ "$waits" = 1 ]
	check_err $? "close() took ${ms:-?} ms (linger 1 s); A's log has $waits timed-out waits"
	log_test $CHECK_RC "linger_close: close() timed out after ${ms:-?} ms, and A's log has that wait's timeout"
}

scenario_run linger_close linger_check
exit $RET
