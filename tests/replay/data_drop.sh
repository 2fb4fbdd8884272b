#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a data drop in a bulk transfer. The switch drops A's
# 100th data segment of a 2 MB transfer; A repairs it by fast retransmit
# after SACKed duplicate ACKs. tcpdump on both sides of the switch must
# agree with both logs: one drop in B's, none in A's.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--bytes 2000000'
}

CAPTURE_IN='a b'
scenario_run data_drop eval 'net_check data_drop b 1 0 0; net_check data_drop a 0 0 0'
exit $RET
