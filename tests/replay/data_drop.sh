#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a data drop in a bulk transfer. The switch drops A's
# 100th data segment of a 2 MB transfer; A repairs it by fast retransmit
# after SACKed duplicate ACKs.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--bytes 2000000'
}

CAPTURE_B_IN=1
scenario_run data_drop net_check data_drop 1 0 0
exit $RET
