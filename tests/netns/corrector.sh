#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The replay packet corrector on B's ingress, against a plan, with an
# observer it does not control:
#
#   A (10.0.7.1) a0 ----------------------------- b0 B (10.0.7.2)
#   send.py: AF_PACKET frames       prerouting -300: queue 0 -> corrector_tool
#   with fixed IP IDs               prerouting -299: its mark -> CE
#                                   input:          queue 1 -> tcpdump (cap:obs)
#                                   cap:b0 (before the corrector)
#
# A sends crafted TCP packets with chosen IP IDs to a closed port on B.
# The plan for flow 1 (IDs 65530..15, wrapping) drops 65533 and 4, swaps
# 9 and 10 and marks 0 CE; IDs 14 and 15 lie past the recording. Flow 2
# plans 200..203 but 201 never comes, so 202 and 203 are released after
# 2 s. A third flow is foreign. tcpdump on NFQUEUE 1 in B's input hook
# (libpcap accepts each packet) sees what the corrector let through, in
# order, with its ECN bits and checksums.

source "$(dirname "$0")/lib.sh"

TOOL=${CORR_TOOL:-$TB_TOP/build/tests/netns/corrector_tool}
A_ADDR=10.0.7.1
B_ADDR=10.0.7.2
PORT=5201
Q_CORR=0
Q_OBS=1

[ -x "$TOOL" ] || { log_test 1 "corrector: $TOOL is built"; exit $ksft_fail; }

setup_ns A B || exit $ksft_fail
ip link add a0 netns "$A" type veth peer name b0 netns "$B" || exit $ksft_fail
ip -n "$A" addr add "$A_ADDR/24" dev a0
ip -n "$B" addr add "$B_ADDR/24" dev b0
ip -n "$A" link set a0 up
ip -n "$B" link set b0 up
offload "$A" a0 off
offload "$B" b0 off
b_mac=$(ip netns exec "$B" cat /sys/class/net/b0/address)
a_mac=$(ip netns exec "$A" cat /sys/class/net/a0/address)

# The corrector accepts a packet to be marked CE with CORR_CE_MARK; the
# next chain marks it, as deter replay's hosts do (replay/replay_net.c).
ce_mark=$(sed -n 's/^#define CORR_CE_MARK[[:space:]]*\(0x[0-9a-f]*\)u.*/\1/p' \
	"$TB_TOP/replay/corrector.h")
[ -n "$ce_mark" ] || { log_test 1 "corrector: CORR_CE_MARK found"; exit $ksft_fail; }
ip netns exec "$B" nft -f - <<-NFT || exit $ksft_fail
table inet dtr_test {
	chain corr {
		type filter hook prerouting priority -300;
		ip daddr $B_ADDR tcp dport $PORT queue num $Q_CORR
	}
	chain ce {
		type filter hook prerouting priority -299;
		meta mark $ce_mark ip ecn set ce meta mark set 0
	}
	chain obs {
		type filter hook input priority 0;
		ip daddr $B_ADDR tcp dport $PORT queue num $Q_OBS
	}
}
NFT

# Flow 1: original arrivals 65530..65549 minus 65533 and 65540 (IDs 4),
# 65545/65546 (IDs 9/10) swapped, 65536 (ID 0) CE-marked.
{
	echo "flow $A_ADDR:40001 $B_ADDR:$PORT"
	for i in $(seq 65530 65549); do
		case $i in
		65533|65540) ;;
		65536) echo "$i ce" ;;
		65545) echo 65546 ;;
		65546) echo 65545 ;;
		*) echo "$i" ;;
		esac
	done
	echo "flow $A_ADDR:40002 $B_ADDR:$PORT"
	printf '%s\n' 200 201 202 203
} > "$TB_TMP/plan"

# send.py SPEC...: one frame per SPEC "sport:ipid[:S]" from a0 to B,
# ECT(0), 100 zero bytes of payload (none for a SYN).
cat > "$TB_TMP/send.py" <<'PY'
import socket, struct, sys, time

dev, smac, dmac, saddr, daddr, dport = sys.argv[1:7]

def csum(b):
	if len(b) % 2:
		b += b'\0'
	s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
	while s >> 16:
		s = (s & 0xffff) + (s >> 16)
	return ~s & 0xffff

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
src, dst = socket.inet_aton(saddr), socket.inet_aton(daddr)
eth = bytes.fromhex(dmac.replace(':', '')) + bytes.fromhex(smac.replace(':', '')) + b'\x08\x00'
seq = {}
for spec in sys.argv[7:]:
	f = spec.split(':')
	sport, ipid, syn = int(f[0]), int(f[1]), len(f) > 2
	data = b'' if syn else bytes(100)
	sq = seq.get(sport, 1000)
	seq[sport] = sq + len(data) + syn
	tcp = struct.pack('!HHIIBBHHH', sport, int(dport), sq, 0 if syn else 1,
			  5 << 4, 0x02 if syn else 0x10, 65535, 0, 0) + data
	c = csum(src + dst + struct.pack('!BBH', 0, 6, len(tcp)) + tcp)
	tcp = tcp[:16] + struct.pack('!H', c) + tcp[18:]
	ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0x02, 20 + len(tcp), ipid, 0x4000,
			 64, 6, 0, src, dst)
	ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
	s.send(eth + ip + tcp)
	time.sleep(0.005)
PY

