#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Testbed library for deter's netns scenarios (modelled on
# tools/testing/selftests/net/lib.sh). Source it from a scenario; it runs
# inside the testbed VM (testbed/run), as root.
#
# Topology built by testbed_create:
#
#     host A (ns $A)            switch (ns $SW)             host B (ns $B)
#   +----------------+     +------------------------+     +----------------+
#   | a0 10.0.1.1/24 |-----| s0 10.0.1.254          |     |                |
#   |                |     |          10.0.2.254 s1 |-----| b0 10.0.2.1/24 |
#   +----------------+     +------------------------+     +----------------+
#        veth                 routes, ip_forward=1            veth
#
# With DETER_NICS set (testbed/run --nics MODEL) the two links are the
# VM's NICs instead, a0-s0 and s1-b0 each a QEMU hub: real drivers with
# their own receive buffers, NAPI and GRO, and GSO split in software or by
# the device's TSO, as a data-center host's. Everything else is the same.
#
# Each host's egress qdisc sets that link's delay and rate (netem); the
# switch's egress port towards a host is the bottleneck queue, which can
# drop (pfifo/tbf limits, netem loss), reorder (netem) and ECN-mark (red
# ecn). Captures (tcpdump) can run on any interface; everything is torn
# down on exit.

set -u

TB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TCPWL=$TB_TOP/build/tests/netns/tcpwl

ksft_pass=0
ksft_fail=1
ksft_skip=4

A_IP=10.0.1.1
B_IP=10.0.2.1
SW_A_IP=10.0.1.254
SW_B_IP=10.0.2.254

TB_NS=()		# namespaces created, removed by cleanup
TB_NICS=()		# NICs taken, "NS DEV", handed back by cleanup
TB_PIDS=()		# background processes, killed by cleanup
TB_CAPS=()		# running captures, stopped by capture_stop
TB_TMP=${TB_TMP:-$(mktemp -d /tmp/deter-tb.XXXXXX)}
RET=0			# worst result of the scenario so far

# log_test RC NAME: print one selftests-style result line. The VM has
# everything a scenario needs, so a skip ($ksft_skip) is a failure too.
log_test() {
	local rc=$1 name=$2

	if [ "$rc" -eq 0 ]; then
		printf 'TEST: %-60s [ OK ]\n' "$name"
	else
		[ "$rc" -ne "$ksft_skip" ] || echo "    skipped: the VM suite runs everything"
		printf 'TEST: %-60s [FAIL]\n' "$name"
		RET=$ksft_fail
	fi
}

# check_err RC MSG: note a failed check, with why.
check_err() {
	if [ "$1" -ne 0 ]; then
		echo "    $2" >&2
		CHECK_RC=1
	fi
}

cleanup() {
	local p ns

	capture_stop
	for p in ${TB_PIDS[@]+"${TB_PIDS[@]}"}; do
		kill "$p" 2>/dev/null
	done
	for p in ${TB_PIDS[@]+"${TB_PIDS[@]}"}; do
		wait "$p" 2>/dev/null
	done
	# A NIC goes back to the VM's namespace when its namespace is freed,
	# which a socket still closing there can delay: hand it back now.
	for p in ${TB_NICS[@]+"${TB_NICS[@]}"}; do
		ip -n "${p% *}" link set dev "${p#* }" netns 1 2>/dev/null
	done
	for ns in ${TB_NS[@]+"${TB_NS[@]}"}; do
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "${TB_KEEP:-}" ] || rm -rf "$TB_TMP"
}
trap cleanup EXIT

# setup_ns VAR...: create one namespace per VAR, named VAR-<random>, with
# lo up and IPv6 off, and set VAR to its name. Few ip(8) runs: each exec
# is slow in the emulated VM.
setup_ns() {
	local var ns batch=

	for var in "$@"; do
		ns="$var-$(mktemp -u XXXXXX)"
		batch+="netns add $ns"$'\n'
		TB_NS+=("$ns")
		eval "$var=$ns"
	done
	ip -batch - <<< "$batch" || return 1
	for var in "$@"; do
		ns=${!var}
		ip -n "$ns" link set lo up || return 1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || return 1
	done
}

