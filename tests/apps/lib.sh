# SPDX-License-Identifier: GPL-2.0
#
# Real-application scenarios: unmodified programs from Debian on the
# A - switch - B testbed (tests/netns/lib.sh), the server on B, its
# clients on A. A scenario defines workload() (start the server with
# app_bg, wait for it, run the client, check the client's own account of
# what it did), then calls app_run NAME PORTS [LPORT].
#
# app_run records every connection to B on PORTS (one port, or several
# joined by commas) with `deter record` while
# tcpdump captures each host's egress, checks that the recorder has both
# ends of every connection tcpdump saw open and that every log is
# complete, then replays every connection REPLAYS times (default 3) and
# compares each host's egress in the replay with its own connection's
# packets in the original, header by header (scenario_replay). With
# LPORT, the connections B makes to itself, to APP_LOCAL_IP:LPORT (a
# proxy's to its backend), are recorded too, their ground truth a
# capture of B's lo, and each replays over lo in one namespace, as deter
# replays a connection within one host:
#
#   A a0 --- switch --- b0 B: server :PORT --lo-- backend APP_LOCAL_IP:LPORT
#     cap:a0 (A's egress)  cap:b0 (B's egress)  cap:lo (both ends' egress)

source "$(dirname "${BASH_SOURCE[0]}")/../replay/lib.sh"

# app_testbed FAULT [PCT]: the A - switch - B testbed, 1 ms each way,
# offloads off, with the switch doing FAULT to the traffic:
#   clean     nothing
#   loss      drops PCT % (default 2) of packets each way at random (netem)
#   ecn       10 Mbit/s links each way whose RED queues mark CE, ECN and
#             DCTCP at both hosts
#   taildrop  10 Mbit/s links each way with an 8 KB queue (tbf)
#   reorder   1 ms more delay each way for 75 % of packets, correlated
#             50 % (netem): the other quarter overtake those sent up to
#             1 ms before them
app_testbed() {
	APP_FAULT=$1
	scenario_testbed off || return 1
	case $1 in
	clean) ;;
	loss)
		switch_queue s0 netem loss "${2:-2}%" limit 10000 &&
		switch_queue s1 netem loss "${2:-2}%" limit 10000 ;;
	ecn)
		switch_red s0 10mbit && switch_red s1 10mbit || return 1
		# A namespace's default may only be a congestion control the
		# host allows.
		host_keep /proc/sys/net/ipv4/tcp_allowed_congestion_control || return 1
		echo "reno cubic dctcp" > /proc/sys/net/ipv4/tcp_allowed_congestion_control ||
			return 1
		for ns in "$A" "$B"; do
			ip netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn=1 \
				net.ipv4.tcp_congestion_control=dctcp || return 1
		done ;;
	taildrop)
		switch_queue s0 tbf rate 10mbit burst 4k limit 8k &&
		switch_queue s1 tbf rate 10mbit burst 4k limit 8k ;;
	reorder)
		switch_queue s0 netem delay 1ms reorder 25% 50% limit 10000 &&
		switch_queue s1 netem delay 1ms reorder 25% 50% limit 10000 ;;
	*)
		echo "app_testbed: unknown fault '$1'" >&2
		return 1 ;;
	esac
}

# app_fault_check NAME: the switch did what app_testbed's fault says:
# packets lost, marked or dropped (its qdiscs' counters), or delivered
# behind one sent after them (the hosts' ingress captures, app_late).
app_fault_check() {
	local n=0 what dev a b

	case $APP_FAULT in
	clean) return 0 ;;
	ecn) what="marked CE"
	     n=$(tc -s -n "$SW" qdisc show | sed -n 's/.*marked \([0-9]*\).*/\1/p' |
		 awk '{ s += $1 } END { print s + 0 }') ;;
	reorder) a=$(app_late a0in) b=$(app_late b0in)
		 what="delivered behind later ones (to A $a, to B $b)"
		 n=$((a + b)) ;;
	*) what="dropped"
	   for dev in s0 s1; do
		n=$((n + $(tc -s -n "$SW" qdisc show dev $dev | sed -n 's/.*dropped \([0-9]*\).*/\1/p' |
			   awk '{ s += $1 } END { print s + 0 }')))
	   done ;;
	esac
	[ "$n" -gt 0 ]
	log_test $? "$1: the switch ($APP_FAULT) $what $n packets"
}

