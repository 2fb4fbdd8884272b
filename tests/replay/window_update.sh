#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario (DETER §5.3): a large receive buffer and a reader that
# takes small bites, so B sends window updates that carry no new data
# and must not count as duplicate ACKs, while the switch drops A's 60th
# data segment of a 1 MB transfer.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 60

workload() {
	tcpwl_pair '--rcvbuf 4000000 --read-size 4000 --read-delay-us 300' \
		'--bytes 1000000'
}

scenario_run window_update
exit $RET
