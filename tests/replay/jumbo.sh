#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: jumbo frames. Every link of the testbed has an MTU of
# 9000, so both ends offer and use an MSS of 8960 (8948 with
# timestamps). The route's MTU is logged with the device's offloads
# (CONFIG OFFLOAD); the replay testbed's veth must get it, or its
# handshake agrees on 1460 and deter replay reports that. The log must
# have the MTU and the MSS tcpdump saw; the replay must match tcpdump.
# 1 MB from A to B, 100 Mbit/s, 1 ms each way, offloads off.

source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail
ip -n "$A" link set a0 mtu 9000 && ip -n "$B" link set b0 mtu 9000 &&
	ip -n "$SW" link set s0 mtu 9000 && ip -n "$SW" link set s1 mtu 9000
log_test $? "jumbo: every link at MTU 9000"

workload() {
	tcpwl_pair '' '--bytes 1000000'
}

if scenario_record jumbo; then
	CHECK_RC=0
	mss=$(sed -n '1s/.*mss \([0-9]*\).*/\1/p' "$TB_TMP/a.truth")
	[ "$mss" = 8960 ]
	check_err $? "A's SYN offered MSS '$mss', not 8960"
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	grep -q "^ *[0-9]*  config     offload tso off gso off gro off, mtu 9000$" "$TB_TMP/show-a.txt"
	check_err $? "A's log has no MTU 9000: $(grep offload "$TB_TMP/show-a.txt" | head -2)"
	grep -q ", mss 8948, " "$TB_TMP/show-a.txt"
	check_err $? "A's log has $(grep -o 'mss [0-9]*' "$TB_TMP/show-a.txt" | head -1), not mss 8948"
	log_test $CHECK_RC "jumbo: A's log has the route's MTU and the MSS tcpdump saw"
	scenario_replays jumbo
fi
exit $RET
