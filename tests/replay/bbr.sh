#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: BBR. A sends 2 MB to B with TCP_CONGESTION bbr
# through a 50 Mbit/s, 1 ms link, offloads off. BBR paces every segment
# with TCP's internal pacing: the pacing hrtimer sends from softirq, or,
# when A's application owns the socket, defers the send to it
# (tcp_release_cb()); both kinds of turn must be in A's log. BBR models
# the path from rate samples, whose app-limited marks depend on whether
# the host still holds the socket's packets.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 50mbit || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 2000000 --cc bbr'
}

# A's log: pacing turns run from softirq and turns the owner ran.
pacing_check() {
	local tsq deferred

	CHECK_RC=0
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	tsq=$(grep -c "^ *[0-9]*  lock       tsq$" "$TB_TMP/show-a.txt")
	deferred=$(grep -c "^ *[0-9]*  lock       tsq (deferred" "$TB_TMP/show-a.txt")
	grep -q "cc bbr" "$TB_TMP/show-a.txt" && [ "$tsq" -gt 0 ] && [ "$deferred" -gt 0 ]
	check_err $? "A's log: cc bbr, $tsq pacing turns from softirq, $deferred the owner ran"
	log_test $CHECK_RC "bbr: A's log has pacing turns from softirq ($tsq) and deferred to the owner ($deferred)"
}

scenario_run bbr pacing_check
exit $RET