# nic_take NS NAME N: move the VM's NIC of MAC 52:54:00:de:7e:0N
# (testbed/run --nics) into NS as NAME, with what the last scenario set
# on it (qdisc, offloads, MTU) back to defaults.
nic_take() {
	local ns=$1 name=$2 mac=52:54:00:de:7e:0$3 d a dev=

	for _ in $(seq 50); do
		for d in /sys/class/net/*; do
			read -r a < "$d/address" 2>/dev/null && [ "$a" = "$mac" ] && dev=${d##*/}
		done
		[ -n "$dev" ] && break
		sleep 0.1
	done
	if [ -z "$dev" ]; then
		echo "no NIC of MAC $mac in the VM's namespace (testbed/run --nics gives them; a namespace kept one?)" >&2
		return 1
	fi
	ip link set dev "$dev" netns "$ns" && ip -n "$ns" link set dev "$dev" name "$name" || return 1
	TB_NICS+=("$ns $name")
	tc -n "$ns" qdisc del dev "$name" root 2>/dev/null
	ip netns exec "$ns" ethtool -K "$name" tso on gso on gro on >/dev/null 2>&1
	ip -n "$ns" link set dev "$name" mtu 1500
}

# nic_carrier NS DEV: wait up to 5 s for DEV's link (e1000e negotiates
# for half a second after it is set up; its queue drops until then).
nic_carrier() {
	local c

	for _ in $(seq 50); do
		c=$(ip netns exec "$1" cat "/sys/class/net/$2/carrier" 2>/dev/null)
		[ "$c" = 1 ] && return 0
		sleep 0.1
	done
	echo "$2 in $1: no carrier after 5 s" >&2
	return 1
}

# testbed_create: host A -- switch -- host B, no shaping yet. On veth each
# host and the switch's ports take a flow on one CPU (rx_one_cpu), as
# behind a NIC, and the switch forwards a flow in the order it got it, as
# a switch does: two of a host's packets sent from two CPUs at once (a
# close()'s reset and a softirq's ACK) otherwise pass each other there.
# A NIC takes a flow on one CPU itself (one queue, one interrupt).
testbed_create() {
	setup_ns A SW B || return 1
	if [ -n "${DETER_NICS:-}" ]; then
		nic_take "$A" a0 1 && nic_take "$SW" s0 2 &&
		nic_take "$SW" s1 3 && nic_take "$B" b0 4 || return 1
	else
		ip -batch - <<-EOF || return 1
		link add a0 netns $A type veth peer name s0 netns $SW
		link add b0 netns $B type veth peer name s1 netns $SW
		EOF
	fi
	ip -n "$A" -batch - <<-EOF || return 1
	addr add $A_IP/24 dev a0
	link set a0 up
	route add default via $SW_A_IP
	EOF
	ip -n "$B" -batch - <<-EOF || return 1
	addr add $B_IP/24 dev b0
	link set b0 up
	route add default via $SW_B_IP
	EOF
	ip -n "$SW" -batch - <<-EOF || return 1
	addr add $SW_A_IP/24 dev s0
	addr add $SW_B_IP/24 dev s1
	link set s0 up
	link set s1 up
	EOF
	if [ -z "${DETER_NICS:-}" ]; then
		rx_one_cpu "$A" a0 && rx_one_cpu "$B" b0 &&
		rx_one_cpu "$SW" s0 && rx_one_cpu "$SW" s1 || return 1
	else
		# A switch forwards frames as they came, as a veth port does
		# (GRO off): its faults act on frames, not merged packets.
		ip netns exec "$SW" ethtool -K s0 gro off >/dev/null &&
		ip netns exec "$SW" ethtool -K s1 gro off >/dev/null &&
		nic_carrier "$A" a0 && nic_carrier "$SW" s0 &&
		nic_carrier "$SW" s1 && nic_carrier "$B" b0 || return 1
	fi
	ip netns exec "$SW" sysctl -qw net.ipv4.ip_forward=1
}

# link_shape NS DEV DELAY [RATE]: egress delay (e.g. 1ms) and optional rate
# (e.g. 100mbit) on DEV, with a queue deep enough to never drop.
link_shape() {
	local ns=$1 dev=$2 delay=$3 rate=${4:-}

	tc -n "$ns" qdisc replace dev "$dev" root netem delay "$delay" \
		${rate:+rate "$rate"} limit 100000
}

# switch_queue DEV QDISC-ARGS...: replace the switch's egress qdisc on DEV
# (s0 towards A, s1 towards B), e.g.
#   switch_queue s1 tbf rate 100mbit burst 16k limit 30k
#   switch_queue s1 red limit 400000 min 30000 max 90000 avpkt 1500 \
#                burst 30 bandwidth 100mbit probability 1 ecn
#   switch_queue s1 netem loss 1% reorder 10% delay 1ms
switch_queue() {
	local dev=$1

	shift
	tc -n "$SW" qdisc replace dev "$dev" root "$@"
}

