#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replays side by side: NCONN RPC connections (A to B:5201..) recorded at
# once, then replayed together, each by its own deter replay on its own
# testbed. Each must verify and match its own slice of the ground truth
# (tcpdump on A's and B's egress, by port). PARALLEL lists how many run
# at once, in turn (default: all NCONN); each round prints a BENCH line
# with the connections replayed per second, for make bench.

source "$(dirname "$0")/lib.sh"

NCONN=${NCONN:-3}
PARALLEL=${PARALLEL:-$NCONN}

scenario_testbed off || exit $ksft_fail

# The connections, by server port.
ports=()
for i in $(seq "$NCONN"); do
	ports+=($((5200 + i)))
done

# parallel_record: run the NCONN connections at once under deter record
# and the egress captures; sets IDS (A's end of each, by port).
parallel_record() {
	local p srv=() cli=() rec filter="tcp portrange 5201-$((5200 + NCONN))"

	CHECK_RC=0
	"$DETER" record -o "$LOGS" $(printf -- '--port %s ' "${ports[@]}") \
		2> "$TB_TMP/record.err" &
	rec=$!
	sleep 1
	capture_start "$A" a0 a0 "$filter and src host $A_IP" || return 1
	capture_start "$B" b0 b0 "$filter and src host $B_IP" || return 1
	for p in "${ports[@]}"; do
		ip netns exec "$B" "$TCPWL" server -b "$B_IP" -p "$p" \
			--rpc 200:2000 > /dev/null &
		srv+=($!)
	done
	for p in "${ports[@]}"; do
		wait_listen "$B" "$p" || return 1
	done
	for p in "${ports[@]}"; do
		ip netns exec "$A" "$TCPWL" client -c "$B_IP" -p "$p" \
			--rpc 20:200:2000 > /dev/null &
		cli+=($!)
	done
	wait "${cli[@]}" "${srv[@]}"
	capture_stop
	sleep 0.5
	kill -INT $rec
	wait $rec
	"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls.json"
	IDS=()
	for p in "${ports[@]}"; do
		IDS+=("$(a_log_id "$p")")
		[ -n "${IDS[-1]}" ]
		check_err $? "no log of A's end of the connection to port $p"
		# Each connection's own slice of the ground truth.
		tcpdump -r "$TB_TMP/a0.pcap" -w "$TB_TMP/a-$p.pcap" "port $p" 2>/dev/null
		tcpdump -r "$TB_TMP/b0.pcap" -w "$TB_TMP/b-$p.pcap" "port $p" 2>/dev/null
		hdrseq "$TB_TMP/a-$p.pcap" > "$TB_TMP/a-$p.truth"
		hdrseq "$TB_TMP/b-$p.pcap" > "$TB_TMP/b-$p.truth"
	done
	grep -q '"incomplete":true' "$TB_TMP/ls.json"
	[ $? -ne 0 ]
	check_err $? "a log is incomplete: $(cat "$TB_TMP/record.err")"
	log_test $CHECK_RC "parallel: $NCONN connections recorded at once (logs ${IDS[*]})"
	[ $CHECK_RC -eq 0 ]
}

# parallel_replay N: replay the first N connections at once.
parallel_replay() {
	local n=$1 i p out pids=() rcs=() t0 t1 ok=0 h

	CHECK_RC=0
	t0=$(date +%s%N)
	for i in $(seq 0 $((n - 1))); do
		out=$TB_TMP/par$n-${ports[i]}
		mkdir -p "$out"
		"$DETER" replay -d "$LOGS" "${IDS[i]}" -o "$out" --pcap "$out/r" \
			> "$out/replay.out" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[i]}"
		rcs+=($?)
	done
	t1=$(date +%s%N)
	for i in $(seq 0 $((n - 1))); do
		p=${ports[i]}
		out=$TB_TMP/par$n-$p
		check_err "${rcs[i]}" "port $p: deter replay exited ${rcs[i]}: $(tail -2 "$out/replay.out")"
		[ "${rcs[i]}" -eq 0 ] || continue
		for h in a b; do
			egress_diff "$out" "$h" "$TB_TMP/$h-$p.truth"
			check_err $? "port $p, host $h: original (<) vs replay (>) differ: $(sed -n 2,3p "$out/$h.diff" | cut -c1-200)"
			[ -s "$out/$h.diff" ] || ok=$((ok + 1))
		done
	done
	echo "BENCH parallel=$n replays=$n identical=$((ok / 2)) wall_ms=$(( (t1 - t0) / 1000000 ))" \
	     "per_s=$(echo "$n * 1000000000 / ($t1 - $t0)" | bc -l | cut -c1-6)"
	log_test $CHECK_RC "parallel: $n replays at once, each verified and identical to its original"
}

if parallel_record; then
	for n in $PARALLEL; do
		[ "$n" -le "$NCONN" ] && parallel_replay "$n"
	done
fi
exit $RET
