#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deter record under connection churn: thousands of short connections
# from several processes at once, each one 200-byte request and a
# 2000-byte reply, then close:
#
#   A (10.0.1.1) a0 ---- s0 [switch] s1 ---- b0 B (10.0.2.1)
#   4 tcpwl clients        cap:s0            tcpwl server, 4 workers
#   (--conns, one after    (A's SYNs)        (--accept, one listener)
#    another each)
#
# Recording stops CHURN_SETTLE (3) s after the last connection ended;
# just before, ss lists the connections still open in A and B.
# Checks: the workload ran whole; tcpdump saw as many connections (SYNs,
# by port and ISN) as the clients made, and deter wrote one log for each
# end of each, no more, their ports the SYNs'; every log is complete, or
# its status says why not, and the reason is true: not-closed only for a
# connection ss saw open when recording stopped, lost-events only when
# deter record says it lost events; and deter record's closing line
# counts the incomplete logs by reason as deter ls shows them.
# CHURN_CONNS connections per client (500), CHURN_CLIENTS clients (4),
# CHURN_LOAD busy loops running meanwhile (0).

source "$(dirname "$0")/lib.sh"

DETER=$TB_TOP/bin/deter
LOGS=$TB_TMP/logs
CLIENTS=${CHURN_CLIENTS:-4}
PER=${CHURN_CONNS:-500}
SETTLE=${CHURN_SETTLE:-3}
LOAD=${CHURN_LOAD:-0}
N=$((CLIENTS * PER))

testbed_create || exit $ksft_fail
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms

for _ in $(seq "$LOAD"); do
	run_bg "$A" sh -c 'while :; do :; done'
done

stats=/sys/kernel/debug/deter/stats
stat() { awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' "$stats" 2>/dev/null || echo 0; }
sel0=$(stat connections_recorded)
capture_start "$SW" s0 syns 'tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' || exit $ksft_fail
"$DETER" record -o "$LOGS" --port 5201 2> "$TB_TMP/record.err" &
rec=$!
sleep 1
t0=$(date +%s.%N)
ip netns exec "$B" "$TCPWL" server -b "$B_IP" -p 5201 --rpc 200:2000 --accept $N --workers 4 \
	> "$TB_TMP/server.out" &
srv=$!
wait_listen "$B" 5201 || exit $ksft_fail
pids=()
for i in $(seq "$CLIENTS"); do
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" -p 5201 --rpc 1:200:2000 --conns "$PER" \
		> "$TB_TMP/client.$i.out" 2>&1 &
	pids+=($!)
done
wrc=0
for p in "${pids[@]}"; do
	wait "$p" || wrc=1
done
wait $srv || wrc=1
t1=$(date +%s.%N)
sleep "$SETTLE"
# The connections open as recording stops (TIME-WAIT is no socket's).
for ns in "$A" "$B"; do
	ip netns exec "$ns" ss -Htan state all '( sport = :5201 or dport = :5201 )'
done | awk '$1 != "TIME-WAIT" && $1 != "LISTEN" { print $4, $5, $1 }' > "$TB_TMP/open.txt"
kill -INT $rec
wait $rec
rrc=$?
capture_stop
sel=$(( $(stat connections_recorded) - sel0 ))
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

CHECK_RC=0
check_err $wrc "the workload failed: $(cat "$TB_TMP"/client.*.out "$TB_TMP/server.out" | sort | uniq -c)"
grep -q "^connections $N served $N\$" "$TB_TMP/server.out"
check_err $? "the server did not serve $N: $(cat "$TB_TMP/server.out")"
lost=$(sed -n 's/^deter record: .* events read, \([0-9]*\) lost$/\1/p' "$TB_TMP/record.err")
# deter record exits 1 when the ring buffers lost events: said below.
[ $rrc -eq 0 ] || { [ $rrc -eq 1 ] && [ "${lost:-0}" -gt 0 ]; }
check_err $? "deter record exited $rrc: $(cat "$TB_TMP/record.err")"
log_test $CHECK_RC "churn: $CLIENTS clients made $N connections in $secs s ($LOAD busy loops), recorded"

# Ground truth: one SYN (or its retransmissions) per connection.
CHECK_RC=0
tcpdump -nr "$TB_TMP/syns.pcap" -S "dst port 5201" 2>/dev/null |
	sed -n "s/.* $A_IP\.\([0-9]*\) > $B_IP\.5201: Flags \[S[^]]*\], seq \([0-9]*\),.*/\1 \2/p" |
	sort -u > "$TB_TMP/syns.txt"
awk '{ print $1 }' "$TB_TMP/syns.txt" | sort > "$TB_TMP/syn.ports"
"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls.json"
check_err $? "deter ls failed"
sed -n "s/.*\"local\":\"$A_IP:\([0-9]*\)\",\"remote\":\"$B_IP:5201\".*/\1/p" "$TB_TMP/ls.json" |
	sort > "$TB_TMP/a.ports"
sed -n "s/.*\"local\":\"$B_IP:5201\",\"remote\":\"$A_IP:\([0-9]*\)\".*/\1/p" "$TB_TMP/ls.json" |
	sort > "$TB_TMP/b.ports"
nsyn=$(wc -l < "$TB_TMP/syns.txt")
nlogs=$(wc -l < "$TB_TMP/ls.json")
na=$(wc -l < "$TB_TMP/a.ports")
nb=$(wc -l < "$TB_TMP/b.ports")
[ "$nsyn" -eq $N ]
check_err $? "tcpdump saw $nsyn connections, the clients made $N"
[ "$na" -eq "$nsyn" ] && [ "$nb" -eq "$nsyn" ] && [ "$nlogs" -eq $((2 * nsyn)) ]
check_err $? "$nlogs logs, $na of A's end, $nb of B's, for $nsyn connections: $(grep -v "\"local\":\"\($A_IP:[0-9]*\",\"remote\":\"$B_IP:5201\|$B_IP:5201\",\"remote\":\"$A_IP:[0-9]*\)\"" "$TB_TMP/ls.json" | head -5)"
diff -q "$TB_TMP/syn.ports" "$TB_TMP/a.ports" > /dev/null && diff -q "$TB_TMP/syn.ports" "$TB_TMP/b.ports" > /dev/null
check_err $? "the logs' client ports are not the SYNs': $(diff "$TB_TMP/syn.ports" "$TB_TMP/a.ports" | head -4) $(diff "$TB_TMP/syn.ports" "$TB_TMP/b.ports" | head -4)"
log_test $CHECK_RC "churn: tcpdump saw $nsyn connections; deter wrote $nlogs logs, one per end of each ($sel ends selected)"