# app_late NAME: how many packets of the ingress capture
# $TB_TMP/NAME.pcap arrived after one their sender sent later: an IP ID
# behind the greatest seen so far from their connection (modulo 2^16).
# TCP takes a new IP ID for every packet it sends, retransmissions too;
# ID 0 (SYN-ACK, a time-wait socket's answer) is outside the series.
app_late() {
	tcpdump -r "$TB_TMP/$1.pcap" -nn -v 2>/dev/null |
	awk 'match($0, / id [0-9]+,/) { id = substr($0, RSTART + 4, RLENGTH - 5) + 0; next }
	     id != "" && / > / {
		f = $1 " " $3
		if (id != 0) {
			if (!(f in hi)) hi[f] = id
			else if ((id - hi[f] + 65536) % 65536 > 32767) late++
			else hi[f] = id
		}
		id = ""
	     }
	     END { print late + 0 }'
}

# app_bg NS CMD...: run CMD in namespace NS in the background, its output
# into $TB_TMP/<command name>.out; killed at cleanup.
app_bg() {
	local ns=$1 name

	name=$(basename "$2")
	ip netns exec "$ns" "${@:2}" > "$TB_TMP/$name.out" 2>&1 &
	TB_PIDS+=($!)
}

# app_www DIR: a web root with index.html (612 B, nginx's own page size)
# and files of 4 KiB, 64 KiB and 1 MiB, world-readable.
app_www() {
	mkdir -p "$1"
	head -c 612 /dev/zero | tr '\0' 'x' > "$1/index.html"
	head -c 4096 /dev/urandom > "$1/4k"
	head -c 65536 /dev/urandom > "$1/64k"
	head -c 1048576 /dev/urandom > "$1/1m"
	chmod -R a+rX "$1"
}

# app_nginx [CONF-EXTRA [ADDR:PORT]]: nginx in B on ADDR:PORT (default
# B:80) serving $TB_TMP/www, as Debian's default configuration has it
# (sendfile, tcp_nopush, keep-alive) with two workers; CONF-EXTRA goes
# into its listen directive.
app_nginx() {
	local d=$TB_TMP/nginx listen=${2:-$B_IP:80}

	mkdir -p "$d"
	chmod 755 "$TB_TMP"
	app_www "$TB_TMP/www"
	cat > "$d/nginx.conf" <<-EOF
	user root;
	worker_processes 2;
	daemon off;
	pid $d/nginx.pid;
	error_log $d/error.log;
	events { worker_connections 512; }
	http {
		access_log off;
		sendfile on;
		tcp_nopush on;
		keepalive_timeout 65;
		types { text/html html; }
		default_type application/octet-stream;
		client_body_temp_path $d/body;
		proxy_temp_path $d/proxy;
		fastcgi_temp_path $d/fastcgi;
		uwsgi_temp_path $d/uwsgi;
		scgi_temp_path $d/scgi;
		server {
			listen $listen ${1:-};
			root $TB_TMP/www;
		}
	}
	EOF
	app_bg "$B" nginx -c "$d/nginx.conf"
	wait_listen "$B" "${listen##*:}"
}

# app_curl N: curl on A fetching B's 4 KiB file N times, each on a
# connection of its own (Connection: close), eight at a time.
app_curl() {
	mkdir -p "$TB_TMP/curl"
	ip netns exec "$A" curl -sS --no-progress-meter -Z --parallel-max 8 -H 'Connection: close' \
		-w '%{http_code}\n' -o "$TB_TMP/curl/#1" "http://$B_IP/4k?[1-$1]" \
		> "$TB_TMP/curl.out" || return 1
	echo "    curl| $(sort "$TB_TMP/curl.out" | uniq -c | tr -s ' ' | tr '\n' ' ')"
	[ "$(grep -c '^200$' "$TB_TMP/curl.out")" = "$1" ]
}

