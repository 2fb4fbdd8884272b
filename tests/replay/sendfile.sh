#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: A sends 2 MB with sendfile() (64 KiB at a time, from
# a memfd), over 100 Mbit/s with its 100th data segment dropped.
# sendfile() reaches TCP as a sendmsg() that splices the file's pages
# into the segments (MSG_SPLICE_PAGES) instead of copying them. A's log
# must have every send spliced, 2000000 bytes in all; the replay splices
# them too (replayed as send()s, TCP copied them into its own page
# fragments, and the replay diverged at once).
source "$(dirname "$0")/lib.sh"

# spliced_check: A's sends are all spliced and add up to the transfer.
spliced_check() {
	CHECK_RC=0
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	awk '/ call +sendmsg bytes / { n++; b += $5; if ($0 ~ /\(spliced\)/) s++ }
	     END { printf "%d %d %d\n", n, s, b }' "$TB_TMP/show-a.txt" > "$TB_TMP/spliced"
	read -r n s b < "$TB_TMP/spliced"
	[ "$n" -gt 0 ] && [ "$n" = "$s" ] && [ "$b" = 2000000 ]
	check_err $? "A's log has $n sends, $s spliced, $b bytes"
	log_test $CHECK_RC "sendfile: A's log has its $n sends spliced, 2000000 bytes"
}

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--sendfile --write-size 65536 --bytes 2000000'
}

scenario_run sendfile spliced_check
exit $RET
