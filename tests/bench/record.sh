#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, recording part: run inside the testbed VM. Prints ratios
# measured in this one run:
#
#   storage  deter's logs (both ends) / header-only pcap (tcpdump -s 128 at
#            A's interface, both directions) compressed with zstd -19; the
#            logs as deter record wrote them, and after deter compact. Each
#            workload twice: with the veths' offloads (the pcap holds GSO
#            packets of up to 64 KB, which no wire carries), and "wire",
#            TSO, GSO and GRO off at both hosts and the switch, so that the
#            pcap holds the frames a link carries, as DETER's comparison
#            with packet traces does
#   cpu      guest CPU time per byte (bulk) and per request (RPC) with
#            recording (deter record running; draining, encoding and
#            writing both logs included, its start and exit not) / with
#            deter.ko not loaded, alternating runs
#   memory   deter record's peak RSS over an RPC connection 4 times as
#            long as another, less the ring buffers it maps
#   drain    events per second the recorder drained, and events lost,
#            under a saturating transfer (no link delay)
#
#   A a0 ---- [switch] ---- b0 B      (1 ms per link for storage and cpu)

source "$(dirname "$0")/lib.sh"

# busy_ns CMD...: guest CPU time (all CPUs, not idle) that CMD took.
busy_ns() {
	local a b

	a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat)
	"$@"
	b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat)
	echo $(( (b - a) * 1000000000 / $(getconf CLK_TCK) ))
}

