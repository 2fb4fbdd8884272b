# SPDX-License-Identifier: GPL-2.0
#
# Replay scenarios against independent ground truth. A scenario script
# sets up the A - switch - B testbed (tests/netns/lib.sh), defines
# workload() (run the traffic; the connection of interest uses port 5201)
# and calls scenario_run NAME. scenario_run records the workload with
# `deter record` and tcpdump on each host's egress, then replays the pair
# of logs REPLAYS times (default 3) on a fresh two-host testbed with
# --pcap.
#
#   A (10.0.1.1) a0 ---- s0 [switch] s1 ---- b0 B (10.0.2.1)
#        cap:a0 (A's egress)                 cap:b0 (B's egress)
#        cap:a0in (ingress, CAPTURE_IN=a)    cap:b0in (CAPTURE_IN=b)
#
# A replay passes when deter says it verified itself (exit 0) and, on each
# host, the replay's egress header sequence (IP ID, seq, ack, flags,
# length, window, TCP options) is identical to what tcpdump saw in the
# original. REPLAY_ARGS adds options to deter replay, quoted as in a shell
# command line (e.g. "--trace '-p function_graph -g tcp_ack'").

source "$(dirname "${BASH_SOURCE[0]}")/../netns/lib.sh"

DETER=${DETER_BIN:-$TB_TOP/bin/deter}
LOGS=$TB_TMP/logs
REPLAYS=${REPLAYS:-3}
REPLAY_ARGS=${REPLAY_ARGS:-}

# host_keep FILE...: put each host-wide setting FILE (under /proc/sys, a
# module's parameters) back as it is now when the scenario exits.
HOST_KEPT=()
host_keep() {
	local f v

	for f in "$@"; do
		v=$(cat "$f") || return 1
		HOST_KEPT+=("$f" "$v")
	done
	trap host_restore EXIT
}

