#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: both ends on one host, over loopback. A tcpwl client
# and server in one namespace talk over 127.0.0.1 (20 RPCs of 200 B
# answered with 2000 B), as a local database client or a sidecar proxy
# does; deter replays the pair on one host over lo, and each end's egress
# on lo (the capture split by port) must be the original's.
#
#   host L: tcpwl client 127.0.0.1:port --lo-- 127.0.0.1:5201 tcpwl server
#           cap:lo

source "$(dirname "$0")/lib.sh"

local_testbed 127.0.0.1 || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000' '--rpc 20:200:2000'
}

scenario_run local_loopback local_check local_loopback 127.0.0.1
exit $RET
