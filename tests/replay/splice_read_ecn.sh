#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: splice_read_room.sh's reader (a 4-buffer pipe left
# part full every other call, a nonblocking socket, 1 ms pauses) behind
# ecn_dctcp.sh's switch, a 20 Mbit/s RED queue that marks CE, both ends
# running DCTCP. A CE mark must reach B's stack as the switch's did, in
# the IP header alone: splice() hands a segment's page fragments over as
# pipe buffers but copies bytes held in its head, so a replay that
# carried the payload of a marked segment in the head would fill the
# pipe otherwise.
source "$(dirname "$0")/lib.sh"

ecn_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--cc dctcp --splice-read --pipe-size 16384 --pipe-keep 1000 --nonblock --read-delay-us 1000' \
		'--cc dctcp --sendfile --bytes 1000000'
}

CAPTURE_IN=b
scenario_run splice_read_ecn eval 'splice_read_check splice_read_ecn 4 nonblock; net_check splice_read_ecn b 0 0 1'
exit $RET
