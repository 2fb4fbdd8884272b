#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deter record held to a disk budget and an age, as an always-on recorder
# must be (--max-size, --max-age):
#
#   A (10.0.1.1) a0 ---- s0 [switch: drops every 5th data packet to
#                            port 5202] s1 ---- b0 B (10.0.2.1)
#        cap:s0 (the SYNs, in the order the connections started)
#
# Part 1: deter record --max-size 48K while A makes 2 connections to
# port 5202 (retransmissions: flagged), then 14 to port 5201 (clean),
# one after the other, and deter ls runs over and over meanwhile.
# Checks: every log was written; the logs left take at most 48 KiB on
# disk; some were removed, none of them flagged: the 4 flagged logs are
# all there, oldest as they are; the unflagged logs left are those of
# the last connections in tcpdump's order of their SYNs, both ends of
# each (a connection's two logs go together); deter record's
# closing line counts what it removed and kept, as the directory has
# them; deter ls never failed while logs went, and lists with or
# without the index alike; the index was pruned while recording (after
# every 4 removals here) to fewer records than logs written.
# Part 2: deter record --max-age 5 started in that directory 6 s later
# removes every log there, flagged ones too, and keeps the one
# connection made during it.

source "$(dirname "$0")/lib.sh"

DETER=$TB_TOP/bin/deter
LOGS=$TB_TMP/logs
BUDGET=48K
BUDGET_BYTES=$((48 * 1024))

testbed_create || exit $ksft_fail
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms
switch_nft drop_5202 "ip saddr $A_IP tcp dport 5202 ip length > 52 numgen inc mod 5 == 4 counter drop" || exit $ksft_fail

# conn PORT N: one connection from A to B's PORT, N RPCs.
conn() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" -p "$1" --rpc 200:2000 > /dev/null &
	local srv=$!

	wait_listen "$B" "$1" || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" -p "$1" --rpc "$2:200:2000" > /dev/null
	wait $srv
}

# size_on_disk DIR: bytes the file system allocated to DIR's logs.
size_on_disk() {
	find "$1" -maxdepth 1 -name '*.dlog' -printf '%b\n' | awk '{ s += $1 * 512 } END { print s + 0 }'
}

# client_port: the port A's end of a log had, for each line of deter ls --json.
client_port() {
	sed -n "s/.*\"\(local\|remote\)\":\"$A_IP:\([0-9]*\)\".*/\2/p"
}

# ----- Part 1: --max-size
capture_start "$SW" s0 syns 'tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' || exit $ksft_fail
# The index is pruned after 4 removals here (64 by default).
DETER_RECORD_PRUNE_MIN=4 "$DETER" record -o "$LOGS" --port 5201 --port 5202 --max-size $BUDGET \
	2> "$TB_TMP/record.err" &
rec=$!
sleep 1
(
	n=0
	while [ ! -e "$TB_TMP/ls.stop" ]; do
		"$DETER" ls -d "$LOGS" > "$TB_TMP/ls.loop" 2>&1 || { cat "$TB_TMP/ls.loop"; exit 1; }
		n=$((n + 1))
	done
	echo "$n listings" > "$TB_TMP/ls.count"
) > "$TB_TMP/ls.fail" &
lsloop=$!
wrc=0
for _ in 1 2; do
	conn 5202 30 || wrc=1
done
for _ in $(seq 14); do
	conn 5201 10 || wrc=1
done
touch "$TB_TMP/ls.stop"
wait $lsloop
lsrc=$?
capture_stop
sleep 0.5
kill -INT $rec
wait $rec
rrc=$?

CHECK_RC=0
check_err $wrc "the workload failed"
check_err $rrc "deter record: $(cat "$TB_TMP/record.err")"
grep -q "^deter record: 32 connections recorded in $LOGS, 0 incomplete" "$TB_TMP/record.err"
check_err $? "deter record did not write 32 logs: $(cat "$TB_TMP/record.err")"
log_test $CHECK_RC "record_keep: deter record --max-size $BUDGET wrote the 32 logs of 16 connections"

CHECK_RC=0
"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls.json"
check_err $? "deter ls failed"
kept=$(wc -l < "$TB_TMP/ls.json")
used=$(size_on_disk "$LOGS")
[ "$used" -le $BUDGET_BYTES ] && [ "$kept" -lt 32 ] && [ "$kept" -gt 4 ]
check_err $? "$kept logs kept, $used bytes on disk (budget $BUDGET_BYTES): $(ls -ls "$LOGS")"
line=$(grep "^deter record: [0-9]* logs\{0,1\} removed" "$TB_TMP/record.err")
removed=$((32 - kept))
[[ "$line" == "deter record: $removed logs removed ("*", 0 flagged) by --max-size $BUDGET; $LOGS keeps $kept logs, "*" on disk" ]]
check_err $? "closing line '$line', expected $removed removed, $kept kept"
log_test $CHECK_RC "record_keep: $kept logs kept in $used bytes on disk, $removed removed, as deter record says"

CHECK_RC=0
flagged=$(grep -c '"remote":"'"$B_IP"':5202"\|"local":"'"$B_IP"':5202"' "$TB_TMP/ls.json")
[ "$flagged" -eq 4 ]
check_err $? "$flagged logs of the port 5202 connections kept, not 4: $(cat "$TB_TMP/ls.json")"
[ "$("$DETER" ls -d "$LOGS" --flagged | tail -n +2 | grep -c ":5202 ")" -eq 4 ]
check_err $? "deter ls --flagged does not list the 4: $("$DETER" ls -d "$LOGS" --flagged)"
a5202=$(grep -c "\"local\":\"$A_IP:[0-9]*\",\"remote\":\"$B_IP:5202\".*\"retransmissions\":[1-9]" \
	"$TB_TMP/ls.json")