# app_conns PORTS: the connections to B on PORTS (comma-separated) whose
# SYN left A, from A's egress capture, one "PORT:CLIENT-PORT" per line.
app_conns() {
	tcpdump -r "$TB_TMP/a0.pcap" -nn "tcp[tcpflags] & tcp-syn != 0" 2>/dev/null |
		sed -n "s/.* IP $A_IP\.\([0-9]*\) > $B_IP\.\([0-9]*\): .*/\2:\1/p" | sort -u |
		awk -F: -v ports="$1" 'BEGIN { n = split(ports, p, ","); for (i = 1; i <= n; i++) want[p[i]] = 1 }
			$1 in want'
}

# app_local_conns PORT: the client ports of the connections within B to
# APP_LOCAL_IP:PORT, from the capture of B's lo, one per line.
app_local_conns() {
	tcpdump -r "$TB_TMP/lo.pcap" -nn "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" 2>/dev/null |
		sed -n "s/.* IP $APP_LOCAL_IP\.\([0-9]*\) > $APP_LOCAL_IP\.$1: .*/\1/p" | sort -un
}

# app_record NAME PORTS [LPORT]: workload() under deter record and the
# egress captures of every connection to B on PORTS (one port, or several
# joined by commas; and within B to APP_LOCAL_IP:LPORT), then the checks
# of the logs: workload ok, both ends of each connection tcpdump saw
# logged, complete. With the fault reorder, each host's ingress is
# captured too (app_fault_check). Prints a BENCH line with the number of
# connections.
app_record() {
	local name=$1 ports=$2 lport=${3:-} rec wl c p n=0 nl=0 miss= inc filter

	filter="(tcp port ${ports//,/ or tcp port })"
	record_start "$ports${lport:+,$lport}"
	rec=$REC_PID
	capture_start "$A" a0 a0 "$filter and src host $A_IP" || return 1
	capture_start "$B" b0 b0 "$filter and src host $B_IP" || return 1
	if [ -n "$lport" ]; then
		capture_start "$B" lo lo "tcp port $lport" || return 1
	fi
	if [ "$APP_FAULT" = reorder ]; then
		capture_start "$A" a0 a0in "$filter and src host $B_IP" || return 1
		capture_start "$B" b0 b0in "$filter and src host $A_IP" || return 1
	fi
	workload
	wl=$?
	capture_stop
	# Connections still closing (time-wait answers, FIN_WAIT2) end here.
	sleep 1
	kill -INT $rec
	wait $rec
	switch_faults_check "$name"
	CHECK_RC=0
	check_err $wl "the workload failed (status $wl)"
	"$DETER" ls -d "$LOGS" --json > "$TB_TMP/ls.json"
	APP_CONNS=$(app_conns "$ports")
	for c in $APP_CONNS; do
		n=$((n + 1))
		[ -n "$(log_id "$A_IP:${c#*:}" "$B_IP:${c%:*}")" ] &&
			[ -n "$(log_id "$B_IP:${c%:*}" "$A_IP:${c#*:}")" ] || miss+=" ${c#*:}"
	done
	[ "$n" -gt 0 ]
	check_err $? "tcpdump saw no connection to port $ports"
	[ -z "$miss" ]
	check_err $? "no log of one end or both of the connections from A's port$miss: $(tail -2 "$TB_TMP/record.err")"
	APP_LOCAL_CONNS=
	if [ -n "$lport" ]; then
		APP_LOCAL_CONNS=$(app_local_conns "$lport")
		miss=
		for p in $APP_LOCAL_CONNS; do
			nl=$((nl + 1))
			[ -n "$(log_id "$APP_LOCAL_IP:$p" "$APP_LOCAL_IP:$lport")" ] &&
				[ -n "$(log_id "$APP_LOCAL_IP:$lport" "$APP_LOCAL_IP:$p")" ] || miss+=" $p"
		done
		[ "$nl" -gt 0 ]
		check_err $? "tcpdump saw no connection to $APP_LOCAL_IP:$lport on B's lo"
		[ -z "$miss" ]
		check_err $? "no log of one end or both of the connections within B from port$miss: $(tail -2 "$TB_TMP/record.err")"
	fi
	inc=$(grep -c '"incomplete":true' "$TB_TMP/ls.json")
	[ "$inc" = 0 ]
	check_err $? "$inc logs are incomplete: $(grep '"incomplete":true' "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"' | sort | uniq -c | tr '\n' ' ')"
	log_test $CHECK_RC "$name: recorded $n connections from A${lport:+ and $nl within B}, both ends of each, every log complete"
	echo "BENCH app=$name recorded=$((n + nl)) ok=$((CHECK_RC == 0))"
	APP_N=$((n + nl))
	app_fault_check "$name" || CHECK_RC=1
	[ $CHECK_RC -eq 0 ]
}

# app_replay_all NAME PORTS [LPORT]: every connection app_record found,
# replayed REPLAYS times against its own packets in each host's egress
# capture; those within B against each end's packets on B's lo.
app_replay_all() {
	local name=$1 c p i

	for c in $APP_CONNS; do
		p=${c#*:}
		ID=$(log_id "$A_IP:$p" "$B_IP:${c%:*}")
		[ -n "$ID" ] || continue
		# By both ports: A may use a port again towards another of B's.
		hdrseq_split "$TB_TMP/a0.pcap" "$TB_TMP/a.truth" "src port $p and dst port ${c%:*}"
		hdrseq_split "$TB_TMP/b0.pcap" "$TB_TMP/b.truth" "dst port $p and src port ${c%:*}"
		DIVERGED_SHOWN= SERVER_PORT=${c%:*} CLIENT_PORT=$p
		BENCH_NAME=$name BENCH_CONN=$p
		for i in $(seq "$REPLAYS"); do
			scenario_replay "$name: port $p" "$i"
		done
	done
	[ -z "${3:-}" ] || app_replay_local "$name" "$3"
}

# app_replay_local NAME LPORT: app_replay_all's part for the connections
# within B: both ends' address is APP_LOCAL_IP, and each end's egress is
# its packets on lo (egress_filter, by LOCAL_NS and SERVER_PORT).
app_replay_local() {
	local name=$1 port=$2 p i
	local A_IP=$APP_LOCAL_IP B_IP=$APP_LOCAL_IP LOCAL_NS=$B

	for p in $APP_LOCAL_CONNS; do
		ID=$(log_id "$A_IP:$p" "$B_IP:$port")
		[ -n "$ID" ] || continue
		hdrseq_split "$TB_TMP/lo.pcap" "$TB_TMP/a.truth" "src port $p and dst port $port"
		hdrseq_split "$TB_TMP/lo.pcap" "$TB_TMP/b.truth" "dst port $p and src port $port"
		DIVERGED_SHOWN= SERVER_PORT=$port CLIENT_PORT=$p
		BENCH_NAME=$name BENCH_CONN=lo$p
		for i in $(seq "$REPLAYS"); do
			scenario_replay "$name: lo port $p" "$i"
		done
	done
}

# app_run NAME PORTS [LPORT]: record, then replay every connection (to
# B on PORTS, and within B to APP_LOCAL_IP:LPORT). A scenario that defines
# premise() has it called with NAME once the recording passed its
# checks, to check what the workload made the programs do. APP_KEEP=DIR
# keeps the scenario's files (logs, captures, replays) in DIR/NAME.
app_run() {
	if app_record "$@"; then
		! declare -F premise > /dev/null || premise "$1"
		app_replay_all "$@"
	fi
	[ -z "${APP_KEEP:-}" ] || cp -a "$TB_TMP" "$APP_KEEP/$1"
}

# The applications. Each starts its server on B, runs its client on A
# and checks what the client says it did. A backend in B listens on
# APP_LOCAL_IP.

APP_LOCAL_IP=127.0.0.1

# wl_nginx_wrk [FILE]: wrk, two threads, four keep-alive connections,
# GETs of FILE (default 4k, a 4 KiB file; 64k, 1m) for two seconds.
wl_nginx_wrk() {
	app_nginx || return 1
	ip netns exec "$A" wrk -t 2 -c 4 -d 2s "http://$B_IP/${1:-4k}" > "$TB_TMP/wrk.out" 2>&1 ||
		return 1
	sed 's/^/    wrk| /' "$TB_TMP/wrk.out"
	grep -q " requests in " "$TB_TMP/wrk.out" &&
		! grep -q "Non-2xx\|Socket errors" "$TB_TMP/wrk.out"
}

# wl_nginx_files: curl fetching 1 MiB, 64 KiB and 4 KiB files over one
# keep-alive connection, then the 1 MiB file again on another: nginx
# sends them with sendfile() under TCP_NOPUSH (TCP_CORK).
wl_nginx_files() {
	local u=http://$B_IP

	app_nginx || return 1
	ip netns exec "$A" curl -sS -o /dev/null -o /dev/null -o /dev/null \
		-w '%{http_code} %{size_download}\n' "$u/1m" "$u/64k" "$u/4k" > "$TB_TMP/curl.out" &&
	ip netns exec "$A" curl -sS -o /dev/null -w '%{http_code} %{size_download}\n' \
		"$u/1m" >> "$TB_TMP/curl.out" || return 1
	sed 's/^/    curl| /' "$TB_TMP/curl.out"
	[ "$(tr '\n' ' ' < "$TB_TMP/curl.out")" = "200 1048576 200 65536 200 4096 200 1048576 " ]
}

# wl_nginx_abort N: N curls one after another, each fetching B's 1 MiB
# file into head -c 65536; curl exits on its broken pipe with the rest of
# the response unread.
wl_nginx_abort() {
	local i n

	app_nginx || return 1
	for ((i = 0; i < $1; i++)); do
		n=$(ip netns exec "$A" curl -sS "http://$B_IP/1m" 2> /dev/null | head -c 65536 | wc -c)
		echo "    curl| $n bytes, then hung up"
		[ "$n" = 65536 ] || return 1
	done
	for ((i = 0; i < $1; i++)); do
		ip netns exec "$A" bash -c "exec 3<> /dev/tcp/$B_IP/80 &&
			printf 'GET /64k HTTP/1.1\\r\\nHost: b\\r\\n\\r\\n' >&3" || return 1
		echo "    bash| asked for 64k, hung up"
	done
}

# wl_nginx_h2load: h2load, HTTP/2 over cleartext, four connections of
# up to four streams each, 200 GETs of a 4 KiB file.
wl_nginx_h2load() {
	app_nginx http2 || return 1
	ip netns exec "$A" h2load -n 200 -c 4 -m 4 "http://$B_IP/4k" > "$TB_TMP/h2load.out" 2>&1 ||
		return 1
	grep -E "^requests:|^status codes:" "$TB_TMP/h2load.out" | sed 's/^/    h2load| /'
	grep -q "^requests: 200 total, 200 started, 200 done, 200 succeeded" "$TB_TMP/h2load.out"
}

# wl_memcached: memcached with four threads; memcslap, four threads of
# a connection each, 400 sets.
wl_memcached() {
	app_bg "$B" memcached -u root -t 4 -l "$B_IP" -p 11211 -U 0 || return 1
	wait_listen "$B" 11211 || return 1
	ip netns exec "$A" memcslap --servers="$B_IP:11211" --concurrency=4 \
		--execute-number=100 > "$TB_TMP/memcslap.out" 2>&1 || return 1
	sed 's/^/    memcslap| /' "$TB_TMP/memcslap.out"
	grep -q "Time to set  *400 keys by  *4 threads" "$TB_TMP/memcslap.out"
}

# wl_sockperf MODE: sockperf's ping-pong (pp) or throughput (tp) test over
# TCP for two seconds.
wl_sockperf() {
	app_bg "$B" sockperf sr --tcp -i "$B_IP" -p 11111 || return 1
	wait_listen "$B" 11111 || return 1
	ip netns exec "$A" sockperf "$1" --tcp -i "$B_IP" -p 11111 -t 2 -m 1400 \
		> "$TB_TMP/sockperf.out" 2>&1 || return 1
	grep -E "Summary|SentMessages|ReceivedMessages" "$TB_TMP/sockperf.out" | sed 's/^/    sockperf| /'
	grep -q "Summary" "$TB_TMP/sockperf.out"
}

# wl_iperf3 N: iperf3's server on B:5201 (one test), its client on A
# sending 4 MiB to it over N parallel streams in writes of 1000 bytes.
wl_iperf3() {
	app_bg "$B" iperf3 -s -B "$B_IP" -p 5201 -1 || return 1
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" iperf3 -c "$B_IP" -p 5201 -P "$1" -l 1000 -n 4M \
		> "$TB_TMP/iperf3.out" 2>&1 || return 1
	grep -E "sender|receiver" "$TB_TMP/iperf3.out" | sed 's/^/    iperf3| /'
	grep -q "receiver" "$TB_TMP/iperf3.out"
}

# iperf3_premise NAME: one thread sent on all of iperf3's connections
# from A (the control connection and the streams): the tid of their logs'
# sendmsg calls.
iperf3_premise() {
	local -a ids tids

	mapfile -t ids < <(sed -n "s/.*\"id\":\"\([0-9a-f]*\)\".*\"local\":\"$A_IP:[0-9]*\",\"remote\":\"$B_IP:5201\".*/\1/p" "$TB_TMP/ls.json")
	mapfile -t tids < <(for id in "${ids[@]}"; do "$DETER" show -d "$LOGS" "$id"; done |
		sed -n 's/.* call  *sendmsg bytes .* tid \([0-9]*\)$/\1/p' | sort -u)
	[ ${#ids[@]} -ge 3 ] && [ ${#tids[@]} = 1 ]
	log_test $? "$1: one thread sent on all ${#ids[@]} of iperf3's connections from A (their sendmsg tids: ${tids[*]})"
}

# wl_scp: OpenSSH's sshd on B (a host key and a client key of its own,
# made here); scp from A copies a 1 MiB file to B, then from B back.
wl_scp() {
	local d=$TB_TMP/ssh

	mkdir -p "$d" /run/sshd
	chmod 755 "$TB_TMP"
	chmod 700 "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host" && ssh-keygen -q -t ed25519 -N '' -f "$d/id" ||
		return 1
	cp "$d/id.pub" "$d/authorized_keys"
	head -c 1048576 /dev/urandom > "$d/1m"
	cat > "$d/sshd_config" <<-EOF
	ListenAddress $B_IP
	Port 22
	HostKey $d/host
	AuthorizedKeysFile $d/authorized_keys
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	StrictModes no
	UsePAM no
	PidFile $d/sshd.pid
	Subsystem sftp internal-sftp
	EOF
	app_bg "$B" /usr/sbin/sshd -D -e -f "$d/sshd_config"
	wait_listen "$B" 22 || return 1
	local opts=(-i "$d/id" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
		    -o BatchMode=yes -o LogLevel=ERROR)
	ip netns exec "$A" scp "${opts[@]}" "$d/1m" "root@$B_IP:$d/1m.copy" &&
	ip netns exec "$A" scp "${opts[@]}" "root@$B_IP:$d/1m.copy" "$d/1m.back" || return 1
	cmp "$d/1m" "$d/1m.back"
}

# wl_haproxy: haproxy on B:80 (mode http, keep-alive, option
# splice-response: it moves a response's body that does not fit its
# buffer through a pipe with splice(); splice-auto does so only for a
# connection it has seen streaming, which a 1 MiB body over lo is not)
# in front of nginx on APP_LOCAL_IP:8080 in B itself. From A, wrk (two threads, four
# keep-alive connections, GETs of the 4 KiB file for two seconds), then
# curl fetching the 1 MiB file, which haproxy splices. Then haproxy
# stops (SIGUSR1: it closes its idle connections to nginx and exits), so
# that every connection ends while recorded.
wl_haproxy() {
	local d=$TB_TMP/haproxy pid rc

	app_nginx "" "$APP_LOCAL_IP:8080" || return 1
	mkdir -p "$d"
	cat > "$d/haproxy.cfg" <<-EOF
	global
		nbthread 2
		maxconn 256
		hard-stop-after 10s
	defaults
		mode http
		option splice-response
		timeout connect 5s
		timeout client 30s
		timeout server 30s
	frontend www
		bind $B_IP:80
		default_backend nginx
	backend nginx
		server nginx $APP_LOCAL_IP:8080
	EOF
	app_bg "$B" haproxy -db -f "$d/haproxy.cfg" || return 1
	pid=${TB_PIDS[-1]}
	wait_listen "$B" 80 || return 1
	ip netns exec "$A" wrk -t 2 -c 4 -d 2s "http://$B_IP/4k" > "$TB_TMP/wrk.out" 2>&1 &&
	ip netns exec "$A" curl -sS -o /dev/null -w '%{http_code} %{size_download}\n' \
		"http://$B_IP/1m" > "$TB_TMP/curl.out"
	rc=$?
	kill -USR1 "$pid"
	wait "$pid"
	sed 's/^/    wrk| /' "$TB_TMP/wrk.out"
	sed 's/^/    curl| /' "$TB_TMP/curl.out"
	[ $rc -eq 0 ] && grep -q " requests in " "$TB_TMP/wrk.out" &&
		! grep -q "Non-2xx\|Socket errors" "$TB_TMP/wrk.out" &&
		[ "$(cat "$TB_TMP/curl.out")" = "200 1048576" ]
}

# haproxy_premise NAME: haproxy spliced: the logs of its ends of the
# connections to nginx have splice() reads, those of its ends of A's
# connections spliced sends.
haproxy_premise() {
	local id reads=0 sends=0

	for id in $(sed -n "s/.*\"id\":\"\([0-9a-f]*\)\".*\"local\":\"$APP_LOCAL_IP:[0-9]*\",\"remote\":\"$APP_LOCAL_IP:8080\".*/\1/p" "$TB_TMP/ls.json"); do
		reads=$((reads + $("$DETER" show -d "$LOGS" "$id" | grep -c ' call  *splice_read bytes ')))
	done
	for id in $(sed -n "s/.*\"id\":\"\([0-9a-f]*\)\".*\"local\":\"$B_IP:80\",.*/\1/p" "$TB_TMP/ls.json"); do
		sends=$((sends + $("$DETER" show -d "$LOGS" "$id" | grep -c ' call  *sendmsg bytes .*(spliced)')))
	done
	[ "$reads" -gt 0 ] && [ "$sends" -gt 0 ]
	log_test $? "$1: haproxy spliced ($reads splice() reads from nginx, $sends spliced sends to A)"
}

# wl_pgbench: PostgreSQL on B:5432, a cluster made here by initdb as the
# user postgres (PostgreSQL refuses to run as root) in $TB_TMP, the one
# writable place the VM has for it, trusting every client and its Unix
# socket there too; pgbench from A loads its tables (scale 1: 100 000
# rows by COPY) and runs four clients on two threads, 50 transactions
# each. Then the server stops, so that every connection ends while
# recorded, and its cluster goes (70 MB of tmpfs, which APP_KEEP would
# copy).
wl_pgbench() {
	local d=$TB_TMP/pg bin rc
	local -a as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups env -C)

	bin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
	chmod 755 "$TB_TMP"
	mkdir -p "$d"
	chown postgres: "$d"
	"${as_pg[@]}" "$d" "$bin/initdb" -D "$d/data" -U postgres --auth=trust --no-locale \
		-E UTF8 --no-sync > "$TB_TMP/initdb.out" 2>&1 ||
		{ sed 's/^/    initdb| /' "$TB_TMP/initdb.out" | tail -5; return 1; }
	echo "host all all 0.0.0.0/0 trust" >> "$d/data/pg_hba.conf"
	app_bg "$B" "${as_pg[@]}" "$d" "$bin/postgres" -D "$d/data" -c "listen_addresses=$B_IP" \
		-c "unix_socket_directories=$d" -p 5432 || return 1
	if ! wait_listen "$B" 5432; then
		sed 's/^/    postgres| /' "$TB_TMP/setpriv.out" | tail -5
		return 1
	fi
	ip netns exec "$A" pgbench -h "$B_IP" -U postgres -i -s 1 postgres \
		> "$TB_TMP/pgbench.out" 2>&1 &&
	ip netns exec "$A" pgbench -h "$B_IP" -U postgres -c 4 -j 2 -t 50 postgres \
		>> "$TB_TMP/pgbench.out" 2>&1
	rc=$?
	"${as_pg[@]}" "$d" "$bin/pg_ctl" -D "$d/data" -m fast -w stop > /dev/null &&
		rm -rf "$d/data"
	grep -E "^done in|^number of (transactions actually processed|failed)|^tps" \
		"$TB_TMP/pgbench.out" | sed 's/^/    pgbench| /'
	[ $rc -eq 0 ] &&
		grep -q "^number of transactions actually processed: 200/200" "$TB_TMP/pgbench.out"
}