host_restore() {
	local i

	for ((i = 0; i < ${#HOST_KEPT[@]}; i += 2)); do
		echo "${HOST_KEPT[i + 1]}" > "${HOST_KEPT[i]}"
	done
	cleanup
}

# scenario_testbed on|off [RATE]: the A - switch - B testbed with TSO,
# GSO and GRO on or off at A and B, 1 ms each way, A's egress at RATE.
scenario_testbed() {
	testbed_create || return 1
	offload "$A" a0 "$1"
	offload "$B" b0 "$1"
	link_shape "$A" a0 1ms ${2:-}
	link_shape "$B" b0 1ms
}

# local_testbed ADDR: one namespace, "the host", holding both ends of
# the connection, which goes over lo to ADDR: 127.0.0.1, or the host's
# own address (on a dummy device, as on a NIC; its packets go through
# lo all the same). A, B, A_IP and B_IP all name it, so that tcpwl_pair
# and the log lookups work unchanged; LOCAL_NS makes scenario_record
# capture lo, its ground truth split by port (egress_filter).
#
#   host L: tcpwl client ADDR:port --lo-- ADDR:5201 tcpwl server
#           cap:lo (both ends' egress)
local_testbed() {
	setup_ns L || return 1
	LOCAL_NS=$L A=$L B=$L A_IP=$1 B_IP=$1
	[[ $1 == 127.* ]] && return 0
	ip -n "$L" -batch - <<-EOF
	link add h0 type dummy
	addr add $1/24 dev h0
	link set h0 up
	EOF
}

# ecn_testbed on|off [RATE]: scenario_testbed's, with the switch's egress
# to B a RATE (20 Mbit/s) link whose RED queue marks CE (switch_red) and
# ECN on at both hosts; the workload's ends must both run DCTCP (a
# listener that does not refuses the ECT SYN DCTCP sends).
ecn_testbed() {
	scenario_testbed "$1" || return 1
	switch_red s1 "${2:-20mbit}" || return 1
	ip netns exec "$A" sysctl -qw net.ipv4.tcp_ecn=1
	ip netns exec "$B" sysctl -qw net.ipv4.tcp_ecn=1
}

# tcpwl_pair 'SERVER ARGS' 'CLIENT ARGS': one tcpwl connection, A to
# B:5201, to its end. A client that fails takes the server down with it
# (it would wait for a connection that never ends).
tcpwl_pair() {
	local srv

	echo "$1" > "$TB_TMP/server.args"
	# shellcheck disable=SC2086
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" $1 > "$TB_TMP/server.out" &
	srv=$!
	wait_listen "$B" 5201 || return 1
	# shellcheck disable=SC2086
	if ! ip netns exec "$A" "$TCPWL" client -c "$B_IP" $2 > "$TB_TMP/client.out"; then
		kill "$srv" 2>/dev/null
		wait $srv
		return 1
	fi
	wait $srv
}

# hdrseq_tt PCAP [FILTER]: the header sequence of a capture, no TTLs or
# checksums, each packet's time (tcpdump -tt) first. Every other field
# counts, the TS value of a time-wait socket's answer (IP ID 0, after
# the host's FIN) too: the replay hands it the value the peer logged.
hdrseq_tt() {
	hdrseq_read "$1" "${2:-}" "$HDRSEQ_AWK"'{ print }'
}

# hdrseq_read PCAP FILTER AWK-ARGS...: one line per packet of PCAP
# (tcpdump -v's IP and TCP lines joined; the lines it decodes from the
# payload, an application protocol's, left out), handed to awk with
# AWK-ARGS.
hdrseq_read() {
	tcpdump -r "$1" -nn -S -v -tt ${2:+"$2"} 2>/dev/null |
		awk '/^[0-9]+\.[0-9]+ / { if (p != "") print p; p = $0; n = 0; next }
		     n++ == 0 { p = p " " $0 }
		     END { if (p != "") print p }' | awk "${@:3}"
}

# The filter behind hdrseq_tt: one awk (each exec is slow in the VM).
# What tcpdump decodes of the payload (": HTTP, length: 1448") goes: the
# replay's payload is zeros.
HDRSEQ_AWK='{
	if (match($0, /, length [0-9]+: /))
		$0 = substr($0, 1, RSTART + RLENGTH - 3)
	sub(/ttl [0-9]*, /, "")
	gsub(/, cksum 0x[0-9a-f]* \([a-z]*\)/, "")
	gsub(/ \(correct\)/, "")
	sub(/proto TCP \(6\), /, "")
	gsub(/, cksum 0x[0-9a-f]* \(incorrect -> 0x[0-9a-f]*\)/, "")
}'

# hdrseq PCAP: the header sequence alone (no times).
hdrseq() {
	hdrseq_tt "$1" | cut -d ' ' -f 2-
}

# hdrseq_split PCAP OUT [FILTER]: the header sequence into OUT, the
# times into OUT.t, in one read of PCAP.
hdrseq_split() {
	hdrseq_read "$1" "${3:-}" -v hdr="$2" -v times="$2.t" "$HDRSEQ_AWK"'
		{ i = index($0, " ")
		  print substr($0, i + 1) > hdr
		  print substr($0, 1, i - 1) > times }'
	touch "$2" "$2.t"
}

# log_id LOCAL REMOTE: the id of the log whose endpoints match LOCAL and
# REMOTE ("ADDR:PORT", sed patterns), from $TB_TMP/ls.json (deter ls --json).
log_id() {
	sed -n "s/.*\"id\":\"\([0-9a-f]*\)\".*\"local\":\"$1\",\"remote\":\"$2\".*/\1/p" \
		"$TB_TMP/ls.json" | head -1
}

# a_log_id PORT: the id of A's end of the connection to B:PORT.
a_log_id() {
	log_id "$A_IP:[0-9]*" "$B_IP:$1"
}

# egress_filter H: tcpdump's filter for what host H (a or b) sent: by
# its address, or with both ends on one host (local_testbed) by port,
# B's being SERVER_PORT (default 5201).
egress_filter() {
	if [ -n "${LOCAL_NS:-}" ]; then
		if [ "$1" = a ]; then echo "tcp dst port ${SERVER_PORT:-5201}"
		else echo "tcp src port ${SERVER_PORT:-5201}"; fi
	elif [ "$1" = a ]; then
		echo "src host $A_IP"
	else
		echo "src host $B_IP"
	fi
}

# egress_diff OUT H TRUTH: host H's egress in the replay capture
# OUT/r-H.pcap against the header sequence TRUTH, into OUT/H.diff (and
# its times into OUT/H.replay.t); status 0 when identical.
egress_diff() {
	local out=$1 h=$2

	hdrseq_split "$out/r-$h.pcap" "$out/$h.replay" "$(egress_filter "$h")"
	diff "$3" "$out/$h.replay" > "$out/$h.diff" || return 1
	[ -s "$3" ] || { echo "0 the ground truth $3 is empty" > "$out/$h.diff"; return 1; }
}

# record_start PORTS [VAR=VALUE...]: deter record of the connections on
# PORTS (one port, or several joined by commas: 80,8080) into $LOGS in
# the background (its pid in REC_PID, its messages in
# $TB_TMP/record.err), with VAR=VALUE in its environment; returns once
# it is armed (it says where it records) or has exited.
record_start() {
	local p
	local -a ports=()

	for p in ${1//,/ }; do
		ports+=(--port "$p")
	done
	env "${@:2}" "$DETER" record -o "$LOGS" "${ports[@]}" 2> "$TB_TMP/record.err" &
	REC_PID=$!
	for _ in $(seq 100); do
		grep -q "recording into" "$TB_TMP/record.err" && break
		kill -0 $REC_PID 2>/dev/null || break
		sleep 0.1
	done
}

# scenario_record NAME: run workload() under deter record and the
# egress captures; sets ID to the active end's log. deter record encodes
# a connection's events as they come, 4096 at a time, into zstd frames
# of 64 KiB encoded each, moved to a part file 64 KiB at a time: here
# (REC_SMALL_CHUNKS=0 for the defaults) 32 events, 256 B and 512 B, so
# that every scenario's logs are many chunks, written through part files.
scenario_record() {
	local name=$1 rec wl h
	local -a knobs=(DETER_RECORD_CHUNK_EVENTS=32 DETER_RECORD_CHUNK_BYTES=256
			DETER_RECORD_SPILL_BYTES=512)

	[ "${REC_SMALL_CHUNKS:-1}" = 1 ] || knobs=()
	record_start 5201 "${knobs[@]}"
	rec=$REC_PID
	if [ -n "${LOCAL_NS:-}" ]; then
		# Both ends on one host: lo carries what each sends, once.
		capture_start "$LOCAL_NS" lo lo "tcp port 5201" || return 1
	else
		capture_start "$A" a0 a0 "tcp port 5201 and src host $A_IP" || return 1
		capture_start "$B" b0 b0 "tcp port 5201 and src host $B_IP" || return 1
	fi
	# CAPTURE_IN="a b" or either: those hosts' ingress too (net_check).
	# libpcap copies each packet into its ring as it passes, keeping no
	# clone of the skb. The hosts take a flow on one CPU (testbed_create),
	# so TCP gets its peer's packets in the order tcpdump saw them.
	if [[ " ${CAPTURE_IN:-} " == *" a "* ]]; then
		capture_start "$A" a0 a0in "tcp port 5201 and src host $B_IP" || return 1
	fi
	if [[ " ${CAPTURE_IN:-} " == *" b "* ]]; then
		capture_start "$B" b0 b0in "tcp port 5201 and src host $A_IP" || return 1
	fi
	workload
	wl=$?
	capture_stop
	sleep 0.5
	kill -INT $rec
	wait $rec
	[ -n "${LOCAL_NS:-}" ] || switch_faults_check "$name"
	CHECK_RC=0
	check_err $wl "the workload failed (status $wl)"
	"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls.json"
	ID=$(a_log_id 5201)
	[ -n "$ID" ]
	check_err $? "no log of A's end: $(cat "$TB_TMP/ls.json")"
	# REC_INCOMPLETE_OK=1: the scenario checks what is incomplete itself.
	if [ "${REC_INCOMPLETE_OK:-0}" != 1 ]; then
		grep -q '"incomplete":true' "$TB_TMP/ls.json"
		[ $? -ne 0 ]
		check_err $? "a log is incomplete: $(cat "$TB_TMP/record.err")"
	fi
	[ -z "$(find "$LOGS" -name '.*.part')" ]
	check_err $? "part files left: $(ls -a "$LOGS")"
	if [ "${REC_SMALL_CHUNKS:-1}" = 1 ] && [ -n "$ID" ]; then
		"$DETER" show --stats -d "$LOGS" "$ID" | grep -q '^file .*, [0-9]* chunks$'
		check_err $? "A's log is one chunk: $("$DETER" show --stats -d "$LOGS" "$ID" | grep '^file')"
	fi
	# The ground truth: each host's egress as tcpdump saw it. A replay
	# compared with an empty truth would prove nothing.
	for h in a b; do
		if [ -n "${LOCAL_NS:-}" ]; then
			hdrseq_split "$TB_TMP/lo.pcap" "$TB_TMP/$h.truth" "$(egress_filter "$h")"
		else
			hdrseq_split "$TB_TMP/${h}0.pcap" "$TB_TMP/$h.truth"
		fi
		[ -s "$TB_TMP/$h.truth" ]
		check_err $? "tcpdump saw no packet leave host $h"
	done
	log_test $CHECK_RC "$name: recorded (log ${ID:-none}), ground truth $(wc -l < "$TB_TMP/a.truth")+$(wc -l < "$TB_TMP/b.truth") packets"
	[ $CHECK_RC -eq 0 ]
}

# sendtime_err ORIG REPLAY: max and p99 |time difference| in us between
# two lists of packet times (hdrseq_split's OUT.t) of identical header
# sequences, in order.
sendtime_err() {
	paste -d ' ' "$1" "$2" |
	awk '{ d = ($1 - $2) * 1e6; if (d < 0) d = -d; print d }' | sort -n |
	awk '{ v[NR] = $1 } END { if (!NR) { print "- -"; exit }
		i = int(NR * 0.99); if (i < 1) i = 1
		printf "%.1f %.1f\n", v[NR], v[i] }'
}

# diverged_context REPLAY_OUT: for a replay that diverged at an event,
# the log's events around it, once per scenario, so that a failure seen
# only in CI (whose logs are gone with its VM) can be read from its output.
diverged_context() {
	local end n id lo

	[ -z "${DIVERGED_SHOWN:-}" ] || return 0
	read -r end n < <(sed -n 's/.*diverged at \(active\|passive\) end event \([0-9]*\):.*/\1 \2/p' "$1" | head -1)
	[ -n "$n" ] || return 0
	DIVERGED_SHOWN=1
	id=$ID
	[ "$end" = passive ] && id=$(log_id "$B_IP:${SERVER_PORT:-5201}" "$A_IP:${CLIENT_PORT:-[0-9]*}")
	lo=$((n > 12 ? n - 12 : 0))
	echo "    the $end end's log (deter show $id), events $lo to $((n + 3)):"
	"$DETER" show -d "$LOGS" "$id" |
		awk -v lo=$lo -v hi=$((n + 3)) '$1 ~ /^[0-9]+$/ && $1 >= lo && $1 <= hi { print "    | " $0 }'
}

# scenario_replay NAME I: replay ID once and compare with the truth.
# Also prints a BENCH line for make bench: the scenario (BENCH_NAME, else
# NAME) and connection (BENCH_CONN, the client's port), verified, deter
# replay's exit status, wall time, the original's duration, send-time
# error (max, p99, us) at each host, and deter replay's last word. With
# DETER_KEEP_FAILED=DIR, a replay that failed leaves the logs, the ground
# truth and its own output in DIR/NAME-ID (NAME's spaces and colons as
# underscores).
scenario_replay() {
	local name=$1 i=$2 out=$TB_TMP/replay$2 rc h t0 t1 e err_a= err_b= keep
	local -a extra

	CHECK_RC=0
	mkdir -p "$out"
	eval "extra=($REPLAY_ARGS)"
	t0=$(date +%s%N)
	"$DETER" replay -d "$LOGS" "$ID" -o "$out" --pcap "$out/r" "${extra[@]}" \
		> "$TB_TMP/replay$i.out" 2>&1
	rc=$?
	t1=$(date +%s%N)
	check_err $rc "deter replay exited $rc: $(tail -3 "$TB_TMP/replay$i.out")"
	[ $rc -eq 0 ] || diverged_context "$TB_TMP/replay$i.out"
	for h in a b; do
		egress_diff "$out" "$h" "$TB_TMP/$h.truth"
		check_err $? "host $h: original (<) vs replay (>) differ from line $(sed -n '1s/^\([0-9]*\).*/\1/p' "$out/$h.diff"): $(sed -n 2,3p "$out/$h.diff" | cut -c1-300)"
		if [ ! -s "$out/$h.diff" ]; then
			e=$(sendtime_err "$TB_TMP/$h.truth.t" "$out/$h.replay.t" | tr ' ' /)
			if [ "$h" = a ]; then err_a=$e; else err_b=$e; fi
		fi
	done
	echo "BENCH scenario=${BENCH_NAME:-$name} conn=${BENCH_CONN:--} replay=$i" \
	     "verified=$((CHECK_RC == 0)) deter_rc=$rc wall_ms=$(( (t1 - t0) / 1000000 ))" \
	     "orig_ms=$(sed -n "s/.*\"id\":\"$ID\".*\"duration_ns\":\([0-9]*\).*/\1/p" "$TB_TMP/ls.json" | awk '{ printf "%d", $1 / 1e6 }')" \
	     "err_a_us=${err_a:--/-} err_b_us=${err_b:--/-}" \
	     "result=$( (grep "^replay [0-9a-f]*: " "$TB_TMP/replay$i.out" || tail -1 "$TB_TMP/replay$i.out") | tail -1 | tr ' ' '_' | cut -c1-160)"
	if [ $CHECK_RC -ne 0 ] && [ -n "${DETER_KEEP_FAILED:-}" ]; then
		keep=$DETER_KEEP_FAILED/$(echo "$name" | tr -s ' :' _)-$ID
		mkdir -p "$keep" &&
			cp -a "$LOGS" "$TB_TMP"/*.truth "$TB_TMP/replay$i.out" "$out" "$keep/"
	fi
	log_test $CHECK_RC "$name: replay $i verified, both hosts' egress identical to the original"
}

# calls_check NAME WORD RET: after scenario_record of tcpwl_pair, each
# end's log has as many sendmsg() and recvmsg() = RET as tcpwl printed
# for that end on its "WORD send N recv N" line, some: --nonblock's
# EAGAIN (-11), --signal-us's EINTR (-512, -ERESTARTSYS as TCP returns
# it; the kernel tells the application EINTR).
calls_check() {
	local h out id want got total=0 call

	CHECK_RC=0
	for h in a b; do
		if [ "$h" = a ]; then
			out=$TB_TMP/client.out
			id=$ID
		else
			out=$TB_TMP/server.out
			id=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
		fi
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$h.txt"
		for call in send recv; do
			want=$(sed -n "s/^$2 .*$call \([0-9]*\).*/\1/p" "$out")
			got=$(grep -c "return     ${call}msg = $3\$" "$TB_TMP/show-$h.txt")
			[ -n "$want" ] && [ "$got" = "$want" ]
			check_err $? "host $h: tcpwl counted ${want:-no} ${call}() = $2, its log has $got = $3"
			total=$((total + ${want:-0}))
		done
	done
	[ "$total" -gt 0 ]
	check_err $? "no call said $2: $(cat "$TB_TMP/client.out" "$TB_TMP/server.out")"
	log_test $CHECK_RC "$1: the logs have the $total calls = $2 tcpwl saw"
}

# params_check KV...: A's log ($ID) and B's (found into B_ID) each have
# every congestion-control parameter KV ("tcp_cubic.beta = 512") as a
# CONFIG SYSCTL, and no other; deter show's output is left in
# $TB_TMP/show-ID.txt. Adds to CHECK_RC.
params_check() {
	local id kv

	B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	for id in "$ID" "$B_ID"; do
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$id.txt"
		for kv in "$@"; do
			grep -q "^ *[0-9]*  config     sysctl $kv$" "$TB_TMP/show-$id.txt"
			check_err $? "log $id has no $kv: $(grep 'sysctl tcp_' "$TB_TMP/show-$id.txt")"
		done
		[ "$(grep -c 'config     sysctl tcp_[a-z]*\.' "$TB_TMP/show-$id.txt")" -eq $# ]
		check_err $? "log $id has other parameters: $(grep 'sysctl tcp_' "$TB_TMP/show-$id.txt")"
	done
}

# keep_host_diverges NAME: replayed with the host's own settings
# (--keep-host-sysctls), $ID must not verify, and A's egress must differ
# from what tcpdump saw.
keep_host_diverges() {
	local rc

	CHECK_RC=0
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" --pcap "$TB_TMP/r/r" --keep-host-sysctls \
		> "$TB_TMP/replay.out" 2>&1
	rc=$?
	egress_diff "$TB_TMP/r" a "$TB_TMP/a.truth"
	[ $rc -ne 0 ] && [ -s "$TB_TMP/r/a.diff" ]
	check_err $? "with the defaults, deter replay exited $rc and A's egress $([ -s "$TB_TMP/r/a.diff" ] || echo "did not ")differ: $(tail -2 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "$1: with the host's parameters kept, the replay diverges ($(tail -1 "$TB_TMP/replay.out" | cut -c1-120))"
}

# scenario_replays NAME [AFTER ARGS...]: scenario_replay REPLAYS times;
# after each, the command AFTER ARGS I if given.
scenario_replays() {
	local i

	for i in $(seq "$REPLAYS"); do
		scenario_replay "$1" "$i"
		[ $# -lt 2 ] || "${@:2}" "$i"
	done
}

# spliced_check NAME BYTES OFF [CONT]: A's log ($ID) has every send
# spliced, BYTES in all, each with its pages, the first's
# from offset OFF in its page (where tcpwl's sendfile() started), and
# sends whose pages go on from the last one's: at least one if CONT is
# "some", none if "none" (unchecked if absent).
spliced_check() {
	local name=$1 bytes=$2 off=$3 cont=${4:-}
	local n s b p first c

	CHECK_RC=0
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	awk '/ call +sendmsg bytes / { n++; b += $5; if ($0 ~ /\(spliced\)/) s++ }
	     / return +sendmsg = .*, pages from offset / {
		p++; o = $0; sub(/.*pages from offset /, "", o); sub(/,.*/, "", o)
		if (p == 1) first = o
		if ($0 ~ /, on from the last$/) c++ }
	     END { printf "%d %d %d %d %s %d\n", n, s, b, p, first == "" ? "-" : first, c }' \
		"$TB_TMP/show-a.txt" > "$TB_TMP/spliced"
	read -r n s b p first c < "$TB_TMP/spliced"
	[ "$n" -gt 0 ] && [ "$n" = "$s" ] && [ "$b" = "$bytes" ] && [ "$p" = "$n" ] &&
		[ "$first" = "$off" ] &&
		{ [ -z "$cont" ] || { [ "$cont" = some ] && [ "$c" -gt 0 ]; } ||
		  { [ "$cont" = none ] && [ "$c" = 0 ]; }; }
	check_err $? "A's log has $n sends, $s spliced, $b bytes, $p with pages, the first from offset $first (tcpwl: $off), $c on from the last (${cont:-any})"
	log_test $CHECK_RC "$name: A's log has its $n sends spliced, $bytes bytes, pages from offset $off on, $c going on from the last"
}

# splice_read_check NAME SLOTS [nonblock]: B's log ($peer) has each of
# the splice() calls tcpwl made into a pipe of SLOTS buffers (it prints
# "splice_reads N") and no recv(), 1000000 bytes in all, each call with
# its pipe's room: SLOTS where tcpwl emptied the pipe after
# every call (no --pipe-keep), 1 to SLOTS and not always SLOTS where it
# left bytes in it every other call; each nonblocking if "nonblock",
# none otherwise.
splice_read_check() {
	local name=$1 slots=$2 nb=${3:-} peer calls got bytes rooms full nbs

	CHECK_RC=0
	peer=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	"$DETER" show -d "$LOGS" "$peer" > "$TB_TMP/show-b.txt"
	awk -v slots="$slots" '/ call +splice_read bytes / {
		n++; r = $0
		if (r ~ /, nonblocking/) nb++
		if (sub(/.*, pipe room /, "", r)) { r += 0; if (r >= 1 && r <= slots) ok++; if (r == slots) full++ } }
	     / return +splice_read = / { if ($NF > 0) b += $NF }
	     END { printf "%d %d %d %d %d\n", n, b, ok, full, nb }' \
		"$TB_TMP/show-b.txt" > "$TB_TMP/splice_reads"
	read -r calls bytes rooms full nbs < "$TB_TMP/splice_reads"
	got=$(sed -n 's/^splice_reads //p' "$TB_TMP/server.out")
	[ -n "$got" ] && [ "$calls" = "$got" ] && [ "$bytes" = 1000000 ] &&
		[ "$rooms" = "$calls" ] &&
		! grep -qE " call +recvmsg " "$TB_TMP/show-b.txt" &&
		if grep -q -- '--pipe-keep' "$TB_TMP/server.args"; then
			[ "$full" -lt "$calls" ]
		else
			[ "$full" = "$calls" ]
		fi &&
		if [ "$nb" = nonblock ]; then [ "$nbs" = "$calls" ]; else [ "$nbs" = 0 ]; fi
	check_err $? "B's log has $calls splice reads (tcpwl made ${got:-?}) returning $bytes bytes, $rooms with a room of 1-$slots buffers, $full of them $slots, $nbs nonblocking"
	log_test $CHECK_RC "$name: B's log has the ${got:-?} splice() calls tcpwl made, 1000000 bytes, each with its pipe's room ($full of $calls with all $slots buffers free)"
}

# net_ids PCAP [SYN_ID]: per non-SYN packet of PCAP, and SYN sent again
# after the one of IP ID SYN_ID, IP ID, IP length, TCP header length,
# TCP length, FIN, ECN field, and the segments it holds: a GSO packet
# (IP length over the 1500-byte MTU) one per MSS of data.
net_ids() {
	local id len hdr tl fin ecn syn m segs

	tshark -r "$1" -n -Y 'tcp.flags.syn == 0 || tcp.flags.ack == 0' -T fields -E separator=' ' \
		-e ip.id -e ip.len -e tcp.hdr_len -e tcp.len -e tcp.flags.fin \
		-e ip.dsfield.ecn -e tcp.flags.syn 2>/dev/null |
	while read -r id len hdr tl fin ecn syn; do
		# A SYN sent again after the one the handshake began with (the
		# receiver's first, $2) is of the series; that one and those
		# before it are not.
		if [ "$syn" = 1 ] || [ "$syn" = True ]; then
			[ -n "${2:-}" ] && [ $(((id - $2 + 65536) % 65536)) -ge 1 ] &&
				[ $(((id - $2 + 65536) % 65536)) -lt 32768 ] || continue
		fi
		segs=1
		if [ "$len" -gt 1500 ] && [ "$tl" -gt 0 ]; then
			m=$((1480 - hdr))
			segs=$(((tl + m - 1) / m))
		fi
		echo "$((id)) $len $hdr $tl $fin $ecn $segs"
	done
}

# gso_sent PCAP: how many of PCAP's packets are longer than the MTU.
gso_sent() {
	tcpdump -r "$1" -n 'ip[2:2] > 1500' 2>/dev/null | wc -l
}

# log_arrivals ID: log ID's arrivals, "IP-ID SEGMENTS" each, the one that
# created a passive end (VALUE CHILD_IPID) too.
log_arrivals() {
	"$DETER" show -d "$LOGS" "$1" |
		sed -n -e 's/.* rx  *ipid \([0-9]*\) x\([0-9]*\) .*/\1 \2/p' \
			-e 's/.* child_ipid \([0-9]*\) x\([0-9]*\)$/\1 \2/p'
}

# net_truth SENT RECEIVED: what the network did to one direction, from
# tcpdump on both sides of the switch: the sender's egress (SENT) and the
# receiver's ingress (RECEIVED) captures. Prints "DROPS LATE CE UNSENT
# NSENT NRECEIVED":
# IP IDs the sender's capture has that never arrived: those between the
# least and the greatest received, the sender's first ones before the
# least, and its last ones after the greatest when its host's time-wait
# answer arrived (the sender's socket had closed: nothing of its series
# was still to come); arrivals below the greatest before them; CE marks;
# and the missing IDs between the least and the greatest the sender's
# capture lacks too (lost before its tap, not in the network); and how
# many packets each capture has (0 if tshark could not read it). IDs are
# unwrapped to the nearest of the last, both series from the sender's
# first. A GSO packet covers its segments' IDs (net_ids). An ID 0 with no
# data after the sender's FIN is its time-wait socket's answer, outside
# the series. SYNs are outside the series too (net_ids).
net_truth() {
	local syn

	syn=$(tshark -r "$2" -n -Y 'tcp.flags.syn == 1 && tcp.flags.ack == 0' -T fields \
		-e ip.id 2>/dev/null | head -1)
	{ net_ids "$1" "${syn:+$((syn))}" | sed 's/^/s /'; net_ids "$2" "${syn:+$((syn))}" | sed 's/^/r /'; } |
	awk 'function unwrap(w, id,   d) {
		     if (!(w in last)) last[w] = (w == "s" || !ns) ? id : first
		     if (w == "s" && !ns) first = id
		     d = ((id - last[w]) % 65536 + 65536) % 65536
		     if (d > 32767) d -= 65536
		     last[w] = last[w] + d
		     return last[w]
	     }
	     { w = $1; fin = ($6 == "1" || $6 == "True")
	       if (fins[w] && $2 == 0 && $5 == 0) { if (w == "r") tw = 1; next }
	       if (fin) fins[w] = 1
	       u = unwrap(w, $2)
	       segs = $8
	       if (w == "s") { for (k = 0; k < segs; k++) sent[u + k] = 1; ns++; next }
	       if (!n) { lo = u; hi = u + segs - 1 }
	       else { if (u < hi) late++; if (u + segs - 1 > hi) hi = u + segs - 1; if (u < lo) lo = u }
	       n++
	       for (k = 0; k < segs; k++) got[u + k] = 1
	       if ($7 == 3) ce += segs }
	     END { for (i = lo; n && i <= hi; i++)
			if (!(i in got)) { if (i in sent) drops++; else unsent++ }
		   for (i in sent)
			if (n && !((i + 0) in got) && (i + 0 < lo || (tw && i + 0 > hi)))
				drops++
		   printf "%d %d %d %d %d %d\n", drops, late, ce, unsent, ns, n }'
}

# net_check NAME END DROPS REORDERS CE: END's log (a or b) has the
# drops, late arrivals and CE marks of its peer's packets that tcpdump
# saw on both sides of the switch (net_truth; CAPTURE_IN has END, and
# END's receive offloads are off or the switch splits: a segment per
# packet), and tcpdump saw at least DROPS, REORDERS and CE of them, so
# that the scenario did what it says.
net_check() {
	local name=$1 end=$2 peer logged seen unsent me=A you=B cap c

	CHECK_RC=0
	if [ "$end" = a ]; then
		peer=$ID
		seen=$(net_truth "$TB_TMP/b0.pcap" "$TB_TMP/a0in.pcap")
	else
		peer=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
		seen=$(net_truth "$TB_TMP/a0.pcap" "$TB_TMP/b0in.pcap")
		me=B you=A
	fi
	logged=$(sed -n "/\"id\":\"$peer\"/s/.*\"drops\":\([0-9]*\),\"reorders\":\([0-9]*\),\"ce_marks\":\([0-9]*\).*/\1 \2 \3/p" \
		 "$TB_TMP/ls.json")
	read -r gd gr gc unsent ns nr <<< "$seen"
	seen="$gd $gr $gc"
	[ "${ns:-0}" -gt 0 ] && [ "${nr:-0}" -gt 0 ]
	check_err $? "tshark read ${ns:-0} packets from $you's egress capture, ${nr:-0} from $me's ingress capture"
	# A packet tcpdump's ring lost would read as a drop.
	for c in a0 b0; do
		cap=$c.tcpdump.log
		[ "$c" = "${end}0" ] && cap=${end}0in.tcpdump.log
		grep -q "^0 packets dropped by kernel" "$TB_TMP/$cap"
		check_err $? "tcpdump ($cap) lost packets: $(grep 'dropped by kernel' "$TB_TMP/$cap")"
	done
	[ "$unsent" = 0 ]
	check_err $? "$unsent IP IDs $me never got are not in $you's egress capture either"
	[ -n "$logged" ] && [ "$logged" = "$seen" ] &&
		[ "$gd" -ge "$3" ] && [ "$gr" -ge "$4" ] && [ "$gc" -ge "$5" ]
	check_err $? "$me's log has drops, reorders, CE marks ${logged:-none}; tcpdump saw $seen between $you's egress and $me's ingress (at least $3 $4 $5 wanted)"
	log_test $CHECK_RC "$name: $me's log has the $gd drops, $gr late arrivals and $gc CE marks tcpdump saw between $you's egress and $me's ingress"
}

# replay_refused NAME PATTERN [WHAT]: deter replay of $ID must fail with
# one line matching PATTERN (grep), WHAT added to the failure's text.
replay_refused() {
	local rc

	CHECK_RC=0
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" > "$TB_TMP/replay.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && [ "$(wc -l < "$TB_TMP/replay.out")" = 1 ] &&
		grep -q "$2" "$TB_TMP/replay.out"
	check_err $? "deter replay exited $rc${3:+ ($3)}: $(head -3 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "$1: deter replay refuses the ${4:-log} in one line ($(cut -c1-100 "$TB_TMP/replay.out"))"
}

# errqueue_workload MODE: A sends 1 MB in 16 KiB send()s to B, reading
# its error queue after each (tcpwl --errqueue MODE), under strace, whose
# sendto(), recvmsg() and poll() lines go to $TB_TMP/strace.txt.
errqueue_workload() {
	local srv

	ip netns exec "$B" "$TCPWL" server -b "$B_IP" > "$TB_TMP/server.out" &
	srv=$!
	wait_listen "$B" 5201 || return 1
	if ! ip netns exec "$A" strace -f -qq -e trace=sendto,recvmsg,poll -o "$TB_TMP/strace.txt" \
		"$TCPWL" client -c "$B_IP" --bytes 1000000 --errqueue "$1" > "$TB_TMP/client.out"; then
		kill "$srv" 2>/dev/null
		wait $srv
		return 1
	fi
	wait $srv
}

# errqueue_check NAME MODE: A's log ($ID) has the reads of the error
# queue strace saw, as many finding a message (some, with zerocopy), and
# (MODE zerocopy or tx-timestamps) every send's return says what it put
# there, as many as strace saw sends; with "poll" none does. Then deter replay must refuse
# a log whose sends put messages there, in one line naming the first
# send's return, and replay the other as any log (scenario_replays).
errqueue_check() {
	local name=$1 mode=$2 reads found sends want_reads want_found want_sends mark seq rc

	CHECK_RC=0
	"$DETER" show -d "$LOGS" "$ID" > "$TB_TMP/show-a.txt"
	want_reads=$(grep -c 'recvmsg(.*MSG_ERRQUEUE' "$TB_TMP/strace.txt")
	want_found=$(grep -c 'recvmsg(.*MSG_ERRQUEUE) = 0$' "$TB_TMP/strace.txt")
	want_sends=$(grep -c '^[0-9]* *sendto(' "$TB_TMP/strace.txt")
	reads=$(grep -cE ' call +recv_errqueue bytes ' "$TB_TMP/show-a.txt")
	found=$(grep -cE ' return +recv_errqueue = 0$' "$TB_TMP/show-a.txt")
	case $mode in
	zerocopy) mark=', zerocopy' ;;
	tx-timestamps) mark=', transmit timestamps' ;;
	*) mark=', zerocopy|, transmit timestamps' ;;
	esac
	sends=$(grep -cE " return +sendmsg = [0-9]+.*($mark)\$" "$TB_TMP/show-a.txt")
	[ "$want_reads" -gt 0 ] && [ "$reads" = "$want_reads" ] && [ "$found" = "$want_found" ]
	check_err $? "A's log has $reads reads of the error queue, $found finding a message; strace saw $want_reads, $want_found"
	if [ "$mode" = poll ]; then
		[ "$found" = 0 ] && [ "$sends" = 0 ]
		check_err $? "$found reads found a message, $sends sends put one there"
	else
		# Completions come once the data is acked; software transmit
		# timestamps did not come at all in some runs under TCG.
		{ [ "$mode" != zerocopy ] || [ "$found" -gt 0 ]; } && [ "$sends" = "$want_sends" ] &&
			grep -q "sendto(.*$([ "$mode" = zerocopy ] && echo MSG_ZEROCOPY)" "$TB_TMP/strace.txt"
		check_err $? "A's log has $sends sends with '$mark', strace saw $want_sends"
	fi
	log_test $CHECK_RC "$name: A's log has the $want_reads error-queue reads strace saw ($want_found finding a message), $sends of $want_sends sends marked"
	if [ "$mode" = poll ]; then
		scenario_replays "$name"
		return
	fi

	seq=$(grep -m1 -E " return +sendmsg = [0-9]+.*$mark\$" "$TB_TMP/show-a.txt" | awk '{ print $1 }')
	replay_refused "$name" "event $seq: a .* cannot be replayed" \
		"first marked send's return: event ${seq:-none}"
}

