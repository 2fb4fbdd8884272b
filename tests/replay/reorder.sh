#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: reordering. The switch holds back a quarter of A's
# segments by 2 ms (netem reorder) during a 1 MB transfer: B sees them
# late, SACKs the gaps, and A's RACK/dupACK threshold adapts (§5.2).

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_queue s1 netem delay 2ms reorder 75% 50% limit 100000

workload() {
	tcpwl_pair '' '--bytes 1000000'
}

CAPTURE_IN=b
scenario_run reorder net_check reorder b 0 1 0
exit $RET
