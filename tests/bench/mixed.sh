#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the mixed run (tests/bench/apps.sh runs it inside the
# testbed VM): several applications at once under 1 % loss each way at
# the switch, recorded by one deter record run: nginx serving curl's 320
# short connections and wrk's four keep-alive ones, memcached under
# memcslap's four connections, and a sockperf ping-pong. Every
# connection recorded is replayed REPLAYS times (default 1) against
# tcpdump's ground truth; at least 300 must have been recorded.

REPLAYS=${REPLAYS:-1}
source "$(dirname "$0")/../apps/lib.sh"

app_testbed loss 1 || exit $ksft_fail

workload() {
	local -a pids
	local p rc=0

	app_bg "$B" memcached -u root -t 4 -l "$B_IP" -p 11211 -U 0 || return 1
	app_bg "$B" sockperf sr --tcp -i "$B_IP" -p 11111 || return 1
	app_nginx || return 1
	wait_listen "$B" 11211 && wait_listen "$B" 11111 || return 1
	app_curl 320 & pids+=($!)
	ip netns exec "$A" wrk -t 2 -c 4 -d 2s "http://$B_IP/4k" > "$TB_TMP/wrk.out" 2>&1 &
	pids+=($!)
	ip netns exec "$A" memcslap --servers="$B_IP:11211" --concurrency=4 \
		--execute-number=100 > "$TB_TMP/memcslap.out" 2>&1 & pids+=($!)
	ip netns exec "$A" sockperf pp --tcp -i "$B_IP" -p 11111 -t 2 -m 64 \
		> "$TB_TMP/sockperf.out" 2>&1 & pids+=($!)
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	grep -q " requests in " "$TB_TMP/wrk.out" && ! grep -q "Non-2xx\|Socket errors" "$TB_TMP/wrk.out" &&
		grep -q "Time to set  *400 keys by  *4 threads" "$TB_TMP/memcslap.out" &&
		grep -q "Summary" "$TB_TMP/sockperf.out" || rc=1
	return $rc
}

app_record mixed 80,11211,11111
# The recording is kept before the replays, which take long.
[ -z "${APP_KEEP:-}" ] || cp -a "$TB_TMP" "$APP_KEEP/mixed.recorded"
[ "${APP_N:-0}" -ge 300 ]
log_test $? "mixed: at least 300 connections recorded (${APP_N:-0})"
# Every connection recorded is replayed, whatever failed above: the
# table counts each one that does not replay identically.
[ "${APP_N:-0}" -gt 0 ] && app_replay_all mixed
[ -z "${APP_KEEP:-}" ] || cp -a "$TB_TMP" "$APP_KEEP/mixed"
exit $RET
