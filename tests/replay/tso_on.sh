#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: TSO, GSO and GRO on. A 1 MB transfer from A whose
# segments leave as TSO super-packets.

source "$(dirname "$0")/lib.sh"

scenario_testbed on 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 1000000'
}

scenario_run tso_on premise_tso tso_on
exit $RET
