#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Records and replays one replay scenario with deter.ko's debug_clock=1,
# each recording REPLAYS times (default 1), until a replay fails, then
# keeps that recording's kernel log (both the recording's and the
# replays' trace lines), the scenario's output and the failed replay's
# files (DETER_KEEP_FAILED) in OUT. For a divergence that shows in one
# recording of many, or in one replay of many (REPLAYS above 1). Run in
# the testbed VM, with a large printk buffer and OUT writable:
#
#   testbed/run --rw OUT --append log_buf_len=64M --timeout 3000 -- \
#           tests/vm/until_fail.sh tests/replay/signal_bulk.sh OUT [N [REPLAYS]]
#
# Exit status: 1 when a replay failed (OUT holds it), 0 when N (default
# 30) recordings all replayed, 2 for usage errors.
set -u

[ $# -ge 2 ] || { echo "usage: $0 SCENARIO OUT [N [REPLAYS]]" >&2; exit 2; }
script=$1 out=$2 n=${3:-30} replays=${4:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
keep=$(mktemp -d /tmp/deter-keep.XXXXXX)

insmod "$top/deter.ko" debug_clock=1 || exit 2
rc=0
for i in $(seq "$n"); do
	dmesg -C
	rm -rf "${keep:?}"/*
	REPLAYS=$replays DETER_KEEP_FAILED=$keep bash "$script" > "$out/run.out" 2>&1
	if compgen -G "$keep/*" > /dev/null; then
		cp -a "$keep"/* "$out/"
		dmesg > "$out/dmesg.txt"
		echo "$(basename "$script" .sh): recording $i failed: $(grep -m1 'deter replay exited' "$out/run.out")"
		rc=1
		break
	fi
	echo "$(basename "$script" .sh): recording $i replayed"
done
rmmod deter
rm -rf "$keep"
exit $rc
