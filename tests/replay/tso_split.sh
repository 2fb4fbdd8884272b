#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: A sends with TSO and GSO on, and the switch splits
# its GSO packets: its egress to B is ecn_dctcp.sh's tbf with
# a RED queue (8 Mbit/s here: a sender slowed by the debug kernel still
# fills it), and tbf segments a packet larger than its burst. B, GRO
# off, receives a segment at a time, some marked CE, 1 MB in all. The
# replay has no switch: A's GSO packets reach B's corrector whole, which
# hands them to deter.ko a segment at a time, and deter.ko rebuilds each
# of B's arrivals in its logged shape. The replay must be identical to
# tcpdump's capture of both hosts' egress.
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

CAPTURE_IN=b
scenario_record tso_split || exit $RET
gso_check
net_check tso_split b 0 0 1
scenario_replays tso_split
exit $RET
