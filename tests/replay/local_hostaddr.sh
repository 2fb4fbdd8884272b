#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: both ends on one host, over the host's own address. A
# tcpwl client and server in one namespace talk over the address of its
# interface (a dummy device standing in for a NIC), 20 RPCs of 500 B
# answered with 5000 B: the route to a local address goes out of lo, at
# lo's MTU (65536; 65535 for the route), each segment the sender's skb
# handed to the receiver. deter replays the pair on one host over lo, and
# each end's egress on lo (the capture split by port) must be the
# original's. local_bulk.sh moves 1 MB.
#
#   host L: h0 10.0.3.1/24 (dummy)
#           tcpwl client 10.0.3.1:port --lo-- 10.0.3.1:5201 tcpwl server
#           cap:lo

source "$(dirname "$0")/lib.sh"

local_testbed 10.0.3.1 || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 500:5000' '--rpc 20:500:5000'
}

scenario_run local_hostaddr local_check local_hostaddr 10.0.3.1
premise_truth local_hostaddr b ", length 5000$" "B answer in segments of 5000 bytes, more than an Ethernet MTU"
exit $RET
