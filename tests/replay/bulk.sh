#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: bulk transfer, 2 MB from A to B through a 100 Mbit/s,
# 1 ms link, offloads off.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 2000000'
}

scenario_run bulk
exit $RET
