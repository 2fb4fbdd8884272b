#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: as splice_read.sh, into a pipe of 4 buffers (16 KiB)
# that B leaves up to 1000 bytes in after every other call, so that the
# next call finds it part full, from a nonblocking socket that B polls
# when a call finds nothing, pausing 1 ms after each read so that bytes
# wait. A sends with sendfile(): its segments hold the file's pages, a
# fragment per page at most, so the pipe's buffers, a fragment each,
# fill before the bytes splice() asks (the room in pages) are moved.
# B's log must have each call's room, 1 to 4 buffers and not always 4,
# and each nonblocking; the replay, whose pipe gets each call's room,
# must be identical to tcpdump's. A replay whose pipe had all its room
# would move more bytes in some call than the original did, and diverge.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '--splice-read --pipe-size 16384 --pipe-keep 1000 --nonblock --read-delay-us 1000' \
		'--sendfile --bytes 1000000'
}

scenario_run splice_read_room splice_read_check splice_read_room 4 nonblock
exit $RET
