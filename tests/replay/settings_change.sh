#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: settings TCP reads, changed during a connection. deter.ko
# logs the settings a connection depends on that are not the socket's
# own (its namespace's sysctls, the route's metrics, the congestion
# controls' module parameters) at its start; one changed later is read
# by TCP at moments the log cannot place. Four connections, A to
# B:5201, 8 MB each over 20 Mbit/s (3.2 s), each change made a fifth
# of a second after A's end is established:
#   1. tcp_vegas's alpha goes from 2 to 3: a setting of a congestion
#      control neither end uses;
#   2. A's namespace's tcp_wmem max goes from 65536 to 4194304 (A's
#      send buffer may grow past 64 KiB from then on);
#   3. tcp_cubic's beta goes from 717 to 512 (global: both ends; deter
#      record hands it to deter.ko within a second);
#   4. A's default route gets rto_min 50ms (the route cache's generation
#      moves on, and A's next send looks its route up again).
# Ground truth that each change came during its connection: its time
# against the first and last packet tcpdump saw of it. The logs of the
# ends that read a changed setting (A's of 2 and 4, both of 3) must say
# "complete,settings-changed", `deter show` naming the setting with both
# values; the others (both of 1, B's of 2 and 4) "complete". deter
# replay replays each pair with the settings at the start, saying so in
# a line naming the change, and verifies itself as ever: 3 and 4 (no
# loss, no RTO: neither setting can matter) must verify, their egress
# identical to tcpdump's; 2 must verify so, or diverge, saying where.
source "$(dirname "$0")/lib.sh"

CUBIC=/sys/module/tcp_cubic/parameters
VEGAS=/sys/module/tcp_vegas/parameters
host_keep $CUBIC/beta $VEGAS/alpha || exit $ksft_fail
BETA_ORIG=$(cat $CUBIC/beta)
ALPHA_ORIG=$(cat $VEGAS/alpha)

scenario_testbed off 20mbit || exit $ksft_fail
ip netns exec "$A" sysctl -qw net.ipv4.tcp_wmem="4096 16384 65536"
log_test $? "settings_change: A's tcp_wmem max 65536"
[ "$BETA_ORIG $ALPHA_ORIG" = "717 2" ]
log_test $? "settings_change: tcp_cubic's beta and tcp_vegas's alpha at their defaults ($BETA_ORIG, $ALPHA_ORIG)"

# change_during N CMD...: connection N, with CMD run a fifth of a second
# after A's end is established; CMD's time into $TB_TMP/change.N.
change_during() {
	local n=$1 wl

	shift
	tcpwl_pair '' '--bytes 8000000' &
	wl=$!
	for _ in $(seq 100); do
		[ -n "$(ip netns exec "$A" ss -Htn state established '( dport = :5201 )')" ] &&
			break
		sleep 0.1
	done
	sleep 0.2
	"$@" || return 1
	date +%s.%N > "$TB_TMP/change.$n"
	wait $wl
}

workload() {
	change_during 1 sh -c "echo 3 > $VEGAS/alpha" &&
		echo "$ALPHA_ORIG" > $VEGAS/alpha &&
		change_during 2 ip netns exec "$A" sysctl -qw \
			net.ipv4.tcp_wmem="4096 16384 4194304" &&
		change_during 3 sh -c "echo 512 > $CUBIC/beta" &&
		echo "$BETA_ORIG" > $CUBIC/beta &&
		sleep 1.5 &&	# deter record's next look: 4 starts with 717
		change_during 4 ip -n "$A" route change default via "$SW_A_IP" rto_min 50ms
}

# A's ports, oldest connection first, and each end's log id.
conn_port() {
	sed -n "s/.*\"local\":\"$A_IP:\([0-9]*\)\",\"remote\":\"$B_IP:5201\".*/\1/p" \
		"$TB_TMP/ls.json" | sed -n "${1}p"
}