# storage NAME WORKLOAD: the storage lines of one recording of WORKLOAD.
storage() {
	local w=$1 logs pcap pkts

	record_capture "$2" "$w" || return 1
	zstd -q -19 -f "$TB_TMP/$w.pcap" -o "$TB_TMP/$w.pcap.zst"
	logs=$(cat "$TB_TMP/logs-$w"/*.dlog | wc -c)
	pcap=$(stat -c %s "$TB_TMP/$w.pcap.zst")
	pkts=$(tcpdump -r "$TB_TMP/$w.pcap" 2>/dev/null | wc -l)
	printf 'bench: storage %-9s deter logs %7d B / pcap -s 128 zstd -19 %8d B = %6.2f %%  (%d packets, %.2f B/packet)\n' \
		$w "$logs" "$pcap" "$(echo "100 * $logs / $pcap" | bc -l)" "$pkts" \
		"$(echo "$logs / $pkts" | bc -l)"
	# The same logs after deter compact (zstd -19, offline).
	"$DETER" compact -d "$TB_TMP/logs-$w" > /dev/null || return 1
	logs=$(cat "$TB_TMP/logs-$w"/*.dlog | wc -c)
	printf 'bench: storage %-9s compacted  %7d B / pcap -s 128 zstd -19 %8d B = %6.2f %%  (deter compact)\n' \
		$w "$logs" "$pcap" "$(echo "100 * $logs / $pcap" | bc -l)"
}

# --- storage
for w in bulk rpc; do
	storage $w $w || exit 1
done

# timed off|on CMD...: CMD's guest CPU time, onto the array off or on.
timed() {
	local t

	t=$(busy_ns "${@:2}")
	if [ "$1" = off ]; then off+=("$t"); else on+=("$t"); fi
}

# --- cpu: alternate unloaded / armed
for w in bulk rpc; do
	off=()
	on=()
	alternate $w timed || exit 1
	med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
	m_off=$(med "${off[@]}")
	m_on=$(med "${on[@]}")
	unit=$([ $w = bulk ] && echo "$BULK bytes" || echo "$RPCS requests")
	# Runs that spread more than the medians differ measure TCG, not deter.
	spread() { printf '%s\n' "$@" | sort -n | sed -n '1p;$p' | xargs | awk '{ printf "%.0f\n", $2 - $1 }'; }
	s_off=$(spread "${off[@]}")
	s_on=$(spread "${on[@]}")
	diff=$((m_on > m_off ? m_on - m_off : m_off - m_on))
	note=
	[ "$s_off" -gt "$diff" ] || [ "$s_on" -gt "$diff" ] &&
		note="; noise: runs spread more than the medians differ, see cpu_insns.sh's guest instructions"
	printf 'bench: cpu     %-4s armed %d ns / unloaded %d ns per %s = %.3f (overhead %+.2f %%; medians of %d, runs off: %s; on: %s%s)\n' \
		$w "$m_on" "$m_off" "$unit" "$(echo "$m_on / $m_off" | bc -l)" \
		"$(echo "100 * ($m_on - $m_off) / $m_off" | bc -l)" "$ROUNDS" "${off[*]}" "${on[*]}" "$note"
done

# --- memory: deter record's peak RSS over one RPC connection of RPCS and
# of 4 x RPCS requests (it encodes a connection's events as they come,
# so a long connection should cost it no more than a short one)
for k in 1 4; do
	insmod "$top/deter.ko"
	"$DETER" record -o "$TB_TMP/logs-mem$k" --port $((port + 1)) 2> "$TB_TMP/rec-mem.err" &
	rec=$!
	sleep 1
	RPCS=$((RPCS * k)) workload rpc
	sleep 0.5
	# Less the ring buffers it maps: the kernel's pages, there whether
	# mapped or read.
	hwm[k]=$(awk '/^VmHWM/ { print $2 }' /proc/$rec/status)
	rb[k]=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { rb = $NF ~ /\/trace_pipe_raw$/ }
		rb && /^Rss:/ { kb += $2 } END { print kb + 0 }' /proc/$rec/smaps)
	hwm[k]=$((hwm[k] - rb[k]))
	kill -INT $rec
	wait $rec
	rmmod deter
	ev[k]=$("$DETER" show --stats -d "$TB_TMP/logs-mem$k" \
		"$("$DETER" ls -d "$TB_TMP/logs-mem$k" --json | sed -n '1s/.*"id":"\([0-9a-f]*\)".*/\1/p')" |
		sed -n 's/^events *\([0-9]*\) .*/\1/p')
done
printf 'bench: memory  deter record peak RSS %d kB over %d requests (%d events at one end), %d kB over %d (%d) = %.2f (less the mapped ring buffers, %d and %d kB)\n' \
	"${hwm[1]}" "$RPCS" "${ev[1]}" "${hwm[4]}" $((RPCS * 4)) "${ev[4]}" \
	"$(echo "${hwm[4]} / ${hwm[1]}" | bc -l)" "${rb[1]}" "${rb[4]}"

# --- drain rate under a saturating transfer
tc -n "$A" qdisc del dev a0 root
tc -n "$B" qdisc del dev b0 root
insmod "$top/deter.ko"
"$DETER" record -o "$TB_TMP/logs-drain" --port $((port + 1)) 2> "$TB_TMP/rec-drain.err" &
rec=$!
sleep 1
t0=$(date +%s%N)
BULK=$((BULK * 5)) workload bulk
t1=$(date +%s%N)
sleep 0.5
kill -INT $rec
wait $rec
read -r events lost < <(sed -n 's/.*; \([0-9]*\) events read, \([0-9]*\) lost$/\1 \2/p' "$TB_TMP/rec-drain.err")
printf 'bench: drain   %d events in %.2f s = %.0f events/s drained, %d lost (%s)\n' \
	"$events" "$(echo "($t1 - $t0) / 1000000000" | bc -l)" \
	"$(echo "$events * 1000000000 / ($t1 - $t0)" | bc -l)" "${lost:-0}" \
	"$("$DETER" ls -d "$TB_TMP/logs-drain" | tail -n +2 | awk '{ print $NF }' | sort | uniq -c | xargs)"
rmmod deter

# --- storage, wire-size frames (last: the offloads stay off), with the
# links' delay again
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms
for d in "$A a0" "$B b0" "$SW s0" "$SW s1"; do
	offload $d off || exit 1
done
for w in bulk rpc; do
	storage $w-wire $w || exit 1
done
