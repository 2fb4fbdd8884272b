#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: BBR. A sends 2 MB to B with TCP_CONGESTION bbr
# through a 50 Mbit/s, 1 ms link, offloads off. BBR paces every segment
# (TCP's internal pacing: the pacing hrtimer's turns are in the log) and
# models the path from rate samples, whose app-limited marks depend on
# whether the host still holds the socket's packets.

source "$(dirname "$0")/../lib.sh"

scenario_testbed off 50mbit || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 2000000 --cc bbr'
}

scenario_run bbr
exit $RET
