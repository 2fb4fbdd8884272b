#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a data center's offloads. A sends with TSO and GSO
# on; the switch's link to B has neither, so each of A's GSO packets
# leaves it a frame per segment, as a NIC's TSO puts it on the wire; B's
# GRO (on: veth receives by NAPI then) merges the frames one poll finds,
# 1 MB in all, not always as A's packets grouped them. The replay has
# no switch: A's GSO packets reach B's corrector whole, which hands them
# to deter.ko a segment at a time, and deter.ko rebuilds each of B's
# arrivals as B's GRO made it, in its logged shape. The replay must be
# identical to tcpdump's capture of both hosts' egress.
source "$(dirname "$0")/lib.sh"

scenario_testbed on || exit $ksft_fail
offload "$SW" s1 off

# regroup_check: A sent GSO packets and B's GRO merged frames; REGROUPED
# is how many of B's arrivals (first IP ID, segments; the one that
# created B's end too) are none of A's packets.
regroup_check() {
	local big multi

	CHECK_RC=0
	big=$(gso_sent "$TB_TMP/a0.pcap")
	log_arrivals "$(log_id "$B_IP:5201" "$A_IP:[0-9]*")" > "$TB_TMP/b.arrivals"
	multi=$(awk '$2 > 1' "$TB_TMP/b.arrivals" | wc -l)
	net_ids "$TB_TMP/a0.pcap" | awk '{ print $1, $7 }' > "$TB_TMP/a.packets"
	REGROUPED=$(awk 'NR == FNR { sent[$1 " " $2] = 1; next } !(($1 " " $2) in sent)' \
		"$TB_TMP/a.packets" "$TB_TMP/b.arrivals" | wc -l)
	[ "$big" -gt 0 ] && [ "$multi" -gt 0 ] && [ -s "$TB_TMP/a.packets" ]
	check_err $? "A sent $big GSO packets ($(wc -l < "$TB_TMP/a.packets") read by tshark); B's log has $multi arrivals of several segments"
	log_test $CHECK_RC "gro_regroup: A sent $big GSO packets, B's GRO made $multi arrivals of several segments, $REGROUPED unlike A's packets"
}

workload() {
	tcpwl_pair '' '--bytes 1000000'
}

CAPTURE_IN=b
scenario_record gro_regroup || exit $RET
regroup_check
net_check gro_regroup b 0 0 0
scenario_replays gro_regroup
exit $RET
