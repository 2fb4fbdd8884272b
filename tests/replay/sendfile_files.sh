#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: A sends 200 files of 10000 bytes with sendfile(), as a
# server answers requests for them, each from offset 1000 of the same
# memfd, over 100 Mbit/s with its 100th data segment dropped. Each file
# is one spliced send from offset 1000 of its first page, none going on
# from the last (the last ended at offset 2808 of another page). A
# replay that took the bytes as one file sent front to back would put
# every file but the first elsewhere in its pages.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--sendfile-each --sendfile-at 1000 --write-size 10000 --bytes 2000000'
}

scenario_run sendfile_files spliced_check sendfile_files 2000000 1000 none
exit $RET
