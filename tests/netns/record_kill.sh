#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deter record killed in the middle of a connection: what it had written
# of it is kept, and the next deter record in that directory makes logs
# of it, marked incomplete:
#
#   A (10.0.1.1) a0 ---- [switch] ---- b0 B (10.0.2.1)
#        strace client: 400 requests of 200 B, answers of 2000 B
#
# deter record runs with small chunks (32 events, 256 B encoded, part
# files written every 512 B) and is sent SIGKILL after a second. Checks:
# deter ls --open listed both connections while it ran; it left part
# files; deter record started again turns them into logs
# (no part file left, both in the index) marked incomplete and not
# closed; A's log holds the first of the socket calls strace saw, in
# order, with their sizes and results; deter replay refuses the log. The
# killed recorder's tracefs instance is taken over; a live recorder's is
# not: a second deter record is refused.

source "$(dirname "$0")/lib.sh"

DETER=$TB_TOP/bin/deter
LOGS=$TB_TMP/logs
RPCS=400

testbed_create || exit $ksft_fail
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms

# record_rpcs DIR ERR [VAR=VALUE...]: deter record into DIR (stderr to
# ERR, small chunks, the VARs in its environment), and $RPCS RPCs under
# strace from A to B; sets rec, srv and cli, all running.
record_rpcs() {
	env DETER_RECORD_CHUNK_EVENTS=32 DETER_RECORD_CHUNK_BYTES=256 \
		DETER_RECORD_SPILL_BYTES=512 "${@:3}" \
		"$DETER" record -o "$1" --port 5201 2> "$2" &
	rec=$!
	sleep 1
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" --rpc 200:2000 > /dev/null &
	srv=$!
	wait_listen "$B" 5201 || exit $ksft_fail
	ip netns exec "$A" strace -qq -e trace=sendto,recvfrom -o "$TB_TMP/client.strace" \
		"$TCPWL" client -c "$B_IP" --rpc $RPCS:200:2000 > /dev/null &
	cli=$!
}

record_rpcs "$LOGS" "$TB_TMP/record.err"
sleep 1
"$DETER" ls -d "$LOGS" --open --json > "$TB_TMP/open.json" 2>&1
orc=$?
kill -KILL $rec
wait $rec 2>/dev/null
wait $cli
wait $srv

# --- while it ran: deter ls --open listed both connections, "open"
CHECK_RC=0
check_err $orc "deter ls --open: $(cat "$TB_TMP/open.json")"
[ "$(grep -c '"status":"open"' "$TB_TMP/open.json")" -eq 2 ]
check_err $? "deter ls --open did not list 2 open connections: $(cat "$TB_TMP/open.json")"
a_part=$(sed -n "s/.*\"local\":\"$A_IP:.*\"file\":\"\([^\"]*\)\".*/\1/p" "$TB_TMP/open.json")
[ -n "$a_part" ] && "$DETER" show "$a_part" | grep -q ' call '
check_err $? "deter show of A's part file ($a_part) shows no calls"
log_test $CHECK_RC "record_kill: deter ls --open lists the connections being recorded"

CHECK_RC=0
parts=$(find "$LOGS" -name '.*.dlog.part' | wc -l)
[ "$parts" -eq 2 ]
check_err $? "the killed recorder left $parts part files, not 2: $(ls -a "$LOGS")"
"$DETER" record -o "$LOGS" --port 5201 --duration 1 2> "$TB_TMP/record2.err"
check_err $? "deter record again: $(cat "$TB_TMP/record2.err")"
grep -q "2 logs of connections open when a recorder was killed made from their part files" \
	"$TB_TMP/record2.err"
check_err $? "deter record did not say it made 2 logs: $(cat "$TB_TMP/record2.err")"
grep -q "removed tracefs instance 'deter', left by a deter record that was killed" \
	"$TB_TMP/record2.err"
check_err $? "deter record did not take over the killed one's instance: $(cat "$TB_TMP/record2.err")"
[ -z "$(find "$LOGS" -name '.*.dlog.part')" ]
check_err $? "part files left: $(ls -a "$LOGS")"
"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls.json"
check_err $? "deter ls failed"
[ "$(grep -c '"status":"incomplete,not-closed"' "$TB_TMP/ls.json")" -eq 2 ]
check_err $? "expected 2 logs, incomplete and not closed: $(cat "$TB_TMP/ls.json")"
mv "$LOGS/index" "$TB_TMP/index"
"$DETER" ls -d "$LOGS" --json | diff - "$TB_TMP/ls.json" > /dev/null
check_err $? "the index did not list the recovered logs as they are"
mv "$TB_TMP/index" "$LOGS/index"
log_test $CHECK_RC "record_kill: a killed recorder's part files became logs, incomplete"