capture_start "$B" b0 b0 "tcp dst port $PORT" || exit $ksft_fail
ip netns exec "$B" tcpdump -i nfqueue:$Q_OBS -s 0 --immediate-mode -U -n \
	-w "$TB_TMP/obs.pcap" 2>"$TB_TMP/obs.tcpdump.log" &
TB_CAPS+=($!)
for _ in $(seq 50); do
	grep -q "listening on" "$TB_TMP/obs.tcpdump.log" && break
	sleep 0.1
done

ip netns exec "$B" "$TOOL" --queue $Q_CORR --plan "$TB_TMP/plan" \
	> "$TB_TMP/corr.out" 2> "$TB_TMP/corr.err" &
corr=$!
TB_PIDS+=($corr)
for _ in $(seq 50); do
	ip netns exec "$B" awk -v q=$Q_CORR '$1 == q { f = 1 } END { exit !f }' \
		/proc/net/netfilter/nfnetlink_queue 2>/dev/null && break
	sleep 0.1
done

specs=("40001:12345:S")
for id in 65530 65531 65532 65533 65534 65535 $(seq 0 15); do
	specs+=("40001:$id")
done
specs+=("40003:7" "40002:200" "40002:202" "40002:203")
ip netns exec "$A" taskset -c 0 python3 "$TB_TMP/send.py" a0 "$a_mac" "$b_mac" \
	"$A_ADDR" "$B_ADDR" $PORT "${specs[@]}"
check_err $? "send.py failed"
# Flow 2 is released 2 s after 202 was held; give it time.
sleep 3
kill -TERM $corr
wait $corr
crc=$?
capture_stop

# id sport ecn ip-checksum-status tcp-checksum-status time, per packet
fields() {
	tshark -r "$TB_TMP/$1.pcap" -n -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
		-T fields -E separator=' ' -e ip.id -e tcp.srcport -e ip.dsfield.ecn \
		-e ip.checksum.status -e tcp.checksum.status -e frame.time_epoch 2>/dev/null |
	while read -r id rest; do echo "$((id)) $rest"; done
}
fields b0 > "$TB_TMP/b0.txt"
fields obs > "$TB_TMP/obs.txt"

CHECK_RC=0
check_err $crc "corrector_tool exited $crc: $(cat "$TB_TMP/corr.err")"
[ "$(awk '{ print $1 }' "$TB_TMP/b0.txt" | tr '\n' ' ')" = \
  "12345 65530 65531 65532 65533 65534 65535 $(seq -s ' ' 0 15) 7 200 202 203 " ]
check_err $? "B's ingress did not see what A sent: $(awk '{ print $1 }' "$TB_TMP/b0.txt" | tr '\n' ' ')"
log_test $CHECK_RC "corrector: B's ingress sees A's packets in send order"

CHECK_RC=0
got=$(awk '$2 == 40001 { print $1 ":" $3 }' "$TB_TMP/obs.txt" | tr '\n' ' ')
want="12345:2 65530:2 65531:2 65532:2 65534:2 65535:2 0:3 1:2 2:2 3:2 5:2 6:2 7:2 8:2 10:2 9:2 11:2 12:2 13:2 14:2 15:2 "
[ "$got" = "$want" ]
check_err $? "flow 1 delivered (id:ecn): expected '$want' vs actual '$got'"
log_test $CHECK_RC "corrector: drops, reorders and CE-marks a flow as planned"

CHECK_RC=0
bad=$(awk '$4 != 1 || $5 != 1' "$TB_TMP/obs.txt")
[ -s "$TB_TMP/obs.txt" ] && [ -z "$bad" ]
check_err $? "packets past the corrector with bad checksums (id sport ecn ip tcp time): $bad"
log_test $CHECK_RC "corrector: delivered packets carry valid IP and TCP checksums"

CHECK_RC=0
got=$(awk '$2 == 40002 { print $1 }' "$TB_TMP/obs.txt" | tr '\n' ' ')
[ "$got" = "200 202 203 " ]
check_err $? "flow 2 delivered: expected '200 202 203 ' vs actual '$got'"
wait_s=$(awk '$2 == 40002 && $1 == 200 { t0 = $6 } $2 == 40002 && $1 == 202 { t1 = $6 }
	END { printf "%.2f", t1 - t0 }' "$TB_TMP/obs.txt")
awk -v w="$wait_s" 'BEGIN { exit !(w >= 1.9 && w < 3) }'
check_err $? "flow 2: 202 released ${wait_s} s after 200, expected about 2 s"
grep -q "flow $A_ADDR:40002 > $B_ADDR:$PORT: index 201 lost" "$TB_TMP/corr.err"
check_err $? "no line about index 201 on stderr: $(cat "$TB_TMP/corr.err")"
log_test $CHECK_RC "corrector: a missing arrival is given up after 2 s"

CHECK_RC=0
got=$(awk '$2 == 40003 { print $1 ":" $3 }' "$TB_TMP/obs.txt")
[ "$got" = "7:2" ]
check_err $? "foreign packet: expected '7:2' vs actual '$got'"
want="passed 24 dropped 2 marked 1 held_max 2 foreign 1 timeouts 1"
[ "$(cat "$TB_TMP/corr.out")" = "$want" ]
check_err $? "stats: expected '$want' vs actual '$(cat "$TB_TMP/corr.out")'"
log_test $CHECK_RC "corrector: foreign packets pass; stats add up"

exit $RET
