#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: both ends on one host, 1 MB over 127.0.0.1 in 16 KiB
# writes, in segments of up to 64 KB at lo's MTU. Whether the receiver
# coalesces a segment into the one before depends on whether the sender
# has freed its copy of that one yet, which deter does not log
# (docs/limitations.md): the replay may diverge. Each replay must either
# verify with both ends' egress on lo identical to the original's, or
# exit 1 saying in one line where it diverged, got stuck or stopped, its
# egress not identical: a replay that did not repeat the original never
# verifies.
#
#   host L: tcpwl client 127.0.0.1:port --lo-- 127.0.0.1:5201 tcpwl server
#           cap:lo

source "$(dirname "$0")/lib.sh"

local_testbed 127.0.0.1 || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 1000000'
}

# bulk_replay I: replay $ID once: verified with both ends' egress
# identical, or not verified, said in one line, an end's egress differing.
bulk_replay() {
	local out=$TB_TMP/replay$1 rc h same=0 verdict

	CHECK_RC=0
	mkdir -p "$out"
	"$DETER" replay -d "$LOGS" "$ID" -o "$out" --pcap "$out/r" > "$out.out" 2>&1
	rc=$?
	for h in a b; do
		egress_diff "$out" "$h" "$TB_TMP/$h.truth" && same=$((same + 1))
	done
	verdict=$(grep -E "^replay $ID: (verified|diverged|stuck|stopped) " "$out.out")
	if [ $rc = 0 ]; then
		[ "$same" = 2 ]
		check_err $? "verified, yet an end's egress differs: $(cat "$out"/a.diff "$out"/b.diff | head -3 | cut -c1-300)"
	else
		[ $rc = 1 ] && [ "$(echo "$verdict" | grep -c .)" = 1 ] && [ "$same" -lt 2 ]
		check_err $? "exit $rc, $same ends identical, verdict: $(tail -2 "$out.out")"
		echo "    $verdict"
		diverged_context "$out.out"
	fi
	log_test $CHECK_RC "local_bulk: replay $1 $([ $rc = 0 ] && echo "verified, both ends' egress identical" || echo "not verified, said in one line")"
}

scenario_record local_bulk || exit $RET
local_check local_bulk 127.0.0.1
premise_truth local_bulk a ", length [0-9]{5}$" "A send segments of 10000 bytes or more, at lo's MTU"
for i in $(seq "$REPLAYS"); do
	bulk_replay "$i"
done
exit $RET