# A's log in $1 (deter ls --json: $2) holds the first of the socket calls
# strace saw in $TB_TMP/client.strace, in order; sets a_id, n and all.
check_calls_prefix()
{
	a_id=$(sed -n "s/.*\"id\":\"\([0-9a-f]*\)\",\"local\":\"$A_IP:.*/\1/p" "$2")
	"$DETER" show -d "$1" "$a_id" > "$TB_TMP/a.show"
	check_err $? "deter show of A's log failed"
	awk '$2 == "call" { c = $3; n = $5 } $2 == "return" { print c, n, $5 }' \
		"$TB_TMP/a.show" > "$TB_TMP/a.calls"
	sed -n 's/^sendto([0-9]*, .*, \([0-9]*\), [^,]*, [^,]*, [^)]*) *= \(-\{0,1\}[0-9]*\).*/sendmsg \1 \2/p;
		s/^recvfrom([0-9]*, .*, \([0-9]*\), [^,]*, [^,]*, [^)]*) *= \(-\{0,1\}[0-9]*\).*/recvmsg \1 \2/p' \
		"$TB_TMP/client.strace" > "$TB_TMP/strace.calls"
	n=$(wc -l < "$TB_TMP/a.calls")
	all=$(wc -l < "$TB_TMP/strace.calls")
	[ "$n" -gt 10 ] && [ "$n" -lt "$all" ]
	check_err $? "A's log has $n of the $all calls strace saw"
	head -n "$n" "$TB_TMP/strace.calls" | diff - "$TB_TMP/a.calls" > "$TB_TMP/calls.diff"
	check_err $? "A's calls are not strace's first $n: $(head -4 "$TB_TMP/calls.diff")"
}

# --- A's log: a prefix of the socket calls strace saw
CHECK_RC=0
check_calls_prefix "$LOGS" "$TB_TMP/ls.json"
log_test $CHECK_RC "record_kill: A's log holds the first $n of $all socket calls, as strace saw them"

CHECK_RC=0
"$DETER" replay -d "$LOGS" "$a_id" -o "$TB_TMP/replay" > "$TB_TMP/replay.out" 2>&1
[ $? -ne 0 ] && grep -q "incomplete log (not-closed): cannot replay" "$TB_TMP/replay.out"
check_err $? "deter replay of the partial log: $(tail -2 "$TB_TMP/replay.out")"
log_test $CHECK_RC "record_kill: deter replay refuses the partial log"

# --- while one deter record runs, another is refused, naming it
CHECK_RC=0
"$DETER" record -o "$TB_TMP/logs3" --duration 3 2> "$TB_TMP/record3.err" &
rec=$!
sleep 1
"$DETER" record -o "$TB_TMP/logs4" --duration 1 2> "$TB_TMP/record4.err"
rc=$?
wait $rec
check_err $? "the first deter record failed: $(cat "$TB_TMP/record3.err")"
[ $rc -eq 1 ] && grep -q "^deter record: another deter record is running (pid $rec, " \
	"$TB_TMP/record4.err"
check_err $? "a second deter record exited $rc: $(cat "$TB_TMP/record4.err")"
log_test $CHECK_RC "record_kill: a second deter record is refused while one runs"

# --- a connection longer than a log holds (here 2000 events): its log
# ends there, marked cut, a whole prefix; deter record carries on.
CHECK_RC=0
LOGS5=$TB_TMP/logs5
record_rpcs "$LOGS5" "$TB_TMP/record5.err" DETER_RECORD_LOG_EVENTS=2000
wait $cli
wait $srv
sleep 0.5
kill -INT $rec
wait $rec
check_err $? "deter record: $(cat "$TB_TMP/record5.err")"
[ "$(grep -c "its log is full; the rest of the connection is not recorded" \
	"$TB_TMP/record5.err")" -eq 2 ]
check_err $? "deter record did not say both logs were full: $(cat "$TB_TMP/record5.err")"
"$DETER" ls -d "$LOGS5" --json > "$TB_TMP/ls5.json"
[ "$(grep -c '"status":"incomplete,cut"' "$TB_TMP/ls5.json")" -eq 2 ]
check_err $? "expected 2 logs, incomplete and cut: $(cat "$TB_TMP/ls5.json")"
[ -z "$(find "$LOGS5" -name '.*.dlog.part')" ]
check_err $? "part files left: $(ls -a "$LOGS5")"
check_calls_prefix "$LOGS5" "$TB_TMP/ls5.json"
nev=$("$DETER" show --stats -d "$LOGS5" "$a_id" | awk '$1 == "events" { print $2 }')
[ "${nev:-0}" -gt 1900 ] && [ "$nev" -le 2000 ]
check_err $? "A's log holds ${nev:-no} events, not up to 2000"
"$DETER" replay -d "$LOGS5" "$a_id" -o "$TB_TMP/replay5" > "$TB_TMP/replay5.out" 2>&1
[ $? -ne 0 ] && grep -q "incomplete log (cut): cannot replay" "$TB_TMP/replay5.out"
check_err $? "deter replay of the cut log: $(tail -2 "$TB_TMP/replay5.out")"
log_test $CHECK_RC "record_kill: a log past 2000 events is cut there, the first $n of $all calls"

exit $RET
