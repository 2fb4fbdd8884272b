#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's runner. Runs every test group, shows its output, counts
# results and ends with one line: 'N passed, N failed'. A skipped test,
# a group that exits non-zero without reporting a failure, and a VM
# scenario that never reported (tests/vm/harness.sh) each count as failed.
#
#   tests/check.sh [--debug] [unit] [fuzz] [bats] [lint] [vm] [vm2] [vm-traced]
#                  [vm-debug] [vm-host] [vm-apps] [vm-apps-all] [vm-nic]
#                  [vm-nic-ci]
#                  (default: all groups but vm-debug, vm-apps-all and vm-nic)
#
# vm and vm2 each boot the testbed VM once: vm runs KUnit, the netns
# scenarios and the first half of the replay scenarios, vm2 the rest, so
# neither boot comes near its timeout on a slow machine. Each group's
# wall time is printed after it.
#
# Groups report as TAP ('ok N - name', 'not ok ...', '# SKIP') or, in
# the VM, selftests lines ('TEST: name [ OK ]', '[FAIL]', '[SKIP]').
# A VM that fails to boot or finish counts as a failure, never a skip.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$(mktemp -d /tmp/deter-check.XXXXXX)
trap 'rm -rf "$out"' EXIT

pass=0
fail=0

count() {	# file
	local p f s
	p=$(grep -cE '^ok [0-9]+|^TEST: .*\[ OK \]$' "$1")
	s=$(grep -cE '^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]|^TEST: .*\[SKIP\]$' "$1")
	f=$(grep -cE '^not ok [0-9]+|^TEST: .*\[FAIL\]$' "$1")
	# make check builds and boots everything its tests need: a test that
	# skips did not run, and counts as failed.
	pass=$((pass + p - s))
	fail=$((fail + f + s))
	# A failure's own lines (the indented ones above a VM [FAIL], the
	# TAP line itself) again at the end, where CI's tail shows them.
	# Other output (BENCH lines, helpers' chatter) may sit between the
	# reasons and their [FAIL]: only a test's verdict ends its context.
	awk '/^    / { ctx = ctx $0 "\n"; next }
	     /^not ok [0-9]+|^TEST: .*\[(FAIL|SKIP)\]$|^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]/ { printf "%s%s\n", ctx, $0 }
	     /^(not )?ok [0-9]+|^TEST: / { ctx = "" }' "$1" | cut -c1-400 >> "$out/failures"
}

# ran_all NAME SCENARIO...: every SCENARIO reported '# scenario: X ran'
# (tests/vm/harness.sh) in group NAME's log; each one missing, because
# the VM died or timed out before it, is a failure named here.
ran_all() {
	local name=$1 s n
	shift
	for s in "$@"; do
		n=$(basename "$s" .sh)
		[ "$n" != lib ] || continue
		grep -qx "# scenario: $n ran" "$out/$name.log" && continue
		echo "not ok - $name: scenario $n did not run" | tee -a "$out/failures"
		fail=$((fail + 1))
	done
}

# group NAME CMD...: run CMD, tee its output, count it; a non-zero exit
# with no failure reported counts as one failure.
group() {
	local name=$1 log=$out/$1.log rc before=$fail t0

	shift
	echo "== $name"
	t0=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	echo "== $name: $(($(date +%s) - t0)) s"
	count "$log"
	if [ "$rc" -ne 0 ] && [ "$fail" -eq "$before" ]; then
		echo "not ok - $name: exited with status $rc" | tee -a "$out/failures"
		fail=$((fail + 1))
	fi
}

