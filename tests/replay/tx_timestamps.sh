#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: A asks for software transmit timestamps (SO_TIMESTAMPING,
# once connected) and reads them off its error queue after every
# send(). TCP marks each send's last byte, which keeps its skb from being
# merged with the next, and each timestamp is charged to A's receive
# memory until read: A's log must say which sends asked for timestamps
# and have the error queue's reads strace saw, and deter
# replay must refuse the log in one line naming the first such send.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	errqueue_workload tx-timestamps
}

scenario_record tx_timestamps || exit $ksft_fail
errqueue_check tx_timestamps tx-timestamps
exit $RET
