#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: the handshake's last ACK arrives late. The switch
# holds A's first pure ACK (the one completing the handshake) back by
# 20 ms, so A's first data segments reach B's listener before it: the
# first creates B's connection (it carries the ACK), and the handshake's
# ACK then arrives at the established socket as an old duplicate. A
# client that sends as soon as connect() returns sends its ACK from
# softirq and its data from the process, and on two CPUs the two can
# cross on their way to B even without a switch that holds one back.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_delay_first_ack "$A_IP" s1 20ms || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 200000'
}

CAPTURE_IN=b
scenario_run handshake_late_ack net_check handshake_late_ack b 0 1 0
exit $RET