# Every incomplete log's reasons, each checked against the facts.
CHECK_RC=0
: > "$TB_TMP/why.txt"
shown=0
while read -r line; do
	st=$(echo "$line" | ls_field status)
	local_=$(echo "$line" | ls_field local)
	remote=$(echo "$line" | ls_field remote)
	why=${st#incomplete}
	why=${why#,}
	[ -n "$why" ] || why=none
	echo "    incomplete: $local_ -> $remote: $st" >&2
	if [ $((shown++)) -lt 3 ]; then
		"$DETER" show -d "$LOGS" "$(echo "$line" | ls_field id)" | tail -4 | sed 's/^/      /' >&2
	fi
	for r in ${why//,/ }; do
		echo "$r" >> "$TB_TMP/why.txt"
		case $r in
		not-closed)
			grep -q "^$local_ $remote " "$TB_TMP/open.txt"
			check_err $? "$local_ -> $remote: not-closed, but ss did not see it open when recording stopped"
			;;
		lost-events)
			[ "${lost:-0}" -gt 0 ]
			check_err $? "$local_ -> $remote: lost-events, but deter record lost none: $(tail -1 "$TB_TMP/record.err")"
			;;
		settings-changed)
			;;
		*)
			check_err 1 "$local_ -> $remote: incomplete ($r) for no reason this workload has"
			;;
		esac
	done
done < <(grep '"incomplete":true' "$TB_TMP/ls.json")
ninc=$(grep -c '"incomplete":true' "$TB_TMP/ls.json")
# In the order of their status bits, as deter record counts them.
counts=$(for r in lost-events not-closed no-identity missing-values cut unseen-calls; do
		n=$(grep -cx -- "$r" "$TB_TMP/why.txt")
		[ "$n" -eq 0 ] || echo "$n $r"
	done | paste -sd, | sed 's/,/, /g')
# The closing line: "N incomplete (n not-closed, m lost-events)".
line=$(grep "^deter record: [0-9]* connections recorded" "$TB_TMP/record.err")
if [ "$ninc" -eq 0 ]; then
	[[ "$line" == "deter record: $nlogs connections recorded in $LOGS, 0 incomplete;"* ]]
else
	[[ "$line" == "deter record: $nlogs connections recorded in $LOGS, $ninc incomplete ($counts);"* ]]
fi
check_err $? "deter record's closing line '$line' does not say $nlogs logs, $ninc incomplete${counts:+ ($counts)}"
if [ -s "$TB_TMP/open.txt" ]; then
	echo "    open when recording stopped:" >&2
	sed 's/^/      /' "$TB_TMP/open.txt" >&2
fi
log_test $CHECK_RC "churn: $ninc of $nlogs logs incomplete${counts:+ ($counts)}, each for a reason that holds; ${lost:-?} events lost"

exit $RET
