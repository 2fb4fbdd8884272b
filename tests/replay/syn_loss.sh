#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: SYN loss during setup. The switch drops A's first SYN;
# A retransmits it after its initial RTO (1 s), then runs 5 RPCs.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_first_syn "$A_IP"

workload() {
	tcpwl_pair '--rpc 200:2000' '--rpc 5:200:2000'
}

scenario_run syn_loss
exit $RET
