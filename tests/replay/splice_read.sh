#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: B reads A's 1 MB with splice() into a pipe, as a proxy does,
# emptying the pipe after each call. B's log must have each of those
# calls, as many as tcpwl made, with the bytes tcpwl received (patch
# 0021; before, it had their lock turns only, an application that never
# read). The replay cannot give its pipe the room the original's had,
# on which the bytes each call moved depend: deter replay refuses the
# log, naming the event, rather than diverge partway.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '--splice-read' '--bytes 1000000'
}

splice_read_check() {
	local peer calls got bytes

	CHECK_RC=0
	peer=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	"$DETER" show -d "$LOGS" "$peer" > "$TB_TMP/show-b.txt"
	calls=$(grep -cE " call +splice_read bytes " "$TB_TMP/show-b.txt")
	bytes=$(awk '/ return +splice_read = / { s += $NF } END { print s + 0 }' "$TB_TMP/show-b.txt")
	got=$(sed -n 's/^splice_reads //p' "$TB_TMP/server.out")
	[ -n "$got" ] && [ "$calls" = "$got" ] && [ "$bytes" = 1000000 ] &&
		! grep -qE " call +recvmsg " "$TB_TMP/show-b.txt"
	check_err $? "B's log has $calls splice reads (tcpwl made ${got:-?}) returning $bytes bytes"
	log_test $CHECK_RC "splice_read: B's log has the ${got:-?} splice() calls tcpwl made, 1000000 bytes"

	replay_refused splice_read "event [0-9]*: splice() from the socket cannot be replayed"
}

scenario_record splice_read || exit $ksft_fail
splice_read_check
exit $RET
