#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: A sends 2 MB with sendfile() (64 KiB at a time, from
# a memfd), over 100 Mbit/s with its 100th data segment dropped.
# sendfile() reaches TCP as a sendmsg() that splices the file's pages
# into the segments (MSG_SPLICE_PAGES) instead of copying them. A's log
# must have every send spliced, 2000000 bytes in all, with its pages
# from offset 0 of a page; the replay splices them too (replayed as
# send()s, TCP copied them into its own page fragments, and the replay
# diverged at once).
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--sendfile --write-size 65536 --bytes 2000000'
}

scenario_run sendfile spliced_check sendfile 2000000 0 none
exit $RET