unit() {
	local t rc=0

	for t in build/tests/unit/*_test; do
		echo "# $t"
		"$t" || rc=1
	done
	return $rc
}

# The log decoder under libFuzzer for a fixed time and seed, starting
# from the golden logs: event count (header offset 112) + raw body.
fuzz() {
	local corpus=$out/corpus f

	mkdir -p "$corpus"
	for f in tests/data/*.dlog; do
		{ dd if="$f" bs=1 skip=112 count=4 status=none
		  tail -c +233 "$f" | zstd -dq; } > "$corpus/$(basename "$f")"
	done
	if build/tests/fuzz/rec_log_fuzz -seed=1 -max_total_time="${DETER_FUZZ_SECONDS:-20}" \
		"$corpus" > "$out/fuzz.out" 2>&1; then
		echo "ok 1 - rec_log_fuzz: $(grep -o 'Done [0-9]* runs' "$out/fuzz.out")"
	else
		tail -30 "$out/fuzz.out"
		echo "not ok 1 - rec_log_fuzz"
		return 1
	fi
}

# The real-application scenarios: vm-apps runs the fixed CI part, those
# that replay every connection (docs/testing.md), vm-apps-all (make
# check-apps) all of them.
mapfile -t apps_all < <(ls tests/apps/*.sh | grep -v '/lib\.sh$')
apps_ci=(tests/apps/nginx_wrk.sh tests/apps/sockperf_tp_ecn.sh tests/apps/iperf3_parallel.sh
	 tests/apps/nginx_abort.sh)

# The replay scenarios, split in two halves for vm and vm2.
mapfile -t netns < <(ls tests/netns/*.sh | grep -v '/lib\.sh$')
mapfile -t replays < <(ls tests/replay/*.sh | grep -v -e '/lib\.sh$' -e '/traced\.sh$')
half=$(((${#replays[@]} + 1) / 2))

# --debug: the VM groups boot the debug kernel (KASAN, lockdep, kmemleak;
# make kernel FLAVOUR=debug) with its build of deter.ko (make kmod-debug),
# each with four times the time, and four times and more the allowance for
# the tap's code before deter's device hook (record_drop, record_read:
# medians of 135-155 us on the debug kernel, against 7-42 us).
vmrun=(testbed/run)
vm_timeout=${DETER_VM_TIMEOUT:-2400}
if [ "${1:-}" = --debug ]; then
	shift
	image=$(FLAVOUR=debug testbed/kernel.sh image) || exit 1
	vmrun+=(--kernel "$image")
	vm_timeout=$((vm_timeout * 4))
	export DETER_KO=$top/build/kmod-debug/deter.ko
	export DETER_KUNIT_KO=$top/build/kmod-debug/deter_kunit.ko
	export DETER_TAP_SLACK_NS=${DETER_TAP_SLACK_NS:-500000}
fi

# vm-nic: the replay scenarios a data-center host's datapath changes,
# recorded on the NIC topology (testbed/run --nics), once per NIC model.
# Unmodified programs under loss too: a bulk transfer (nginx serving
# files) and an RPC workload (memcached). vm-nic-ci, CI's part of it: the
# first six on virtio-net, the other seven on e1000e, each scenario on one
# model, both drivers in each run.
nic_replays=(tests/replay/{bulk,rpc,data_drop,tail_drop,syn_loss}.sh tests/apps/nginx_files_loss.sh
	     tests/replay/{reorder,ecn_dctcp,zero_window,short_behind_long}.sh
	     tests/apps/{iperf3_parallel,memcached_loss}.sh tests/replay/handshake_late_ack.sh)
declare -A nic_ci=([virtio]="${nic_replays[*]:0:6}" [e1000e]="${nic_replays[*]:6}")

# vm-debug, the part of the suite CI runs on the debug kernel: KUnit,
# the recording scenarios (tests/netns), and every third replay scenario
# in name order (the first, fourth, ...), a fixed third.
debug_replays=()
for i in "${!replays[@]}"; do
	[ $((i % 3)) -ne 0 ] || debug_replays+=("${replays[i]}")
done

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(unit fuzz bats lint vm vm2 vm-traced vm-host vm-apps vm-nic-ci)
start=$(date +%s)
for g in "${groups[@]}"; do
	case "$g" in
	unit) group unit unit ;;
	fuzz) group fuzz fuzz ;;
	bats) group bats bats --tap tests/bats ;;
	lint) group lint tests/lint.sh ;;
	vm) group vm "${vmrun[@]}" --timeout "$vm_timeout" -- tests/vm/suite \
		"${netns[@]}" "${replays[@]:0:half}"
	    ran_all vm "${netns[@]}" "${replays[@]:0:half}" ;;
	vm2) group vm2 "${vmrun[@]}" --timeout "$vm_timeout" -- tests/vm/suite \
		--no-kunit "${replays[@]:half}"
	     ran_all vm2 "${replays[@]:half}" ;;
	# A replay under function_graph: ftrace patches code the other vCPU
	# runs, which multi-threaded TCG does not always see (guest oops).
	vm-traced) group vm-traced "${vmrun[@]}" --tcg-single --timeout $((vm_timeout / 2)) -- \
		tests/vm/suite tests/replay/traced.sh
		   ran_all vm-traced tests/replay/traced.sh ;;
	vm-debug) group vm-debug "${vmrun[@]}" --timeout "$vm_timeout" -- tests/vm/suite \
		"${netns[@]}" "${debug_replays[@]}"
		  ran_all vm-debug "${netns[@]}" "${debug_replays[@]}" ;;
	vm-apps) group vm-apps "${vmrun[@]}" --timeout "$vm_timeout" -- tests/vm/suite \
		--no-kunit "${apps_ci[@]}"
		 ran_all vm-apps "${apps_ci[@]}" ;;
	# pgbench, three replays of each of its six connections (up to a
	# minute each under TCG), takes up to 20 min: past the harness's
	# default limit per scenario (10 min).
	vm-apps-all) group vm-apps-all "${vmrun[@]}" --timeout $((vm_timeout * 3)) -- \
		env HARNESS_TIMEOUT=1800 tests/vm/suite --no-kunit "${apps_all[@]}"
		     ran_all vm-apps-all "${apps_all[@]}" ;;
	vm-nic) for m in virtio e1000e; do
			group "vm-nic-$m" "${vmrun[@]}" --nics "$m" --timeout "$vm_timeout" -- \
				tests/vm/suite --no-kunit "${nic_replays[@]}"
			ran_all "vm-nic-$m" "${nic_replays[@]}"
		done ;;
	vm-nic-ci) for m in virtio e1000e; do
			read -ra part <<< "${nic_ci[$m]}"
			group "vm-nic-ci-$m" "${vmrun[@]}" --nics "$m" --timeout "$vm_timeout" -- \
				tests/vm/suite --no-kunit "${part[@]}"
			ran_all "vm-nic-ci-$m" "${part[@]}"
		done ;;
	# deter replay --vm from this host: records in one VM, replays in another.
	vm-host) group vm-host tests/vm/replay_vm.sh ;;
	*) echo "check.sh: unknown group '$g' (unit, fuzz, bats, lint, vm, vm2, vm-traced, vm-debug, vm-host, vm-apps, vm-apps-all, vm-nic, vm-nic-ci)" >&2; exit 2 ;;
	esac
done
if [ -s "$out/failures" ]; then
	echo "== failures"
	cat "$out/failures"
	# The verdicts last, each with the first line of its details (a
	# selftests verdict follows them), so that a short tail still names
	# them all and why.
	echo "== failed:"
	awk '/^TEST: .*\[(FAIL|SKIP)\]$/ {
		v = /FAIL\]$/ ? "FAIL" : "SKIP"
		sub(/^TEST: /, ""); sub(/ *\[(FAIL|SKIP)\]$/, ""); print $0 " [" v "]"
		if (why != "" || first != "")
			print "    " (why != "" ? why : first)
	}
	/^not ok|^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]/ { print }
	/^TEST: / { why = first = ""; next }
	/^ +[^ ]/ && first == "" { first = $0; sub(/^ +/, "", first) }
	/^ +[^ ]/ && why == "" && !/^ +host [ab]: / { why = $0; sub(/^ +/, "", why) }' "$out/failures" |
		cut -c1-160 | head -60
fi
echo "check: ${groups[*]} in $(($(date +%s) - start)) s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
