#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: RPC as an event loop makes it, 20 requests of 200 B
# answered with 2000 B, 1 ms each way, offloads off: both sockets
# O_NONBLOCK, reads until EAGAIN and poll() before the next call.
# Each end's log must have every call = EAGAIN tcpwl counted there.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000 --nonblock' '--rpc 20:200:2000 --nonblock'
}

scenario_run nonblock_rpc calls_check nonblock_rpc eagain -11
exit $RET
