#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, CPU part: the guest instructions a bulk transfer and an RPC
# workload take with recording armed / with deter.ko not loaded. Counted
# by QEMU (tests/bench/insns.c, one TCG thread), not timed: guest CPU time
# under TCG varies by tens of percent between identical runs.
#
#   tests/bench/cpu_insns.sh [--nics MODEL]
#                                 (make bench runs it; prints one line per
#                                  workload, medians of ROUNDS runs each;
#                                  --nics: on the NIC topology, testbed/run's)

top=$(cd "$(dirname "$0")/../.." && pwd)
nics=()
if [ $# -gt 0 ]; then
	if [ "$1" != --nics ] || [ $# -ne 2 ]; then
		echo "usage: tests/bench/cpu_insns.sh [--nics virtio|e1000e]" >&2
		exit 2
	fi
	nics=(--nics "$2")
fi
tmp=$(mktemp -d /tmp/deter-cpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$top/testbed/run" --tcg-single --timeout 3600 ${nics[@]+"${nics[@]}"} \
	--plugin "$top/build/tests/bench/insns.so,out=$tmp/marks" -- \
	"$top/tests/bench/cpu.sh" > "$tmp/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	tail -5 "$tmp/out" >&2
	echo "cpu_insns: the VM run failed ($rc)" >&2
	exit 1
fi
# Run k is between marks 2k-1 and 2k, in the order cpu.sh printed them.
awk '
	FNR == NR { if ($1 == "mark") m[$2] = $3; next }
	/^bench-cpu: / { k++; n = m[2 * k] - m[2 * k - 1]
		if (!(2 * k in m)) { print "cpu_insns: run " k " has no marks" > "/dev/stderr"; bad = 1 }
		runs[$2, $3] = runs[$2, $3] " " n; cnt[$2, $3]++ }
	function median(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)]
	}
	END {
		if (bad) exit 1
		for (w = 1; w <= 2; w++) {
			name = w == 1 ? "bulk" : "rpc"
			off = median(runs[name, "off"]); on = median(runs[name, "on"])
			printf "bench: cpu     %-4s armed %.0f / unloaded %.0f guest instructions = %.4f (overhead %+.2f %%; medians of %d, runs off:%s; on:%s)\n",
				name, on, off, on / off, 100 * (on - off) / off, cnt[name, "off"],
				runs[name, "off"], runs[name, "on"]
		}
	}' "$tmp/marks" "$tmp/out"
