#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a host-wide setting. net.core.rmem_max is global (no
# namespace has its own) and sets the window scale TCP offers in its SYN
# and SYN-ACK (tcp_select_initial_window(): the largest of the receive
# buffer, tcp_rmem[2] and rmem_max). The original runs with rmem_max at
# 32 MB, so both ends offer scale 10 instead of 7; the replay host keeps
# the default. The logs must have rmem_max and the scales tcpdump saw;
# deter replay sets the logged rmem_max for the run (and puts the
# host's back) and must match tcpdump. With --keep-host-sysctls it must
# report the handshake's other scales and exit non-zero: never a replay
# that "verified" with every window scaled differently.
source "$(dirname "$0")/lib.sh"

host_keep /proc/sys/net/core/rmem_max || exit $ksft_fail
RMEM_ORIG=$(sysctl -n net.core.rmem_max)
RMEM_REC=33554432

# rmem_restored I: after replay I, the host's rmem_max is back.
rmem_restored() {
	[ "$(sysctl -n net.core.rmem_max)" = "$RMEM_ORIG" ]
	log_test $? "rmem_max: replay $1 put the host's rmem_max back ($RMEM_ORIG)"
}

scenario_testbed off || exit $ksft_fail

workload() {
	sysctl -qw net.core.rmem_max=$RMEM_REC || return 1
	tcpwl_pair '' '--bytes 300000'
	sysctl -qw net.core.rmem_max="$RMEM_ORIG"
}

if scenario_record rmem_max; then
	CHECK_RC=0
	# wscale of A's SYN (first line) and B's SYN-ACK, as tcpdump saw them.
	ws_a=$(sed -n '1s/.*wscale \([0-9]*\).*/\1/p' "$TB_TMP/a.truth")
	ws_b=$(sed -n '1s/.*wscale \([0-9]*\).*/\1/p' "$TB_TMP/b.truth")
	[ "$ws_a" -gt 7 ] 2>/dev/null
	check_err $? "A offered wscale '$ws_a', no more than under the default rmem_max"
	B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	for id in "$ID" "$B_ID"; do
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$id.txt"
		grep -q "^ *[0-9]*  config     sysctl net.core.rmem_max = $RMEM_REC$" "$TB_TMP/show-$id.txt"
		check_err $? "log $id has no net.core.rmem_max = $RMEM_REC"
	done
	# deter show: "wscale SENT/RECEIVED" (snd_wscale is the peer's).
	grep -q "wscale $ws_b/$ws_a," "$TB_TMP/show-$ID.txt"
	check_err $? "A's log has $(grep -o 'wscale [0-9/]*' "$TB_TMP/show-$ID.txt"), tcpdump saw $ws_b/$ws_a (B's/A's)"
	log_test $CHECK_RC "rmem_max: both logs have rmem_max, A's the window scales tcpdump saw ($ws_b/$ws_a)"

	CHECK_RC=0
	[ "$(sysctl -n net.core.rmem_max)" = "$RMEM_ORIG" ]
	check_err $? "rmem_max not restored"
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" --keep-host-sysctls > "$TB_TMP/replay.out" 2>&1
	[ $? -ne 0 ]
	check_err $? "deter replay --keep-host-sysctls exited 0: $(tail -2 "$TB_TMP/replay.out")"
	grep -q "diverged.*handshake: window scales (the peer.s/this end.s) $ws_b/$ws_a logged, [0-9]*/[0-9]* in the replay" \
		"$TB_TMP/replay.out"
	check_err $? "deter replay did not name the handshake: $(tail -3 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "rmem_max: with the host's rmem_max kept, deter replay reports the handshake's other window scales"

	scenario_replays rmem_max rmem_restored
fi
exit $RET