# switch_red DEV RATE: the switch's egress on DEV a RATE link whose queue
# is RED marking CE (ECN) above 10 packets, dropping above 30: a RED
# qdisc alone never queues on a veth, which takes every packet at once.
# tbf's burst is one full-size frame: it segments GSO packets, as a link
# of MTU-sized frames does.
switch_red() {
	local dev=$1 rate=$2

	tc -n "$SW" qdisc replace dev "$dev" root handle 1: tbf rate "$rate" \
		burst 1600 latency 1s &&
	tc -n "$SW" qdisc add dev "$dev" parent 1:1 handle 10: red limit 400000 \
		min 15000 max 45000 avpkt 1500 burst 20 bandwidth "$rate" \
		probability 1 ecn
}

# switch_nft NAME RULES: install the switch's fault rules (a chain
# NAME in table inet deter_tb); a failure is a reported one. Every rule
# carries a counter, which switch_faults_check reads back.
switch_nft() {
	ip netns exec "$SW" nft -f - <<-NFT && return 0
	table inet deter_tb {
		chain $1 {
			type filter hook forward priority 0;
			$2
		}
	}
	NFT
	log_test 1 "switch: fault rule $1 installed"
	return 1
}

# switch_drop_first_syn FROM: the switch drops the first SYN from FROM.
switch_drop_first_syn() {
	switch_nft drop_syn "ip saddr $1 tcp flags & (syn | ack) == syn numgen inc mod 1000000000 == 0 counter drop"
}

# switch_drop_first_synack FROM: the switch drops the first SYN-ACK from
# FROM.
switch_drop_first_synack() {
	switch_nft drop_synack "ip saddr $1 tcp flags & (syn | ack) == syn | ack numgen inc mod 1000000000 == 0 counter drop"
}

# switch_drop_first_ack FROM: the switch drops the first pure ACK from
# FROM (no data, no SYN: the handshake's last).
switch_drop_first_ack() {
	switch_nft drop_ack "ip saddr $1 tcp flags == ack ip length <= 52 numgen inc mod 1000000000 == 0 counter drop"
}

# switch_drop_nth_syn FROM N: the switch drops the Nth (1-based) SYN
# from FROM.
switch_drop_nth_syn() {
	switch_nft drop_nth_syn "ip saddr $1 tcp flags & (syn | ack) == syn numgen inc mod 1000000000 == $(($2 - 1)) counter drop"
}

# switch_drop_nth FROM_IP N: drop exactly the Nth (1-based) data-carrying
# packet from FROM_IP that the switch forwards, and nothing else.
switch_drop_nth() {
	switch_nft drop_nth "ip saddr $1 tcp flags & (syn | fin | rst) == 0 ip length > 52 numgen inc mod 1000000000 == $(($2 - 1)) counter drop"
}

# switch_faults_check NAME: every counted rule of the switch's deter_tb
# table matched at least one packet: a fault a scenario injects must
# have happened for its replay to prove anything. Prints one result
# (none when the switch has no such rule); status 1 on a failure.
switch_faults_check() {
	local rules bad

	rules=$(ip netns exec "$SW" nft list table inet deter_tb 2>/dev/null |
		grep -o 'counter packets [0-9]* .*')
	[ -n "$rules" ] || return 0
	bad=$(echo "$rules" | grep '^counter packets 0 ')
	CHECK_RC=0
	[ -z "$bad" ]
	check_err $? "rules that matched no packet: $(echo "$bad" | tr '\n' ';')"
	log_test $CHECK_RC "$1: the switch's faults happened ($(echo "$rules" |
		sed 's/counter packets \([0-9]*\) bytes [0-9]* \(.*\)/\2 \1/' | tr '\n' ' ' | sed 's/ $//'))"
	return $CHECK_RC
}

# switch_delay_first_ack FROM_IP DEV DELAY: the switch holds the first
# pure ACK from FROM_IP (no data, no SYN: the handshake's last) back by
# DELAY on its egress DEV, and nothing else: the rule sends it to the
# third band of a prio qdisc (skb->priority 1:3), a netem delay.
switch_delay_first_ack() {
	local from=$1 dev=$2 delay=$3

	switch_nft delay_ack "ip saddr $from tcp flags == ack ip length <= 52 numgen inc mod 1000000000 == 0 counter meta priority set 1:3" || return 1
	tc -n "$SW" qdisc replace dev "$dev" root handle 1: prio &&
	tc -n "$SW" qdisc add dev "$dev" parent 1:3 handle 30: netem delay "$delay"
}

