#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: run the measurements and write docs/figures.md, the latest
# run only.
#
#   tests/bench/figures.sh                run every part below, each one's
#                                         output to this terminal and to
#                                         build/bench/PART.out, then write
#                                         docs/figures.md
#   tests/bench/figures.sh --from DIR     write docs/figures.md from the
#                                         PART.out files in DIR, running
#                                         nothing
#   ... [--out FILE]                      write FILE instead
#
# A part's figures are the lines it prints that start with "bench: "
# (record.sh, clock.sh, cpu_insns.sh), or the tables replay.sh prints
# after its run. Each section of the file names the command that
# produced it; the top names the commit, the host and the date. A part
# that fails is written as failed, with its exit status, and makes this
# script exit 1 once the others have run.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

# The replay scenarios the NIC topology runs (tests/check.sh's vm-nic).
nic_replays=$(printf 'tests/replay/%s.sh ' bulk rpc data_drop tail_drop syn_loss \
	reorder ecn_dctcp zero_window short_behind_long)
nic_replays+=$(printf 'tests/apps/%s.sh ' iperf3_parallel nginx_files_loss memcached_loss)
nic_replays+=tests/replay/handshake_late_ack.sh

# The parts: name, then the command make bench runs, as one string.
parts=(
	record "testbed/run --timeout 3000 -- tests/bench/record.sh"
	clock "testbed/run --timeout 1200 -- tests/bench/clock.sh"
	cpu_insns "tests/bench/cpu_insns.sh"
	replay "testbed/run --timeout 5400 -- tests/bench/replay.sh"
	apps "testbed/run --timeout 9000 -- tests/bench/apps.sh"
	record_virtio "testbed/run --nics virtio --timeout 3000 -- tests/bench/record.sh"
	cpu_insns_virtio "tests/bench/cpu_insns.sh --nics virtio"
	replay_virtio "testbed/run --nics virtio --timeout 7200 -- tests/bench/replay.sh $nic_replays"
	replay_e1000e "testbed/run --nics e1000e --timeout 7200 -- tests/bench/replay.sh $nic_replays"
)

from=
out=docs/figures.md
while [ $# -gt 0 ]; do
	case "$1" in
	--from) [ $# -ge 2 ] || { echo "figures.sh: --from needs a directory" >&2; exit 2; }
		from=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || { echo "figures.sh: --out needs a file" >&2; exit 2; }
		out=$2; shift 2 ;;
	*) echo "usage: tests/bench/figures.sh [--from DIR] [--out FILE]" >&2; exit 2 ;;
	esac
done

