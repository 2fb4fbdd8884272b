#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: B reads A's 1 MB with splice() into a pipe, as a proxy
# does, emptying the pipe after each call; A's 100th segment is dropped.
# B's log must have each of those calls, as many as tcpwl made, with the
# bytes tcpwl received (patch 0021), not just their lock turns, and the
# room of the pipe each filled (patch 0023): how many bytes a call moves
# depends on it, TCP adding a pipe buffer per fragment until the pipe is
# full. The replay's generator gives its own pipe that room.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '--splice-read' '--bytes 1000000'
}

scenario_run splice_read splice_read_check splice_read 16
exit $RET
