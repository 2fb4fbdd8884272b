# SPDX-License-Identifier: GPL-2.0
#
# Real-application scenarios: unmodified programs from Debian on the
# A - switch - B testbed (tests/netns/lib.sh), the server on B, its
# clients on A. A scenario defines workload() (start the server with
# app_bg, wait for it, run the client, check the client's own account of
# what it did), then calls app_run NAME PORT.
#
# app_run records every connection to B:PORT with `deter record` while
# tcpdump captures each host's egress, checks that the recorder has both
# ends of every connection tcpdump saw open and that every log is
# complete, then replays every connection REPLAYS times (default 3) and
# compares each host's egress in the replay with its own connection's
# packets in the original, header by header (scenario_replay).

source "$(dirname "${BASH_SOURCE[0]}")/../replay/lib.sh"

# app_testbed FAULT [PCT]: the A - switch - B testbed, 1 ms each way,
# offloads off, with the switch doing FAULT to the traffic:
#   clean     nothing
#   loss      drops PCT % (default 2) of packets each way at random (netem)
#   ecn       10 Mbit/s links each way whose RED queues mark CE, ECN and
#             DCTCP at both hosts
#   taildrop  10 Mbit/s links each way with an 8 KB queue (tbf)
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
	*)
		echo "app_testbed: unknown fault '$1'" >&2
		return 1 ;;
	esac
}

# app_fault_check NAME: the switch did what app_testbed's fault says
# (its qdiscs' counters): packets lost, marked or dropped.
app_fault_check() {
	local n=0 what dev

	case $APP_FAULT in
	clean) return 0 ;;
	ecn) what="marked CE"
	     n=$(tc -s -n "$SW" qdisc show | sed -n 's/.*marked \([0-9]*\).*/\1/p' |
		 awk '{ s += $1 } END { print s + 0 }') ;;
	*) what="dropped"
	   for dev in s0 s1; do
		n=$((n + $(tc -s -n "$SW" qdisc show dev $dev | sed -n 's/.*dropped \([0-9]*\).*/\1/p' |
			   awk '{ s += $1 } END { print s + 0 }')))
	   done ;;
	esac
	[ "$n" -gt 0 ]
	log_test $? "$1: the switch ($APP_FAULT) $what $n packets"
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

# app_nginx CONF-EXTRA: nginx on B:80 serving $TB_TMP/www, as Debian's
# default configuration has it (sendfile, tcp_nopush, keep-alive) with
# two workers; CONF-EXTRA goes into its server block.
app_nginx() {
	local d=$TB_TMP/nginx

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
			listen $B_IP:80 ${1:-};
			root $TB_TMP/www;
		}
	}
	EOF
	app_bg "$B" nginx -c "$d/nginx.conf"
	wait_listen "$B" 80
}

# app_curl N: curl on A fetching B's 4 KiB file N times, each on a
# connection of its own (Connection: close), eight at a time.
app_curl() {
	mkdir -p "$TB_TMP/curl"
	ip netns exec "$A" curl -sS -Z --parallel-max 8 -H 'Connection: close' \
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

# app_record NAME PORTS: workload() under deter record and the egress
# captures of every connection to B on PORTS (one port, or several
# joined by commas), then the checks of the logs: workload ok, both ends
# of each connection tcpdump saw logged, complete. Prints a BENCH line
# with the number of connections.
app_record() {
	local name=$1 ports=$2 rec wl c n=0 miss= inc filter

	filter="(tcp port ${ports//,/ or tcp port })"
	record_start "$ports"
	rec=$REC_PID
	capture_start "$A" a0 a0 "$filter and src host $A_IP" || return 1
	capture_start "$B" b0 b0 "$filter and src host $B_IP" || return 1
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
	inc=$(grep -c '"incomplete":true' "$TB_TMP/ls.json")
	[ "$inc" = 0 ]
	check_err $? "$inc logs are incomplete: $(grep '"incomplete":true' "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"' | sort | uniq -c | tr '\n' ' ')"
	log_test $CHECK_RC "$name: recorded $n connections, both ends of each, every log complete"
	echo "BENCH app=$name recorded=$n ok=$((CHECK_RC == 0))"
	APP_N=$n
	app_fault_check "$name" || CHECK_RC=1
	[ $CHECK_RC -eq 0 ]
}

# app_replay_all NAME: every connection app_record found, replayed
# REPLAYS times against its own packets in each host's egress capture.
app_replay_all() {
	local name=$1 c i

	for c in $APP_CONNS; do
		ID=$(log_id "$A_IP:${c#*:}" "$B_IP:${c%:*}")
		[ -n "$ID" ] || continue
		hdrseq_split "$TB_TMP/a0.pcap" "$TB_TMP/a.truth" "src port ${c#*:}"
		hdrseq_split "$TB_TMP/b0.pcap" "$TB_TMP/b.truth" "dst port ${c#*:}"
		DIVERGED_SHOWN= SERVER_PORT=${c%:*} CLIENT_PORT=${c#*:}
		BENCH_NAME=$name BENCH_CONN=${c#*:}
		for i in $(seq "$REPLAYS"); do
			scenario_replay "$name: port ${c#*:}" "$i"
		done
	done
}

# app_run NAME PORTS: record, then replay every connection. APP_KEEP=DIR
# keeps the scenario's files (logs, captures, replays) in DIR/NAME.
app_run() {
	app_record "$1" "$2" && app_replay_all "$1"
	[ -z "${APP_KEEP:-}" ] || cp -a "$TB_TMP" "$APP_KEEP/$1"
}

# The applications. Each starts its server on B, runs its client on A
# and checks what the client says it did; the connections use port
# APP_PORT.

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