[ "$a5202" -eq 2 ]
check_err $? "A's logs of the port 5202 connections do not both have retransmissions"
log_test $CHECK_RC "record_keep: the 4 flagged logs, the oldest, are all kept"

# Ground truth: the connections to port 5201 in the order tcpdump saw
# their SYNs; the logs left must be those of the newest.
CHECK_RC=0
tcpdump -nr "$TB_TMP/syns.pcap" "dst port 5201" 2>/dev/null |
	sed -n "s/.* $A_IP\.\([0-9]*\) > $B_IP\.5201:.*/\1/p" > "$TB_TMP/syn.order"
[ "$(wc -l < "$TB_TMP/syn.order")" -eq 14 ]
check_err $? "tcpdump saw $(wc -l < "$TB_TMP/syn.order") SYNs to port 5201, not 14"
grep ":5201\"" "$TB_TMP/ls.json" | client_port | sort | uniq -c |
	awk '{ print $2, $1 }' > "$TB_TMP/kept.ports"
# A port 5201 connection deter flagged (under TCG a tail loss probe can
# retransmit on a clean link) is kept as flagged, wherever it is: left
# out of the order, and named.
"$DETER" ls -d "$LOGS" --flagged --json > "$TB_TMP/flagged.json"
nflagged=$(wc -l < "$TB_TMP/flagged.json")
grep ":5201\"" "$TB_TMP/flagged.json" | client_port | sort -u > "$TB_TMP/flagged.ports"
# Per unflagged connection, newest first: how many of its logs are left.
tac "$TB_TMP/syn.order" |
	awk 'FILENAME == ARGV[1] { f[$1] = 1; next } FILENAME == ARGV[2] { n[$1] = $2; next }
	     !($1 in f) { print n[$1] + 0 }' "$TB_TMP/flagged.ports" "$TB_TMP/kept.ports" - |
	tr '\n' ' ' > "$TB_TMP/kept.seq"
also=
if [ -s "$TB_TMP/flagged.ports" ]; then
	also="; flagged and kept, from ports: $(echo $(cat "$TB_TMP/flagged.ports"))"
	grep ":5201\"" "$TB_TMP/flagged.json" | sed 's/^/    flagged: /'
fi
# 2 2 ... 2, then 0 0 ... 0
grep -Eq '^(2 )+(0 )*$' "$TB_TMP/kept.seq"
check_err $? "logs left per unflagged connection, newest first: $(cat "$TB_TMP/kept.seq")$also"
log_test $CHECK_RC "record_keep: the unflagged logs left are the newest connections' ($(cat "$TB_TMP/kept.seq")$also)"

CHECK_RC=0
check_err $lsrc "deter ls failed while logs were removed: $(cat "$TB_TMP/ls.fail")"
# Pruned while recording: fewer records than the 32 logs written, one
# for each log left at least (a record's size from deter index's anew).
cp -a "$LOGS" "$TB_TMP/logs.copy"
"$DETER" index -d "$TB_TMP/logs.copy" > /dev/null 2>&1
rec_len=$(( ($(stat -c %s "$TB_TMP/logs.copy/index") - 16) / kept ))
records=$(( ($(stat -c %s "$LOGS/index") - 16) / rec_len ))
[ "$records" -ge "$kept" ] && [ "$records" -lt 32 ]
check_err $? "the index holds $records records for $kept logs left of 32"
mv "$LOGS/index" "$TB_TMP/index"
"$DETER" ls -d "$LOGS" --json | diff - "$TB_TMP/ls.json" > /dev/null
check_err $? "deter ls without the index lists otherwise"
mv "$TB_TMP/index" "$LOGS/index"
log_test $CHECK_RC "record_keep: deter ls never failed while logs went ($(cat "$TB_TMP/ls.count" 2>/dev/null)); the index, pruned to $records records, agrees"

# ----- Part 2: --max-age
sleep 6
"$DETER" record -o "$LOGS" --port 5201 --max-age 5 2> "$TB_TMP/record2.err" &
rec=$!
sleep 1
capture_start "$SW" s0 syns2 'tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' || exit $ksft_fail
conn 5201 10
wrc=$?
capture_stop
sleep 0.5
kill -INT $rec
wait $rec
rrc=$?
CHECK_RC=0
check_err $wrc "the workload failed"
check_err $rrc "deter record: $(cat "$TB_TMP/record2.err")"
"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls2.json"
port=$(tcpdump -nr "$TB_TMP/syns2.pcap" 2>/dev/null | sed -n "s/.* $A_IP\.\([0-9]*\) > $B_IP\.5201:.*/\1/p")
[ "$(wc -l < "$TB_TMP/ls2.json")" -eq 2 ] &&
	[ "$(client_port < "$TB_TMP/ls2.json" | sort -u)" = "$port" ]
check_err $? "after --max-age 5, expected the 2 logs of the connection from port $port: $(cat "$TB_TMP/ls2.json")"
grep -q "^deter record: $kept logs removed (.*, $nflagged flagged) by --max-age 5; $LOGS keeps 2 logs, " \
	"$TB_TMP/record2.err"
check_err $? "closing line: $(cat "$TB_TMP/record2.err")"
log_test $CHECK_RC "record_keep: --max-age 5 removed the $kept older logs, flagged ones too, and kept the new connection's"

exit $RET
