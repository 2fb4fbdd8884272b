#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a connection that starts from the destination's
# metrics cache. A's route to B has an unlocked reordering of 10, which
# TCP reads only through the cache. An earlier connection from A to B,
# before recording starts, fills both hosts' caches as it closes (A's
# with reordering 10 and its RTT, B's with its RTT), and
# tcp_init_metrics() gives them to the recorded connection: 2 MB from A
# to B whose 100th data segment the switch drops. With a dupthresh of 10
# A takes longer to mark the segment lost than with the default 3, and
# the replay's fresh hosts have nothing cached. Each log must hold what
# `ip tcp_metrics` showed for the peer just before, and the replays must
# be identical to the original.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
ip -n "$A" route change default via "$SW_A_IP" reordering 10
log_test $? "metrics_cache: A's route configured"

# The earlier connection; its ends leave the caches as they close.
tcpwl_pair '' '--bytes 100000'
sleep 0.5
for h in a b; do
	ns=$A peer=$B_IP
	[ $h = b ] && ns=$B peer=$A_IP
	ip -n "$ns" tcp_metrics show "$peer" > "$TB_TMP/metrics-$h.txt"
done
grep -q 'reordering 10' "$TB_TMP/metrics-a.txt"
log_test $? "metrics_cache: A's cache has reordering 10: $(cat "$TB_TMP/metrics-a.txt")"

switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--bytes 2000000'
}

# cache_logged ID H: ID's log holds the RTT and reordering host H's
# cache showed for its peer, and nothing else of the cache.
cache_logged() {
	local want got

	want=$(grep -o -E '(rtt [0-9]+us|reordering [0-9]+)' "$TB_TMP/metrics-$2.txt" |
	       sed 's/us$//' | grep -v '^reordering 3$' | sort)
	got=$("$DETER" show -d "$LOGS" "$1" |
	      sed -n -e 's/.*: cached rtt [0-9]* (\([0-9]*\) us)$/rtt \1/p' \
		     -e 's/.*: cached \([a-z ]*\) \([0-9]*\)$/\1 \2/p' | sort)
	[ -n "$want" ] && [ "$want" = "$got" ]
	check_err $? "log $1 has cached '$(echo $got)', ip tcp_metrics showed '$(echo $want)'"
}

if scenario_record metrics_cache; then
	CHECK_RC=0
	cache_logged "$ID" a
	cache_logged "$(log_id "$B_IP:5201" "$A_IP:[0-9]*")" b
	log_test $CHECK_RC "metrics_cache: both logs carry what their host's cache gave"
	scenario_replays metrics_cache
fi
exit $RET
