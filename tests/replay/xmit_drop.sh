#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: the sending host's own qdisc drops segments
# (DETER_V_XMIT). A's egress qdisc holds at most 2 packets while they
# wait out its 1 ms delay, so a 1 MB transfer overflows it: each
# overflow is a segment TCP built and numbered (IP IDs taken) that never
# left A, and TCP was told so (NET_XMIT_DROP: CWR, the segment stays
# unsent). A's log must have one XMIT error per packet the qdisc counted
# dropped. In the replay the host's queue does not overflow, the segments
# go out and the network replays their loss (B's log has their IP IDs
# missing), so A's replayed egress must be the original's plus exactly
# the IP IDs the original took and never sent (a dropped packet may be a
# GSO packet of two: the device has no GSO, TCP still builds them), and
# B's must be identical.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail
tc -n "$A" qdisc replace dev a0 root netem delay 1ms limit 2
log_test $? "xmit_drop: A's egress queue holds 2 packets"

workload() {
	tcpwl_pair '' '--bytes 1000000'
}

# ids FILE: the IP IDs of a header sequence, one per line.
ids() {
	sed -n 's/^[> ]*IP (tos 0x[0-9a-f]*, id \([0-9]*\),.*/\1/p' "$1"
}

if scenario_record xmit_drop; then
	CHECK_RC=0
	drops=$(tc -s -n "$A" qdisc show dev a0 | sed -n 's/.*dropped \([0-9]*\),.*/\1/p')
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	got=$(grep -c "value      host_after [0-9]*: output refused 1 (NET_XMIT_DROP)$" "$TB_TMP/show-a.txt")
	[ "${drops:-0}" -gt 0 ] && [ "$got" = "$drops" ]
	check_err $? "A's log has $got output errors, A's qdisc dropped ${drops:-?} packets"
	log_test $CHECK_RC "xmit_drop: A's log has every drop of its own qdisc ($got)"

	# The IP IDs A took and never sent: the gaps in its egress.
	# (16 bits: 65535 is followed by 0.)
	ids "$TB_TMP/a.truth" | awk 'NR > 1 {
			for (i = (p + 1) % 65536; i != $1; i = (i + 1) % 65536)
				print i
		}
		{ p = $1 }' > "$TB_TMP/a.gaps"
	for i in $(seq "$REPLAYS"); do
		CHECK_RC=0
		out=$TB_TMP/replay$i
		mkdir -p "$out"
		"$DETER" replay -d "$LOGS" "$ID" -o "$out" --pcap "$out/r" \
			> "$TB_TMP/replay$i.out" 2>&1
		check_err $? "deter replay: $(tail -3 "$TB_TMP/replay$i.out")"
		egress_diff "$out" b "$TB_TMP/b.truth"
		check_err $? "host b: original (<) vs replay (>) differ: $(sed -n 1,3p "$out/b.diff" | cut -c1-300)"
		egress_diff "$out" a "$TB_TMP/a.truth"
		grep '^>' "$out/a.diff" > "$out/a.extra"
		ids "$out/a.extra" > "$out/a.extra.ids"
		! grep -q '^<' "$out/a.diff" && [ -s "$TB_TMP/a.gaps" ] &&
			cmp -s "$TB_TMP/a.gaps" "$out/a.extra.ids"
		check_err $? "host a: the replay's packets beyond the original's ($(wc -l < "$out/a.extra")) are not the $(wc -l < "$TB_TMP/a.gaps") IP IDs the original took and never sent: $(sed -n 1,3p "$out/a.diff" | cut -c1-300)"
		log_test $CHECK_RC "xmit_drop: replay $i verified; A's egress is the original's and the $(wc -l < "$TB_TMP/a.gaps") segments its qdisc dropped, B's identical"
	done
fi
exit $RET