dir=${from:-build/bench}
declare -A rc
if [ -z "$from" ]; then
	mkdir -p "$dir" || exit 1
	rm -f "$dir"/*.out "$dir/status"
	for ((i = 0; i < ${#parts[@]}; i += 2)); do
		name=${parts[i]}
		echo "== $name: ${parts[i + 1]}"
		# shellcheck disable=SC2086 # the command is words, as make runs it
		${parts[i + 1]} 2>&1 | tee "$dir/$name.out"
		rc[$name]=${PIPESTATUS[0]}
		echo "$name ${rc[$name]}" >> "$dir/status"
	done
elif [ -f "$dir/status" ]; then
	while read -r name status; do
		rc[$name]=$status
	done < "$dir/status"
fi

# figures NAME: the figure lines of part NAME's output.
figures() {
	local f=$dir/$1.out

	[ -f "$f" ] || return 0
	if [ "$1" = replay ] || [ "${1#replay_}" != "$1" ]; then
		sed -n '/^replay fidelity over /,/^(logs: /p' "$f" | sed '/^(logs: /d'
	elif [ "$1" = apps ]; then
		sed -n '/^application replay over /,/^(logs: /p' "$f" | sed '/^(logs: /d'
	else
		sed -n 's/^bench: //p' "$f"
	fi
}

# What each part measures, from its script's header.
about() {
	case "$1" in
	record) echo "Storage: both ends' logs against a header-only pcap (tcpdump -s 128 at A, zstd -19), as" \
		"written and after deter compact, with the veths' offloads and with them off (\"wire\": the" \
		"frames a link carries). CPU: guest CPU time armed vs deter.ko unloaded (noisy under TCG)." \
		"Memory: deter record's peak RSS over an RPC connection and one 4 times as long." \
		"Drain: events per second drained under a saturating transfer, and events lost." ;;
	clock) echo "The TCP clock values deter logs against a lower bound of what logging their" \
		"influence would take (RTT samples and TS values), per end, same coding and zstd -19." ;;
	cpu_insns) echo "Guest instructions counted by QEMU (tests/bench/insns.c, one TCG thread), the" \
		"whole guest with recording armed vs deter.ko unloaded: medians of alternating runs." ;;
	replay) echo "Each replay scenario recorded once and replayed DETER_BENCH_REPLAYS times: replays" \
		"identical to tcpdump and verified, replay wall time / original duration (median), inferred" \
		"send time vs tcpdump at the original's egress (max/p99, us), and replays side by side." ;;
	record_virtio) echo "The recording part's storage and CPU on the NIC topology (testbed/run --nics virtio:" \
		"a real driver's receive buffers, NAPI and GRO, GSO in software), where GRO makes fewer, larger" \
		"arrivals and each arrival's skb shape is logged: set beside the record part's veth figures." ;;
	cpu_insns_virtio) echo "The cpu_insns part on the NIC topology (tests/bench/cpu_insns.sh --nics virtio):" \
		"the same workloads behind a real driver, NAPI and GRO, beside the cpu_insns part's veth figures." ;;
	replay_virtio|replay_e1000e) echo "The replay part on the NIC topology (testbed/run --nics ${1#replay_})," \
		"for the scenarios tests/check.sh's vm-nic group runs: recorded behind the driver and GRO, replayed" \
		"on veth with each arrival rebuilt in its logged shape." ;;
	apps) echo "Each real-application scenario (tests/apps) recorded once, every connection it made" \
		"replayed DETER_BENCH_REPLAYS times against tcpdump's ground truth: connections recorded," \
		"replayed identically every time, refused, diverged, verified by deter but different (wrong)," \
		"not replayed, and the replay wall time per connection (median). Then the mixed run" \
		"(tests/bench/mixed.sh): several applications at once under 1 % loss, over 300 connections" \
		"recorded in one deter record run, each replayed once." ;;
	esac
}

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit (with local changes)"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
mem=$(awk '/^MemTotal:/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo)

tmp=$(mktemp "$out.XXXXXX") || exit 1
failed=0
{
	echo "# Measured figures"
	echo
	echo "The latest \`make bench\` run, written by \`tests/bench/figures.sh\`; the next run replaces this file."
	echo
	echo "- commit: $commit"
	echo "- host: $(uname -m), $(nproc) CPUs ($cpu), $mem"
	echo "- guest: QEMU TCG, the testbed VM's defaults (testbed/run: 2 vCPUs, 2 GB)"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	for ((i = 0; i < ${#parts[@]}; i += 2)); do
		name=${parts[i]}
		echo
		echo "## $name"
		echo
		echo "Command: \`${parts[i + 1]}\`"
		echo
		about "$name" | fmt -w 116
		echo
		if [ -n "${rc[$name]}" ] && [ "${rc[$name]}" != 0 ]; then
			echo "Failed (exit ${rc[$name]}); the figures it printed before:"
			echo
			failed=1
		fi
		lines=$(figures "$name")
		if [ -z "$lines" ]; then
			echo "No figures."
			failed=1
		else
			echo '```'
			echo "$lines"
			echo '```'
		fi
	done
	echo
	echo "How to read these against DETER's targets: [limitations.md](limitations.md#cost)."
} > "$tmp"
mv "$tmp" "$out" || exit 1
echo "figures.sh: wrote $out"
exit $failed
