#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: A sends with MSG_ZEROCOPY on a socket with SO_ZEROCOPY and
# reads the completions off its error queue after every send(). Each
# completion is charged to A's receive memory, from which TCP computes
# the window A advertises, until A reads it, unlocked: A's log must say
# which sends were zerocopy and have the error queue's
# reads strace saw, and deter replay must refuse the log in one line
# naming the first such send, rather than replay it as copying sends.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	errqueue_workload zerocopy
}

scenario_record zerocopy || exit $ksft_fail
errqueue_check zerocopy zerocopy
exit $RET
