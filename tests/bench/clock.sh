#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the TCP clock: what logging its values costs against a lower
# bound of what logging its influence would (DETER §4: log what the clock
# decided rather than what it read). Run inside the testbed VM, for the
# RPC and bulk workloads of record.sh, per end of the connection:
#
#   value      the clock values deter's log has (us deltas)
#   influence  two things any exact record of the clock's influence must
#              hold, since TCP does arithmetic on them rather than testing
#              them: every RTT sample TCP's ACK processing takes
#              (tcp_ack_update_rtt()'s seq, SACK and congestion-control
#              RTTs, caught by a kprobe on that function) and the TS value
#              of every segment the end sent (tcpdump). Not counted, so
#              this is a lower bound: the receiver's RTT samples and
#              receive-buffer tuning, RACK's RTTs and loss timeouts,
#              HyStart's delay and ACK-train tests, the RTO, TLP and
#              reorder deadlines TCP derives from the clock (timers are
#              replayed from the log, but a deadline decides a deferred
#              handler and a not-due one)
#
# Each series goes through tests/bench/planes (the log's coding of noisy
# values: zigzag, low byte apart from the rest) and zstd -19, stream by
# stream; the log itself compresses the clock about as well.

source "$(dirname "$0")/lib.sh"

PLANES=$top/build/tests/bench/planes
T=/sys/kernel/tracing
INST=$T/instances/deter_clock

# size [-d]: bytes of the series on stdin, coded and compressed; fails
# if planes does.
size() {
	local z

	z=$("$PLANES" "$@" | zstd -q -19 -c | wc -c; exit "${PIPESTATUS[0]}") || return 1
	echo "$z"
}

echo 'p:deter_clock/rtt tcp_ack_update_rtt lport=+14(%di):u16 seq=%dx:s64 sack=%cx:s64 ca=%r8:s64' \
	>> $T/kprobe_events || exit 1
mkdir -p $INST
echo 1 > $INST/events/deter_clock/rtt/enable || exit 1

for w in rpc bulk; do
	echo > $INST/trace
	record_capture $w "clock-$w" || exit 1
	cp $INST/trace "$TB_TMP/rtt-$w.txt"
	for end in A B; do
		if [ $end = A ]; then ip=$A_IP; else ip=$B_IP; fi
		id=$("$DETER" ls -d "$TB_TMP/logs-clock-$w" --json |
			sed -n "s/.*\"id\":\"\([0-9a-f]*\)\".*\"local\":\"$ip:\([0-9]*\)\".*/\1 \2/p")
		read -r id lport <<< "$id"
		[ -n "$id" ] || { echo "bench: no log of $end" >&2; exit 1; }
		"$DETER" show -d "$TB_TMP/logs-clock-$w" "$id" |
			awk '$2 == "value" && $3 == "clock_ns" { printf "%d\n", substr($4, 2) / 1000 }' \
			> "$TB_TMP/clock-$w-$end"
		sed -n "s/.* lport=$lport seq=\(-\?[0-9]*\) sack=\(-\?[0-9]*\) ca=\(-\?[0-9]*\)$/\1 \2 \3/p" \
			"$TB_TMP/rtt-$w.txt" > "$TB_TMP/rtt-$w-$end"
		tcpdump -r "$TB_TMP/clock-$w.pcap" -n "src host $ip" 2>/dev/null |
			sed -n 's/.*TS val \([0-9]*\) .*/\1/p' > "$TB_TMP/tsval-$w-$end"
		reads=$(wc -l < "$TB_TMP/clock-$w-$end")
		samples=$(wc -l < "$TB_TMP/rtt-$w-$end")
		segs=$(wc -l < "$TB_TMP/tsval-$w-$end")
		[ "$reads" -gt 0 ] || { echo "bench: no clock values in $end's log" >&2; exit 1; }
		value=$(size < "$TB_TMP/clock-$w-$end") || exit 1
		# RTT samples: the seq RTT as is; SACK and CC RTTs as their
		# difference from it (mostly 0); TS values as deltas.
		r1=$(awk '{ print $1 }' "$TB_TMP/rtt-$w-$end" | size) || exit 1
		r2=$(awk '{ print ($2 < 0 ? -1 : $2 - $1) }' "$TB_TMP/rtt-$w-$end" | size) || exit 1
		r3=$(awk '{ print $3 - $1 }' "$TB_TMP/rtt-$w-$end" | size) || exit 1
		rtt=$((r1 + r2 + r3))
		tsval=$(size -d < "$TB_TMP/tsval-$w-$end") || exit 1
		printf 'bench: clock %-4s %s  value %6d B (%d reads)  influence >= %6d B (RTT samples %d B of %d, TS values %d B of %d segments) = %.2f x value\n' \
			$w $end "$value" "$reads" $((rtt + tsval)) "$rtt" "$samples" "$tsval" "$segs" \
			"$(echo "($rtt + $tsval) / $value" | bc -l)"
	done
done
echo 0 > $INST/events/deter_clock/rtt/enable
rmdir $INST
echo '-:deter_clock/rtt' >> $T/kprobe_events
