#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: ECN with DCTCP and RED marking. Both ends run DCTCP
# (a listener that does not run it refuses the ECT SYN DCTCP sends, and A falls
# back to Reno without ECN); the switch's egress to B is a 20 Mbit/s
# link whose RED queue marks CE above a small threshold, during a 1 MB
# transfer from A. B's log must have the marks tcpdump saw reach B, and
# the replay's B must see them where the original's did: in the IP
# header alone, the payload left where it was.

source "$(dirname "$0")/lib.sh"

ecn_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--cc dctcp' '--cc dctcp --bytes 1000000'
}

CAPTURE_IN=b
scenario_run ecn_dctcp net_check ecn_dctcp b 0 0 1
exit $RET