# unseen_check NAME HOST: HOST's log (a: A's, $ID; b: B's) must be
# incomplete, "unseen-calls", with its MISSING CALLS value, the other
# complete, and deter replay must refuse the pair in one line saying why.
unseen_check() {
	local name=$1 bad good id

	CHECK_RC=0
	if [ "$2" = a ]; then
		id=$ID
		bad=$(grep "\"id\":\"$ID\"" "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"')
		good=$(grep -v "\"id\":\"$ID\"" "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"')
	else
		id=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
		bad=$(grep -v "\"id\":\"$ID\"" "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"')
		good=$(grep "\"id\":\"$ID\"" "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"')
	fi
	[ "$bad" = '"status":"incomplete,unseen-calls"' ] && [ "$good" = '"status":"complete"' ]
	check_err $? "$2's log: ${bad:-none}, the other's: ${good:-none}"
	"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$2.txt"
	grep -q ' value      missing 2 (calls that reach TCP past deter' "$TB_TMP/show-$2.txt"
	check_err $? "$2's log has no MISSING CALLS value"
	log_test $CHECK_RC "$name: $2's log is incomplete (unseen-calls), the other complete"

	replay_refused "$name" "$id.dlog: incomplete log (unseen-calls): cannot replay" "" pair
}

# premise_truth NAME H ERE WHAT: host H's egress in the original, as
# tcpdump saw it, has a packet matching the extended regex ERE: the
# scenario's premise WHAT happened.
premise_truth() {
	grep -qE "$3" "$TB_TMP/$2.truth"
	log_test $? "$1: tcpdump saw $4"
}

# premise_tso NAME: A sent a TCP segment of more than one MSS (1448
# bytes), a GSO packet, in the original.
premise_tso() {
	local max

	max=$(sed -n 's/.*, length \([0-9]*\)$/\1/p' "$TB_TMP/a.truth" | sort -n | tail -1)
	[ "${max:-0}" -gt 1448 ]
	log_test $? "$1: tcpdump saw A send GSO packets (largest ${max:-0} bytes of payload)"
}

# premise_qdisc_drops NAME DEV: the switch's egress qdisc on DEV dropped
# packets during the original.
premise_qdisc_drops() {
	local n

	n=$(tc -s -n "$SW" qdisc show dev "$2" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	[ "$n" -gt 0 ]
	log_test $? "$1: the switch's queue on $2 dropped $n packets"
}

# scenario_run NAME [CHECK ARGS...]: record, check the logs with the
# command CHECK ARGS if given, then replay REPLAYS times.
scenario_run() {
	scenario_record "$1" || return
	[ $# -lt 2 ] || "${@:2}"
	scenario_replays "$1"
}

# local_check NAME ADDR: both ends' logs are in $LOGS, each with ADDR as
# its local and remote address, and say their route went out of lo (deter
# show's "over lo"; the route's MTU is 65535, IP's largest, for lo's
# 65536): the connection was one host's.
local_check() {
	local id n=0

	CHECK_RC=0
	for id in "$ID" "$(log_id "$2:5201" "$2:[0-9]*")"; do
		[ -n "$id" ] || continue
		n=$((n + 1))
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$id.txt"
		grep -q '^ *[0-9]*  config     offload .*, mtu 65535, over lo$' "$TB_TMP/show-$id.txt"
		check_err $? "log $id's route is not lo's: $(grep -m1 'config     offload' "$TB_TMP/show-$id.txt")"
	done
	[ "$n" = 2 ]
	check_err $? "$n logs of $2 to $2:5201 in $LOGS: $(cat "$TB_TMP/ls.json")"
	log_test $CHECK_RC "$1: both ends' logs ($2 to $2:5201), each over lo at MTU 65535"
}
