#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a host-wide setting deter does not log. net.core's
# rmem_max is global (no namespace has its own) and sets the window
# scale TCP offers in its SYN and SYN-ACK (tcp_select_initial_window():
# the larger of the receive buffer, tcp_rmem[2] and rmem_max). The
# original runs with rmem_max at 32 MB, the replay host with the
# default: the replay's handshake negotiates other scales. deter replay
# must say so, naming the handshake, and exit non-zero: never a replay
# that "verified" with every window scaled differently. The logs must
# have the scales tcpdump saw in the original's SYN and SYN-ACK.
source "$(dirname "$0")/lib.sh"

RMEM_ORIG=$(sysctl -n net.core.rmem_max)
rmem_restore() {
	sysctl -qw net.core.rmem_max="$RMEM_ORIG"
	cleanup
}
trap rmem_restore EXIT

scenario_testbed off || exit $ksft_fail

workload() {
	sysctl -qw net.core.rmem_max=33554432 || return 1
	tcpwl_pair '' '--bytes 100000'
	sysctl -qw net.core.rmem_max="$RMEM_ORIG"
}

if scenario_record rmem_max; then
	CHECK_RC=0
	# wscale of A's SYN (first line) and B's SYN-ACK, as tcpdump saw them.
	ws_a=$(sed -n '1s/.*wscale \([0-9]*\).*/\1/p' "$TB_TMP/a.truth")
	ws_b=$(sed -n '1s/.*wscale \([0-9]*\).*/\1/p' "$TB_TMP/b.truth")
	# deter show: "wscale SENT/RECEIVED" (snd_wscale is the peer's).
	"$DETER" show -d "$LOGS" "$ID" | head -3 > "$TB_TMP/show-a.txt"
	grep -q "wscale $ws_b/$ws_a," "$TB_TMP/show-a.txt"
	check_err $? "A's log has $(grep -o 'wscale [0-9/]*' "$TB_TMP/show-a.txt"), tcpdump saw $ws_b/$ws_a (B's/A's)"
	[ "$ws_a" -gt 7 ]
	check_err $? "A offered wscale $ws_a, not more than under the default rmem_max"
	log_test $CHECK_RC "rmem_max: A's log has the window scales tcpdump saw ($ws_b/$ws_a)"

	CHECK_RC=0
	[ "$(sysctl -n net.core.rmem_max)" = "$RMEM_ORIG" ]
	check_err $? "rmem_max not restored"
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" > "$TB_TMP/replay.out" 2>&1
	[ $? -ne 0 ]
	check_err $? "deter replay exited 0: $(tail -2 "$TB_TMP/replay.out")"
	grep -q "diverged.*handshake: window scales (the peer.s/this end.s) $ws_b/$ws_a logged, [0-9]*/[0-9]* in the replay" \
		"$TB_TMP/replay.out"
	check_err $? "deter replay did not name the handshake: $(tail -3 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "rmem_max: deter replay reports the handshake's other window scales"
fi
exit $RET
