#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: bulk transfer from an event loop that polls for room
# before every write: 2 MB from A to B through a 100 Mbit/s, 1 ms link,
# offloads off, A's socket O_NONBLOCK with poll(POLLOUT) before each
# 16 KB send(). tcp_poll() finds the send buffer full and sets
# SOCK_NOSPACE without the socket lock, with no EAGAIN before it: the
# next ACK then grows the buffer (tcp_check_space()). A's log must have
# that mark (VALUE HOST send buffer full), and the replay, whose
# application never polls, the original's egress at both hosts.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '--nonblock' '--bytes 2000000 --nonblock --poll-out'
}

if scenario_record nonblock_pollout; then
	CHECK_RC=0
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	grep -q ": send buffer marked full now 1$" "$TB_TMP/show-a.txt"
	check_err $? "A's log has no send buffer marked full"
	log_test $CHECK_RC "nonblock_pollout: A's log has tcp_check_space()'s marks"
	scenario_replays nonblock_pollout
fi
exit $RET
