#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deter replay against independent ground truth: an RPC exchange over one
# persistent connection is recorded on the A - switch - B testbed with
# tcpdump on each host's egress; then the pair of logs is replayed
# REPLAYS times on a fresh two-host testbed with --pcap.
#
#   A (10.0.1.1) a0 ---- s0 [switch] s1 ---- b0 B (10.0.2.1)
#        cap:a0 (A's egress)                 cap:b0 (B's egress)
#
# A replay passes when deter says it verified itself and, on each host,
# the replay's egress header sequence (IP ID, seq, ack, flags, length,
# window, TCP options) is identical to what tcpdump saw in the original.

source "$(dirname "$0")/../netns/lib.sh"

DETER=$TB_TOP/bin/deter
LOGS=$TB_TMP/logs
REPLAYS=${REPLAYS:-3}
RPC=${RPC:-20:200:2000}

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms

"$DETER" record -o "$LOGS" --port 5201 2> "$TB_TMP/record.err" &
rec=$!
sleep 1
capture_start "$A" a0 a0 "tcp and src host $A_IP" || exit $ksft_fail
capture_start "$B" b0 b0 "tcp and src host $B_IP" || exit $ksft_fail
ip netns exec "$B" "$TCPWL" server -b "$B_IP" --rpc "${RPC#*:}" > /dev/null &
srv=$!
wait_listen "$B" 5201 || exit $ksft_fail
ip netns exec "$A" "$TCPWL" client -c "$B_IP" --rpc "$RPC" > /dev/null
wait $srv
capture_stop
sleep 0.5
kill -INT $rec
wait $rec

# The header sequence of a capture: no times, TTLs or checksums.
hdrseq() {
	tcpdump -r "$1" -nn -S -v -t 2>/dev/null |
		paste -d ' ' - - |
		sed -e 's/ttl [0-9]*, //; s/, cksum 0x[0-9a-f]* ([a-z]*)//g' \
		    -e 's/ (correct)//g; s/proto TCP (6), //'
}

CHECK_RC=0
"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls.json"
id=$(sed -n "s/.*\"id\":\"\([0-9a-f]*\)\".*\"local\":\"$A_IP:.*/\1/p" "$TB_TMP/ls.json")
[ -n "$id" ]
check_err $? "no log of A's end: $(cat "$TB_TMP/ls.json")"
log_test $CHECK_RC "replay_rpc: recorded $RPC (log $id)"
hdrseq "$TB_TMP/a0.pcap" > "$TB_TMP/a.truth"
hdrseq "$TB_TMP/b0.pcap" > "$TB_TMP/b.truth"

for i in $(seq "$REPLAYS"); do
	CHECK_RC=0
	out=$TB_TMP/replay$i
	mkdir -p "$out"
	"$DETER" replay -d "$LOGS" "$id" -o "$out" --pcap "$out/r" \
		> "$TB_TMP/replay$i.out" 2>&1
	rc=$?
	check_err $rc "deter replay exited $rc: $(tail -3 "$TB_TMP/replay$i.out")"
	for h in a b; do
		pcap=$(ls "$out"/r-*"$h"*.pcap 2>/dev/null | head -1)
		ip=$A_IP
		[ "$h" = b ] && ip=$B_IP
		tcpdump -r "$pcap" -w "$out/$h.egress.pcap" "src host $ip" 2>/dev/null
		hdrseq "$out/$h.egress.pcap" > "$out/$h.replay"
		diff "$TB_TMP/$h.truth" "$out/$h.replay" > "$out/$h.diff"
		check_err $? "host $h: original (<) vs replay (>) differ from line $(sed -n '1s/^\([0-9]*\).*/\1/p' "$out/$h.diff"): $(sed -n 2,3p "$out/$h.diff")"
	done
	log_test $CHECK_RC "replay_rpc: replay $i verified, both hosts' egress identical to the original"
done

exit $RET
