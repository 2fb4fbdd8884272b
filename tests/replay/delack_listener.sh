#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a listener with TCP_QUICKACK 0, as haproxy's: the
# accepted socket starts in delayed-ACK (pingpong) mode, inherited from
# the listener before the application ever sees it, so B leaves the
# first request's ACK for its response to carry where a socket of its
# own would ACK at once. RPC, 20 requests of 200 B answered with 2000 B,
# 1 ms each way, offloads off. B's log must say it started so; the
# replay's listener has no TCP_QUICKACK 0, so deter.ko must start B's end
# as B did. (Whether B's first ACK waited shows in tcpdump only when B
# answered within the 40 ms delayed-ACK timeout, printed as a note.)

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000 --delack' '--rpc 20:200:2000'
}

delack_check() {
	local b_id first

	b_id=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	"$DETER" show -d "$LOGS" "$b_id" | grep -q "^started .*, delayed ACKs (pingpong [1-9][0-9]*)$"
	log_test $? "delack_listener: B's log ($b_id) starts in delayed-ACK mode"
	first=$(tcpdump -nr "$TB_TMP/b0.pcap" "tcp[tcpflags] & tcp-syn == 0" 2>/dev/null | head -1)
	echo "# delack_listener: B's first segment after its SYN-ACK: ${first:-none}"
}

scenario_run delack_listener delack_check
exit $RET
