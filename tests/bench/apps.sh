#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, applications part: run inside the testbed VM. Runs each
# real-application scenario (tests/apps/*.sh, or the scripts named as
# arguments): records its connections once and replays every one of
# them DETER_BENCH_REPLAYS times (default 10), then prints, per scenario
# (application and fault), from the BENCH lines the scenarios emit:
#
#   recorded    connections recorded (both ends logged, complete)
#   identical   connections whose every replay verified and matched
#               tcpdump's ground truth at both hosts
#   refused     connections deter replay would not replay (its reason)
#   diverged    connections a replay of which diverged, got stuck or
#               could not make a host's arrivals
#   wrong       connections a replay of which deter verified but whose
#               egress differs from the ground truth (must be 0)
#   unrun       connections recorded but not replayed (the scenario
#               failed before, or a log of theirs is missing)
#   wall s      replay wall time per connection (median over replays)
#
# and then each connection that did not replay identically, with the
# first reason. Then the mixed run (tests/bench/mixed.sh: several
# applications at once under 1 % loss, over 300 connections), each
# connection replayed DETER_BENCH_MIXED_REPLAYS times (default 1): the
# same table, and the fraction of its connections replayed identically.

top=$(cd "$(dirname "$0")/../.." && pwd)
N=${DETER_BENCH_REPLAYS:-10}
out=$(mktemp -d /tmp/deter-bench-apps.XXXXXX)

insmod "$top/deter.ko" 2>/dev/null
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=("$top"/tests/apps/*.sh)
# run NAME REPLAYS SCRIPT: run a scenario into $out/NAME.log.
run() {
	REPLAYS=$2 timeout 5400 bash "$3" > "$out/$1.log" 2>&1
	echo "$1: exit $?"
	# A scenario that died before it recorded counts, as nothing recorded.
	grep -q '^BENCH app=' "$out/$1.log" ||
		echo "BENCH app=$1 recorded=0 ok=0" >> "$out/$1.log"
	# As it goes: the lines survive a guest that does not.
	grep '^BENCH ' "$out/$1.log"
}

for s in "${scripts[@]}"; do
	[ "$(basename "$s")" = lib.sh ] || run "$(basename "$s" .sh)" "$N" "$s"
done
[ "${DETER_BENCH_MIXED:-1}" = 0 ] ||
	run mixed "${DETER_BENCH_MIXED_REPLAYS:-1}" "$top/tests/bench/mixed.sh" > /dev/null

# bench_table FILES...: the table above from the BENCH lines in FILES.
bench_table() {
	cat "$@" | grep '^BENCH ' | awk -v n="$N" '
	function kv(   i, a) {
		delete v
		for (i = 2; i <= NF; i++) { split($i, a, "="); v[a[1]] = substr($i, length(a[1]) + 2) }
	}
	{ kv() }
	v["app"] != "" { rec[v["app"]] = v["recorded"]; order[++na] = v["app"]; next }
	v["scenario"] != "" {
		s = v["scenario"]; c = s " " v["conn"]
		if (!(c in seen)) { seen[c] = 1; conns[s] = conns[s] " " v["conn"] }
		nrep[c]++
		w[s, ++nw[s]] = v["wall_ms"] / 1000
		if (v["verified"] == 1) { ok[c]++; next }
		r = v["result"]; gsub("_", " ", r)
		if (r ~ /diverged at |stuck|stopped at /) k = "diverged"
		else if (v["deter_rc"] == 0) k = "wrong"
		else k = "refused"
		if (!(c in why)) { kind[c] = k; why[c] = r }
	}
	END {
		printf "application replay over %d replays per connection (DETER_BENCH_REPLAYS)\n", n
		printf "%-22s %8s %9s %7s %8s %5s %6s %6s\n", "scenario", "recorded", "identical",
			"refused", "diverged", "wrong", "unrun", "wall s"
		for (i = 1; i <= na; i++) {
			s = order[i]; id = rf = dv = wr = 0
			m = split(conns[s], cs, " ")
			for (j = 1; j <= m; j++) {
				c = s " " cs[j]
				if (!(c in kind) && ok[c] == n) id++
				else if (kind[c] == "refused") rf++
				else if (kind[c] == "wrong") wr++
				else dv++
			}
			# The median wall time over the scenario replays.
			k = nw[s]
			for (a = 1; a <= k; a++) t[a] = w[s, a]
			for (a = 1; a <= k; a++) for (b = a + 1; b <= k; b++)
				if (t[b] < t[a]) { x = t[a]; t[a] = t[b]; t[b] = x }
			un = rec[s] - m
			printf "%-22s %8d %9d %7d %8d %5d %6d %6s\n", s, rec[s], id, rf, dv, wr, un,
				k ? sprintf("%.1f", t[int((k + 1) / 2)]) : "-"
			tr += rec[s]; ti += id; trf += rf; tdv += dv; twr += wr; tun += un
		}
		printf "%-22s %8d %9d %7d %8d %5d %6d\n", "all", tr, ti, trf, tdv, twr, tun
		printf "\nconnections not replayed identically (scenario, client port: first reason)\n"
		for (i = 1; i <= na; i++) {
			s = order[i]; m = split(conns[s], cs, " ")
			for (j = 1; j <= m; j++) {
				c = s " " cs[j]
				if (c in kind)
					printf "%s %s: %s, %d/%d identical: %s\n", s, cs[j], kind[c],
						ok[c], nrep[c], substr(why[c], 1, 110)
				else if (ok[c] != n)
					printf "%s %s: %d/%d replays ran\n", s, cs[j], nrep[c], n
			}
		}
	}'
}

printf '\n'
bench_table $(ls "$out"/*.log | grep -v '/mixed\.log$')
if [ -f "$out/mixed.log" ]; then
	printf '\nmixed run (tests/bench/mixed.sh), %d replays per connection (DETER_BENCH_MIXED_REPLAYS)\n' \
		"${DETER_BENCH_MIXED_REPLAYS:-1}"
	N=${DETER_BENCH_MIXED_REPLAYS:-1} bench_table "$out/mixed.log" | sed 1d
	N=${DETER_BENCH_MIXED_REPLAYS:-1} bench_table "$out/mixed.log" |
		awk '$1 == "all" { printf "mixed: %d of %d connections replayed identically (%.1f %%)\n", $3, $2,
			$2 ? 100 * $3 / $2 : 0 }'
fi
echo "(logs: $out)"
