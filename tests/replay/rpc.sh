#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: RPC over one persistent connection, 20 requests of
# 200 B answered with 2000 B, 1 ms each way, offloads off.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000' '--rpc 20:200:2000'
}

scenario_run rpc
exit $RET
