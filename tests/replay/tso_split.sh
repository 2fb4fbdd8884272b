#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: A sends with TSO and GSO on, and the switch splits
# its GSO packets: its egress to B is ecn_dctcp.sh's tbf with
# a RED queue (8 Mbit/s here: a sender slowed by the debug kernel still
# fills it), and tbf segments a packet larger than its burst. B, GRO
# off, receives a segment at a time, some marked CE, 1 MB in all. The
# replay has no switch: A's GSO packets reach B's corrector whole, and
# it cannot split them (NFQUEUE's own segmentation would copy each
# segment's payload into its head, which B charges otherwise). deter
# replay must say so at the first such packet, naming it.
source "$(dirname "$0")/lib.sh"

ecn_testbed on 8mbit || exit $ksft_fail
offload "$B" b0 off

# gso_check: A sent GSO packets (tcpdump at A's egress sees packets
# longer than the MTU) and B's log has only arrivals of one segment.
gso_check() {
	local big multi

	CHECK_RC=0
	big=$(gso_sent "$TB_TMP/a0.pcap")
	multi=$(log_arrivals "$(log_id "$B_IP:5201" "$A_IP:[0-9]*")" | awk '$2 > 1' | wc -l)
	[ "$big" -gt 0 ] && [ "$multi" = 0 ]
	check_err $? "A sent $big GSO packets, B's log has $multi arrivals of several segments"
	log_test $CHECK_RC "tso_split: A sent $big GSO packets, B received them a segment at a time"
}

workload() {
	tcpwl_pair '--cc dctcp' '--cc dctcp --bytes 1000000'
}

# split_check: deter replay stops at B's network, in one line naming the
# packet its corrector cannot split, within the hold timeout.
split_check() {
	local rc t0 t1

	CHECK_RC=0
	t0=$(date +%s%N)
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" > "$TB_TMP/replay.out" 2>&1
	rc=$?
	t1=$(date +%s%N)
	[ $rc = 1 ] && [ "$(wc -l < "$TB_TMP/replay.out")" = 1 ] &&
		grep -q "^replay $ID: stopped at the passive end's network: corrector b: flow $A_IP:[0-9]* > $B_IP:5201: index [0-9]* arrives as a GSO packet, which the original's network split into segments" \
			"$TB_TMP/replay.out"
	check_err $? "deter replay exited $rc: $(head -3 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "tso_split: deter replay stops at B's network, naming the split packet ($(( (t1 - t0) / 1000000 )) ms)"
}

CAPTURE_IN=b
scenario_record tso_split && gso_check && net_check tso_split b 0 0 1 && split_check
exit $RET
