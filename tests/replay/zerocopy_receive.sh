#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: B reads A's 1 MB with getsockopt(TCP_ZEROCOPY_RECEIVE) alone,
# as receivers that map or copy the receive queue do, and never calls
# recv(). Those reads reach TCP past deter's call hooks: B's log would
# have their lock turns and no read, a connection whose application
# never read. deter.ko finds, at B's close(), bytes read since the last
# read call it saw, so B's log must be marked incomplete, "unseen-calls"
#, A's must be complete, and deter replay must refuse
# the pair in one line saying why.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '--zerocopy-receive' '--bytes 1000000'
}

zc_calls_check() {
	local n

	CHECK_RC=0
	n=$(sed -n 's/^zerocopy_receives //p' "$TB_TMP/server.out")
	[ "${n:-0}" -gt 0 ] && grep -qx 'received 1000000' "$TB_TMP/server.out" &&
		! grep -qE ' call +recvmsg ' "$TB_TMP/show-b.txt"
	check_err $? "tcpwl: $(tr '\n' ' ' < "$TB_TMP/server.out"); B's recv calls: $(grep -cE ' call +recvmsg ' "$TB_TMP/show-b.txt")"
	log_test $CHECK_RC "zerocopy_receive: B read 1000000 bytes in ${n:-no} TCP_ZEROCOPY_RECEIVE calls, its log has no read"
}

REC_INCOMPLETE_OK=1 scenario_record zerocopy_receive || exit $ksft_fail
unseen_check zerocopy_receive b
zc_calls_check
exit $RET
