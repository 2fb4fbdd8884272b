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
# arrival of another segment count than the log's. Even where B's GRO
# made A's packets again, as it may, B's packets are not those of the
# original: GRO built them from frames, the replay's come whole, and
# B's receive window may differ before any arrival does (seen: 593
# where the original advertised 588), so B may diverge there. So the
# replay must verify with both hosts' egress identical to tcpdump's, or
# stop in one line; never verify otherwise.
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
# regroup_replay: verified and identical, or a one-line stop.
regroup_replay() {
	local out=$TB_TMP/r rc h same=1 how

	CHECK_RC=0
	mkdir -p "$out"
	"$DETER" replay -d "$LOGS" "$ID" -o "$out" --pcap "$out/r" > "$TB_TMP/replay.out" 2>&1
	rc=$?
	for h in a b; do
		egress_diff "$out" "$h" "$TB_TMP/$h.truth" || same=0
	done
	if [ $rc -eq 0 ]; then
		[ $same = 1 ]
		check_err $? "deter replay verified, but the egress differs from tcpdump's: $(head -3 "$out/a.diff" "$out/b.diff" | cut -c1-200)"
		how="verified, identical"
	else
		[ $rc -eq 1 ] && [ "$(wc -l < "$TB_TMP/replay.out")" = 1 ] &&
			grep -Eq "^replay $ID: (stopped at|diverged at|stuck at) " "$TB_TMP/replay.out"
		check_err $? "deter replay exited $rc: $(head -3 "$TB_TMP/replay.out")"
		how=$(cut -c1-110 "$TB_TMP/replay.out")
	fi
	log_test $CHECK_RC "gro_regroup: the replay ($REGROUPED arrivals regrouped) verifies identically or stops in one line ($how)"
}

regroup_replay
exit $RET
