#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A drop at the switch, seen by independent captures on both sides of it.
#
#   A (10.0.1.1) a0 ---- s0 [switch] s1 ---- b0 B (10.0.2.1)
#                cap:a0                cap:s1  cap:b0
#
# A sends 300 kB to B over 1 ms links with offloads off; the switch drops
# the 20th data packet from A. Checks the facts deter's recording stands
# on: A's IP IDs are consecutive per connection (6.12 per-socket counter),
# the dropped packet is the one ID missing downstream of the switch, TCP
# retransmits it, and the transfer completes.

source "$(dirname "$0")/lib.sh"

BYTES=300000

testbed_create || exit $ksft_fail
for dev in a0; do offload "$A" $dev off; done
offload "$B" b0 off
offload "$SW" s0 off
offload "$SW" s1 off
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms
switch_drop_nth "$A_IP" 20

capture_start "$A" a0 a0 || exit $ksft_fail
capture_start "$SW" s1 s1 || exit $ksft_fail
capture_start "$B" b0 b0 || exit $ksft_fail

ip netns exec "$B" "$TCPWL" server -b "$B_IP" > "$TB_TMP/server.out" &
srv=$!
wait_listen "$B" 5201 || exit $ksft_fail
ip netns exec "$A" timeout 60 "$TCPWL" client -c "$B_IP" --bytes $BYTES > "$TB_TMP/client.out"
crc=$?
wait $srv
src=$?
capture_stop

CHECK_RC=0
check_err $crc "client failed ($crc)"
check_err $src "server failed ($src)"
grep -qx "sent $BYTES" "$TB_TMP/client.out"
check_err $? "client: $(cat "$TB_TMP/client.out")"
grep -qx "received $BYTES" "$TB_TMP/server.out"
check_err $? "server: $(cat "$TB_TMP/server.out")"
log_test $CHECK_RC "drop_at_switch: transfer completes through a drop"

# A's data packets (ip.id, seq, len) at each capture point.
for cap in a0 s1 b0; do
	pcap_fields $cap | awk -v a="$A_IP" '$2 == a && $7 > 0 { print $1, $4, $7 }' \
		> "$TB_TMP/$cap.data"
done

CHECK_RC=0
n=$(wc -l < "$TB_TMP/a0.data")
[ "$n" -gt 100 ]
check_err $? "only $n data packets captured at a0"
# Every packet A sends (SYN, ACKs, data, retransmission, FIN) takes the
# next ID of one per-connection counter.
pcap_fields a0 | awk -v a="$A_IP" '$2 == a { print $1 }' > "$TB_TMP/a0.all"
awk '{ if (NR > 1 && $1 != (prev + 1) % 65536) bad++; prev = $1 }
     END { exit (NR < 10 || bad > 0) }' "$TB_TMP/a0.all"
check_err $? "IP IDs at a0 are not consecutive"
log_test $CHECK_RC "drop_at_switch: IP IDs of one connection are consecutive"

CHECK_RC=0
cut -d' ' -f1 "$TB_TMP/a0.data" | sort > "$TB_TMP/a0.ids"
cut -d' ' -f1 "$TB_TMP/b0.data" | sort > "$TB_TMP/b0.ids"
missing=$(comm -23 "$TB_TMP/a0.ids" "$TB_TMP/b0.ids")
extra=$(comm -13 "$TB_TMP/a0.ids" "$TB_TMP/b0.ids")
[ "$(echo "$missing" | grep -c .)" -eq 1 ]
check_err $? "expected 1 IP ID missing at b0, got: $(echo $missing)"
[ -z "$extra" ]
check_err $? "IP IDs at b0 never sent by A: $(echo $extra)"
# It is the 20th data packet A sent.
[ "$missing" = "$(sed -n 20p "$TB_TMP/a0.data" | cut -d' ' -f1)" ]
check_err $? "missing ID $missing is not A's 20th data packet"
# As sets: veth hands a packet to the receiving CPU's backlog, so two
# packets the switch sent from different CPUs may arrive reordered.
diff <(sort "$TB_TMP/s1.data") <(sort "$TB_TMP/b0.data") > "$TB_TMP/s1-b0.diff"
check_err $? "switch egress and B ingress captures differ: $(head -5 "$TB_TMP/s1-b0.diff")"
log_test $CHECK_RC "drop_at_switch: the dropped packet is the one ID missing past the switch"

CHECK_RC=0
seq_dropped=$(awk -v id="$missing" '$1 == id { print $2 }' "$TB_TMP/a0.data")
[ "$(awk -v s="$seq_dropped" '$2 == s' "$TB_TMP/a0.data" | wc -l)" -eq 2 ]
check_err $? "sequence $seq_dropped not sent exactly twice by A"
log_test $CHECK_RC "drop_at_switch: A retransmits the dropped sequence once"

exit $RET
