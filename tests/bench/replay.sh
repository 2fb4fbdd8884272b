#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, replay part: run inside the testbed VM. Records each replay
# scenario (tests/replay/*.sh, then tests/replay/pending/*.sh, or the
# scripts named as arguments) once and replays it DETER_BENCH_REPLAYS
# times (default 10), then prints, from
# the BENCH lines the scenarios emit (measured in this run):
#
#   fidelity    replays identical to the original (tcpdump ground truth)
#               and self-verified, out of N; else the first divergence
#   speed       replay wall time / original connection duration (median)
#   send time   inferred send time (replay pcap) vs tcpdump's egress time
#               in the original: max and p99 over the identical replays, us
#   parallel    tests/replay/parallel.sh with 4 connections: replays per
#               second with 1, 2 and 4 replays at once, and the ratio to 1

top=$(cd "$(dirname "$0")/../.." && pwd)
N=${DETER_BENCH_REPLAYS:-10}
out=$(mktemp -d /tmp/deter-bench-replay.XXXXXX)

insmod "$top/deter.ko" 2>/dev/null
# Scenario scripts to run: the arguments, or all but traced.sh (make check
# runs that one in a VM with single-threaded TCG; see tests/check.sh).
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] ||
	scripts=("$top"/tests/replay/*.sh "$top"/tests/replay/pending/*.sh)
for s in "${scripts[@]}"; do
	[ -f "$s" ] || continue		# an empty pending/
	case "$(basename "$s")" in
	lib.sh) continue ;;
	traced.sh) [ $# -gt 0 ] || continue ;;
	esac
	NCONN=4 PARALLEL="1 2 4" REPLAYS=$N timeout 3000 bash "$s" \
		> "$out/$(basename "$s" .sh).log" 2>&1
	# As it goes: the lines survive a guest that does not.
	grep '^BENCH ' "$out/$(basename "$s" .sh).log"
done

printf '\nreplay fidelity over %d replays per scenario (DETER_BENCH_REPLAYS)\n' "$N"
printf '%-18s %-9s %-10s %-21s %-21s %s\n' scenario identical "wall/orig" \
	"A send err max/p99" "B send err max/p99" "first divergence"
for f in "$out"/*.log; do
	[ "$(basename "$f")" = parallel.log ] && continue
	grep '^BENCH scenario=' "$f" | awk -v name="$(basename "$f" .log)" '
	{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		n++
		if (v["verified"] == 1) {
			ok++
			split(v["err_a_us"], ea, "/"); split(v["err_b_us"], eb, "/")
			if (ea[1] != "-" && ea[1] + 0 > amax) amax = ea[1] + 0
			if (ea[2] != "-" && ea[2] + 0 > ap99) ap99 = ea[2] + 0
			if (eb[1] != "-" && eb[1] + 0 > bmax) bmax = eb[1] + 0
			if (eb[2] != "-" && eb[2] + 0 > bp99) bp99 = eb[2] + 0
		} else if (first == "") {
			first = v["result"]; gsub("_", " ", first)
		}
		if (v["orig_ms"] > 0) r[++nr] = v["wall_ms"] / v["orig_ms"]
	}
	END {
		if (!n) { printf "%-18s %-9s\n", name, "no run"; exit }
		for (i = 1; i <= nr; i++) for (j = i + 1; j <= nr; j++)
			if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
		med = nr ? r[int((nr + 1) / 2)] : 0
		printf "%-18s %3d/%-5d %-10.1f %-21s %-21s %s\n", name, ok, n, med,
			ok ? sprintf("%.1f/%.1f", amax, ap99) : "-",
			ok ? sprintf("%.1f/%.1f", bmax, bp99) : "-",
			first == "" ? "-" : substr(first, 1, 90)
	}'
done
if [ -f "$out/parallel.log" ]; then
	printf '\nreplays side by side (tests/replay/parallel.sh: 4 RPC connections recorded at once)\n'
	printf '%-9s %-10s %-9s %-13s %s\n' "at once" identical "wall ms" "replays/s" "vs one at a time"
	grep '^BENCH parallel=' "$out/parallel.log" | awk '
	{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["parallel"] == 1) one = v["per_s"]
		printf "%-9d %3d/%-6d %-9d %-13.3f %s\n", v["parallel"], v["identical"],
			v["replays"], v["wall_ms"], v["per_s"],
			(one > 0 ? sprintf("%.2f", v["per_s"] / one) : "-")
	}'
fi
echo "(logs: $out)"
rmmod deter 2>/dev/null
exit 0
