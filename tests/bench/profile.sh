#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where recording's extra guest instructions go, function by function:
# one RPC (or bulk) run with deter.ko not loaded and one with deter record
# running, as tests/bench/cpu.sh measures them, counted per translation
# block by tests/bench/profile.c and mapped to symbols (kernel, deter.ko;
# all userspace as one line) with the guest's /proc/kallsyms.
#
#   tests/bench/profile.sh [rpc|bulk] [N]   top N lines (default 30)
#
# Needs make bench's build (make all kmod build/tests/bench/profile.so
# build/tests/bench/insnmark).

top=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${1:-}" = --guest ]; then
	w=$2
	out=$3
	export DETER_BENCH_ROUNDS=1
	source "$top/tests/bench/lib.sh"
	marked() {
		"$top/build/tests/bench/insnmark"
		"${@:2}"
		"$top/build/tests/bench/insnmark"
	}
	echo 0 > /proc/sys/kernel/kptr_restrict
	alternate "$w" marked || exit 1
	# deter.ko's symbols: loaded again, at the address it had.
	insmod "$top/deter.ko" && cat /proc/kallsyms > "$out/kallsyms"
	rmmod deter
	exit 0
fi

w=${1:-rpc}
n=${2:-30}
case "$w" in rpc|bulk) ;; *) echo "usage: $0 [rpc|bulk] [N]" >&2; exit 2 ;; esac
for f in build/tests/bench/profile.so build/tests/bench/insnmark deter.ko bin/deter; do
	[ -e "$top/$f" ] || { echo "profile: $f missing (make all kmod $f)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/deter-profile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if ! "$top/testbed/run" --tcg-single --timeout 3600 --rw "$tmp" \
	--plugin "$top/build/tests/bench/profile.so,out=$tmp/blocks" -- \
	"$top/tests/bench/profile.sh" --guest "$w" "$tmp" > "$tmp/out" 2>&1; then
	tail -5 "$tmp/out" >&2
	echo "profile: the VM run failed" >&2
	exit 1
fi
python3 - "$tmp/kallsyms" "$tmp/blocks" "$n" <<'PY'
import bisect, collections, sys

syms = []
for line in open(sys.argv[1]):
    f = line.split()
    a = int(f[0], 16)
    if a:
        syms.append((a, f[2] + (" " + f[3] if len(f) > 3 else "")))
syms.sort()
addrs = [a for a, _ in syms]
by = collections.defaultdict(lambda: [0, 0])
tot = [0, 0]
for line in open(sys.argv[2]):
    if line.startswith("#"):
        print(line.strip())
        continue
    f = line.split()
    va, off, on = int(f[0], 16), int(f[1]), int(f[2])
    if va < 0xffff800000000000:
        name = "(userspace, all processes)"
    else:
        i = bisect.bisect_right(addrs, va) - 1
        name = syms[i][1] if i >= 0 else "?"
    by[name][0] += off
    by[name][1] += on
    tot[0] += off
    tot[1] += on
d = tot[1] - tot[0]
print("unloaded %d, recording %d guest instructions: %+d (%+.1f %%)"
      % (tot[0], tot[1], d, 100.0 * d / tot[0]))
print("%12s %12s %12s  %s" % ("unloaded", "recording", "extra", "function"))
for k, (a, b) in sorted(by.items(), key=lambda kv: kv[1][0] - kv[1][1])[:int(sys.argv[3])]:
    print("%12d %12d %+12d  %s" % (a, b, b - a, k))
mod = sum(b - a for k, (a, b) in by.items() if k.endswith("[deter]"))
print("deter.ko in all: %+d" % mod)
PY