# settings_check N WHAT CHANGED_A CHANGED_B: connection N's logs are
# "complete,settings-changed" (1), `deter show` naming WHAT, or
# "complete" (0); A_LOG is A's.
settings_check() {
	local n=$1 what=$2 port id end ch first last t

	port=$(conn_port "$n")
	CHECK_RC=0
	[ -n "$port" ]
	check_err $? "no log of connection $n: $(cat "$TB_TMP/ls.json")"
	if [ -f "$TB_TMP/change.$n" ]; then
		t=$(cat "$TB_TMP/change.$n")
		first=$(tcpdump -nr "$TB_TMP/a0.pcap" -tt "src port $port" 2>/dev/null |
			head -1 | cut -d ' ' -f 1)
		last=$(tcpdump -nr "$TB_TMP/a0.pcap" -tt "src port $port" 2>/dev/null |
			tail -1 | cut -d ' ' -f 1)
		awk -v f="$first" -v t="$t" -v l="$last" 'BEGIN { exit !(f < t && t < l) }'
		check_err $? "connection $n: the change at $t, not within tcpdump's $first .. $last"
	fi
	for end in a b; do
		if [ $end = a ]; then
			id=$(log_id "$A_IP:$port" "$B_IP:5201")
			A_LOG=$id
			ch=$3
		else
			id=$(log_id "$B_IP:5201" "$A_IP:$port")
			ch=$4
		fi
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show.$n.$end"
		if [ "$ch" = 0 ]; then
			grep "\"id\":\"$id\"" "$TB_TMP/ls.json" | grep -q '"status":"complete"'
			check_err $? "connection $n: $end's log $id not complete: $(grep "\"id\":\"$id\"" "$TB_TMP/ls.json") $(grep missing "$TB_TMP/show.$n.$end")"
			continue
		fi
		grep "\"id\":\"$id\"" "$TB_TMP/ls.json" |
			grep -q '"incomplete":false,"status":"complete,settings-changed"'
		check_err $? "connection $n: $end's log $id not complete,settings-changed: $(grep "\"id\":\"$id\"" "$TB_TMP/ls.json")"
		grep -q "missing.*a setting TCP reads changed during the connection: $what" \
			"$TB_TMP/show.$n.$end"
		check_err $? "connection $n: $end's log $id does not name $what: $(grep missing "$TB_TMP/show.$n.$end")"
	done
	log_test $CHECK_RC "settings_change: connection $n's logs: A's $([ "$3" = 0 ] && echo complete || echo "says ${what//\\/}"), B's $([ "$4" = 0 ] && echo complete || echo "says ${what//\\/}")"
}

# settings_replay N WHAT MUST: A_LOG's pair replays, deter replay saying
# it does so with the settings at the start, naming WHAT; it verifies,
# both hosts' egress identical to tcpdump's of connection N, or (MUST
# "verify" but not) exits 1 saying where it diverged.
settings_replay() {
	local n=$1 what=$2 out=$TB_TMP/replay.$1 port rc h same=1 how

	port=$(conn_port "$n")
	mkdir -p "$out"
	CHECK_RC=0
	# With a loss or an RTO, beta and rto_min could matter after all.
	grep "\"id\":\"$A_LOG\"" "$TB_TMP/ls.json" | grep -q '"retransmissions":0,"rtos":0,' ||
		set -- "$1" "$2" any
	"$DETER" replay -d "$LOGS" "$A_LOG" -o "$out" --pcap "$out/r" > "$out/replay.out" 2>&1
	rc=$?
	grep -Eq "^deter replay: .*$A_LOG.dlog: event [0-9]+: a setting TCP reads changed during the connection: $what( \([0-9]+ more changes?, the last by event [0-9]+\))?; replayed with the settings at its start$" \
		"$out/replay.out"
	check_err $? "connection $n: deter replay did not say $what changed: $(head -3 "$out/replay.out")"
	hdrseq_split "$TB_TMP/a0.pcap" "$out/a.truth" "src port $port"
	hdrseq_split "$TB_TMP/b0.pcap" "$out/b.truth" "dst port $port"
	for h in a b; do
		egress_diff "$out" "$h" "$out/$h.truth" || same=0
	done
	if [ $rc -eq 0 ] && [ $same = 1 ]; then
		how="verified, egress identical to tcpdump's"
	elif [ "$3" != verify ] && [ $rc -eq 1 ] &&
	     grep -Eq "^replay $A_LOG: (diverged|stuck) at " "$out/replay.out"; then
		how=$(tail -1 "$out/replay.out" | cut -c1-90)
	else
		check_err 1 "connection $n: deter replay exited $rc, egress $([ $same = 1 ] || echo "not ")identical: $(tail -2 "$out/replay.out") $(head -3 "$out/a.diff" "$out/b.diff" | cut -c1-200)"
		how="exit $rc"
	fi
	log_test $CHECK_RC "settings_change: connection $n replays with its start's settings, saying so ($how)"
}

scenario_record settings_change || exit $ksft_fail
grep -q "^deter record: 4 logs say a setting TCP reads changed during the connection" "$TB_TMP/record.err"
log_test $? "settings_change: deter record says 4 logs' settings changed ($(grep -c settings-changed "$TB_TMP/ls.json") in deter ls)"
settings_check 1 "" 0 0	# vegas: neither end's
settings_check 2 'net.ipv4.tcp_wmem\[2\] 65536 -> 4194304' 1 0
settings_replay 2 'net.ipv4.tcp_wmem\[2\] 65536 -> 4194304' any
settings_check 3 'tcp_cubic.beta 717 -> 512' 1 1
settings_replay 3 'tcp_cubic.beta 717 -> 512' verify
settings_check 4 'route.rto_min default -> 50' 1 0
settings_replay 4 'route.rto_min default -> 50' verify
exit $RET
