#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario (DETER §5.3): too few duplicate ACKs for fast
# retransmit. B answers each request with a 3-segment response; the
# switch drops the first segment of the 11th response, so A can send at
# most two duplicate ACKs and B has to find the loss another way (RACK's
# reorder timer, a tail loss probe, or the retransmission timer).

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
switch_drop_nth "$B_IP" 31

workload() {
	tcpwl_pair '--rpc 100:4000' '--rpc 20:100:4000'
}

scenario_run few_dupacks
exit $RET
