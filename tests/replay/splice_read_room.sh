#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: as splice_read.sh, into a pipe of 4 buffers (16 KiB)
# that B leaves up to 1000 bytes in after every other call, so that the
# next call finds it part full and stops when it is full, from a
# nonblocking socket that B polls when a call finds nothing. B's log
# must have each call's room, 1 to 4 buffers and not always 4, and each
# nonblocking; the replay, whose pipe gets each call's room, must be
# identical to tcpdump's.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '--splice-read --pipe-size 16384 --pipe-keep 1000 --nonblock' '--bytes 1000000'
}

scenario_run splice_read_room splice_read_check splice_read_room 4 nonblock
exit $RET
