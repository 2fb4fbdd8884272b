#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: A reads its socket's error queue after every send(), as
# applications that use MSG_ZEROCOPY or transmit timestamps do, but asks
# for neither, so every read finds it empty. A's log must have each read
# strace saw (patch 0022), every one
# returning EAGAIN, and the replay, which leaves them out (they change
# nothing TCP reads and take no lock), must match tcpdump as any other.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	errqueue_workload poll
}

scenario_record errqueue_poll || exit $ksft_fail
errqueue_check errqueue_poll poll
exit $RET
