#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a data center's offloads. A sends with TSO and GSO
# on; the switch's link to B has neither, so each of A's GSO packets
# leaves it a frame per segment, as a NIC's TSO puts it on the wire; B's
# GRO (on: veth receives by NAPI then) merges the frames one poll finds,
# 1 MB in all. Where B's arrivals group A's segments otherwise than A's
# packets did, the replay, which has no switch (A's GSO packets reach B
# whole), cannot split and merge them as the original's network and GRO
# did, and deter replay must say so in one line: its corrector at the
# first packet whose first segment B got alone, or deter.ko at B's first
# arrival of another segment count than the log's. Where B's GRO made
# A's packets again, as it may, the replay must be identical.
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
scenario_record gro_regroup && regroup_check && net_check gro_regroup b 0 0 0 || exit $RET
if [ "$REGROUPED" -gt 0 ]; then
	replay_refused gro_regroup \
		"^replay $ID: \(stopped at the passive end's network: corrector b: flow $A_IP:[0-9]* > $B_IP:5201: index [0-9]* arrives as a GSO packet, which the original's network split into segments\|diverged at passive end event [0-9]*: ipid [0-9]*: [0-9]* segment(s), [0-9]* logged: the sender's packets split or merged otherwise than in the original (GSO, GRO)\)" \
		"" pair
else
	scenario_replays gro_regroup
fi
exit $RET
