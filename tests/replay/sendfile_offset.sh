#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: as sendfile.sh, from offset 1000 of the file on. Each
# 64 KiB sendfile() spans 17 pages and reaches TCP as two spliced
# sends (the kernel's pipe holds 16): 64536 bytes from offset 1000 of a
# page, then 1000 from offset 0 of the next; the next call's bytes go on
# in that page, where TCP merges them into the fragment the last ones
# ended. A's log must have the pages of every send, the first from
# offset 1000, some going on from the last: a replay that laid the bytes
# out from page boundaries would diverge.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--sendfile-at 1000 --write-size 65536 --bytes 2000000'
}

scenario_run sendfile_offset spliced_check sendfile_offset 2000000 1000 some
exit $RET
