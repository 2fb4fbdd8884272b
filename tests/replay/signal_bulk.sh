#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: waits for send space that a signal ends. 2 MB from A to B
# through a 100 Mbit/s, 1 ms link, offloads off, in 64 KB writes into a
# 16 KB send buffer, with SIGALRM every 2 ms at both ends (an interval
# timer, a handler that does not restart calls): a send() that waits for
# room returns what it had queued, or EINTR if nothing, and a recv()
# that waits for data returns EINTR. Each end's log must have the calls
# = EINTR tcpwl counted, and the replays must be identical to the
# original (the replay's application gets no signals).

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '--signal-us 2000' \
		   '--bytes 2000000 --write-size 65536 --sndbuf 16384 --signal-us 2000'
}

scenario_run signal_bulk calls_check signal_bulk eintr -512
exit $RET
