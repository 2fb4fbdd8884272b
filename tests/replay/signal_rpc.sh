#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: blocking calls that a signal ends. Both ends of an RPC
# connection (200 requests of 100 B, answers of 20 KB) get SIGALRM
# every 3 ms from an interval timer, with a handler that does not
# restart calls, as applications with timers or profilers do: a recv()
# waiting for a request or an answer returns EINTR, or fewer bytes than
# it could have, and is made again. Each end's log must have the calls
# = EINTR tcpwl counted, and the replays must be identical to the
# original (the replay's application gets no signals).

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 100:20000 --signal-us 3000' \
		   '--rpc 200:100:20000 --signal-us 3000'
}

scenario_run signal_rpc calls_check signal_rpc eintr -512
exit $RET
