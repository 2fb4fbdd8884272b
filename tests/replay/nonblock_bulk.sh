#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: bulk transfer as an event loop makes it, 2 MB from A
# to B through a 100 Mbit/s, 1 ms link, offloads off: both sockets
# O_NONBLOCK, 64 KB writes until EAGAIN, poll() for room or data before
# the next call. tcp_poll() sets SOCK_NOSPACE on a full send buffer
# without the socket lock (it decides whether the next ACK grows the
# buffer); here, as in any loop that writes until EAGAIN, the sendmsg()
# that said EAGAIN set it first, under the lock.
# Each end's log must have every call = EAGAIN tcpwl counted there.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '--nonblock' '--bytes 2000000 --write-size 65536 --nonblock'
}

scenario_run nonblock_bulk calls_check nonblock_bulk eagain -11
exit $RET