# rx_one_cpu NS DEV: DEV's receive processing takes each flow on one
# CPU (RPS over the first 32 CPUs, by flow hash), as a NIC's RSS does.
# A veth otherwise processes a packet on the CPU that sent it: a flow's
# packets sent from two CPUs are processed on both at once. They can then reach
# TCP in an order other than the one tcpdump on DEV saw, and one can be
# looked up to a socket that another CPU's FIN moves to time-wait before
# it takes the socket's lock (deter cannot replay that: the replay's
# lookup finds the time-wait socket; docs/nondeterminism.md). With a
# flow on one CPU, only a close() or timer on another CPU can still
# race a segment that way, far more rarely.
rx_one_cpu() {
	local n mask

	# One 32-bit word of the mask (rps_cpus takes comma-separated words).
	n=$(nproc)
	[ "$n" -le 32 ] || n=32
	mask=$(printf %x $(( (1 << n) - 1 )))
	ip netns exec "$1" sh -c "echo $mask > /sys/class/net/$2/queues/rx-0/rps_cpus"
}

# offload NS DEV on|off: TSO, GSO and GRO together.
offload() {
	ip netns exec "$1" ethtool -K "$2" tso "$3" gso "$3" gro "$3" >/dev/null
}

# capture_start NS DEV NAME [FILTER]: tcpdump headers on DEV into
# $TB_TMP/NAME.pcap until capture_stop.
capture_start() {
	local ns=$1 dev=$2 name=$3 filter=${4:-tcp}

	ip netns exec "$ns" tcpdump -i "$dev" -s 128 --immediate-mode -U -n -w "$TB_TMP/$name.pcap" \
		"$filter" 2>"$TB_TMP/$name.tcpdump.log" &
	TB_CAPS+=($!)
	# Wait until tcpdump listens, so no packet is missed.
	for _ in $(seq 50); do
		grep -q "listening on" "$TB_TMP/$name.tcpdump.log" && return 0
		sleep 0.1
	done
	echo "capture on $ns/$dev did not start" >&2
	return 1
}

# capture_stop: stop every capture once its file has stopped growing
# (tcpdump loses what it has not written when signalled), at most 5 s.
capture_stop() {
	local p prev= cur

	[ ${#TB_CAPS[@]} -gt 0 ] || return 0
	for _ in $(seq 16); do
		sleep 0.3
		cur=$(stat -c %s "$TB_TMP"/*.pcap 2>/dev/null | tr '\n' ' ')
		[ "$cur" = "$prev" ] && break
		prev=$cur
	done
	for p in "${TB_CAPS[@]}"; do
		kill -INT "$p" 2>/dev/null
	done
	for p in "${TB_CAPS[@]}"; do
		wait "$p" 2>/dev/null
	done
	TB_CAPS=()
}

# pcap_fields NAME: one line per packet of $TB_TMP/NAME.pcap, IP ID in
# decimal:
#   ip.id src dst tcp.seq tcp.ack flags len window options
pcap_fields() {
	tshark -r "$TB_TMP/$1.pcap" -n -o tcp.relative_sequence_numbers:FALSE \
		-T fields -E separator=' ' \
		-e ip.id -e ip.src -e ip.dst -e tcp.seq -e tcp.ack \
		-e tcp.flags -e tcp.len -e tcp.window_size_value -e tcp.options 2>/dev/null |
	while read -r id rest; do
		echo "$((id)) $rest"
	done
}

# ls_field FIELD: FIELD's value in a line of deter ls --json on stdin: a
# string whole (a status holds commas), else up to the next comma.
ls_field() {
	sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p;t;s/.*\"$1\":\([^,}]*\).*/\1/p"
}

# run_bg NS CMD...: run CMD in NS in the background, killed at cleanup.
run_bg() {
	local ns=$1

	shift
	ip netns exec "$ns" "$@" &
	TB_PIDS+=($!)
}

# wait_listen NS PORT: wait up to 5 s for a TCP listener on PORT in NS.
wait_listen() {
	for _ in $(seq 50); do
		ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	echo "nothing listens on port $2 in $1" >&2
	return 1
}
