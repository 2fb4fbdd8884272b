#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deter record with ring buffers too small for the events it is sent:
#
#   A (10.0.1.1) a0 ---- [switch] ---- b0 B (10.0.2.1)
#        20 MB at full speed (no link delay), deter record --buffer-kb 64
#
# 64 KiB per CPU holds a small part of the events this transfer makes
# (offloads off: an event per segment), and deter record is stopped
# (SIGSTOP) while it runs, so that it drains nothing however slow the
# sender: the buffers overrun, on every run. That must show,
# never a log that is silently short. Checks, with the buffers mapped
# and with read() (DETER_RECORD_NO_MMAP=1): deter record counts the lost
# events and exits 1; a log says it lost events (incomplete,lost-events;
# one that lost only its identity says no-identity); deter replay refuses
# every incomplete log; a log that says complete has calls that moved
# every byte the transfer moved (tcpwl's count, not deter's).

source "$(dirname "$0")/lib.sh"

DETER=$TB_TOP/bin/deter
BYTES=20000000

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off

for how in mapped read; do
	logs=$TB_TMP/logs-$how
	DETER_RECORD_NO_MMAP=$([ $how = read ] && echo 1 || echo 0) \
		"$DETER" record -o "$logs" --port 5201 --buffer-kb 64 2> "$TB_TMP/rec-$how.err" &
	rec=$!
	sleep 1
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > /dev/null &
	srv=$!
	wait_listen "$B" 5201 || exit $ksft_fail
	kill -STOP $rec
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes $BYTES > /dev/null
	wait $srv
	kill -CONT $rec
	sleep 0.5
	kill -INT $rec
	wait $rec
	rrc=$?

	CHECK_RC=0
	lost=$(sed -n 's/.*; [0-9]* events read, \([0-9]*\) lost$/\1/p' "$TB_TMP/rec-$how.err")
	[ "$rrc" -eq 1 ] && [ "${lost:-0}" -gt 0 ]
	check_err $? "deter record exited $rrc, '${lost}' lost: $(tail -2 "$TB_TMP/rec-$how.err")"
	"$DETER" ls -d "$logs" --json > "$TB_TMP/ls-$how.json"
	[ "$(wc -l < "$TB_TMP/ls-$how.json")" -eq 2 ]
	check_err $? "expected 2 logs: $(cat "$TB_TMP/ls-$how.json")"
	short=0
	while read -r line; do
		id=$(echo "$line" | ls_field id)
		status=$(echo "$line" | ls_field status)
		case "$status" in
		complete)
			# Every byte moved, by the calls' returns (A sends, B receives).
			call=$(echo "$line" | grep -q "\"local\":\"$A_IP:" && echo sendmsg || echo recvmsg)
			bytes=$("$DETER" show -d "$logs" "$id" |
				awk -v c=$call '$2 == "return" && $3 == c && $5 > 0 { n += $5 }
					END { print n + 0 }')
			[ "$bytes" = $BYTES ]
			check_err $? "log $id says complete, its ${call}() calls moved $bytes of $BYTES bytes"
			;;
		incomplete,*)
			# The events lost, or the identity (no-identity) if only it.
			case "$status" in *lost-events*) short=$((short + 1)) ;; esac
			"$DETER" replay -d "$logs" "$id" -o "$TB_TMP/replay-$how" \
				> "$TB_TMP/replay-$how.out" 2>&1
			[ $? -ne 0 ] &&
				grep -q "incomplete log (.*): cannot replay" "$TB_TMP/replay-$how.out"
			check_err $? "deter replay of $id ($status): $(tail -2 "$TB_TMP/replay-$how.out")"
			;;
		*)
			check_err 1 "log $id: status '$status'"
			;;
		esac
	done < "$TB_TMP/ls-$how.json"
	[ $short -ge 1 ]
	check_err $? "no log says it lost events"
	log_test $CHECK_RC "record_overrun: 64 KiB buffers, $how: ${lost:-?} events lost and counted, $short of 2 logs say lost-events, incomplete ones refused by deter replay, complete ones whole"
done

exit $RET
