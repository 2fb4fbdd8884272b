#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, CPU part, guest side: run by tests/bench/cpu_insns.sh in a VM
# whose QEMU counts the guest's instructions (tests/bench/insns.c). Runs
# each workload ROUNDS times with deter.ko not loaded and with recording
# armed (deter record running; its drain and log writing counted, its
# start and exit not), alternating, each run between two insnmark calls,
# and says which run each pair of marks belongs to ("bench-cpu: WORKLOAD
# off|on").

source "$(dirname "$0")/lib.sh"
MARK=$top/build/tests/bench/insnmark

# marked off|on CMD...: CMD between two marks, named for cpu_insns.sh.
marked() {
	echo "bench-cpu: $w $1"
	"$MARK"
	"${@:2}"
	"$MARK"
}

for w in bulk rpc; do
	alternate $w marked || exit 1
done
