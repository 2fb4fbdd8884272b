#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Clients that hang up mid-response (wl_nginx_abort in lib.sh): curl
# fetches nginx's 1 MiB file into head, which exits after 64 KiB, and curl,
# its output gone, exits with the rest of the response unread. Its close()
# resets the connection, and the segments nginx still had on their way
# reach a socket gone: the host answers each with a reset of its own.
# Every connection recorded is replayed against tcpdump's ground truth.

source "$(dirname "$0")/lib.sh"

app_testbed clean || exit $ksft_fail

workload() {
	wl_nginx_abort 2
}

# The premise: A reset each connection, and segments that came after
# A's socket was gone drew resets from A's host (no ACK flag, IP ID 0).
premise() {
	local rst late

	rst=$(tcpdump -r "$TB_TMP/a0.pcap" -nn "src $A_IP and tcp[tcpflags] & tcp-rst != 0" 2>/dev/null |
		wc -l)
	late=$(tcpdump -r "$TB_TMP/a0.pcap" -nn -v \
		"src $A_IP and tcp[tcpflags] & (tcp-rst|tcp-ack) == tcp-rst" 2>/dev/null | grep -c "id 0,")
	[ "$rst" -ge 4 ] && [ "$late" -ge 1 ]
	log_test $? "$1: A reset its connections ($rst resets), $late of them answers to segments after its socket was gone"
}

app_run nginx_abort 80
exit $RET
