# SPDX-License-Identifier: GPL-2.0
#
# make bench's shared part (sourced in the testbed VM): the A - switch - B
# testbed with 1 ms per link, the bulk and RPC workloads, and the
# unloaded / armed alternation the CPU figures take.

top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/netns/lib.sh"
DETER=$top/bin/deter
BULK=${DETER_BENCH_BULK_BYTES:-20000000}
RPCS=${DETER_BENCH_RPCS:-2000}
ROUNDS=${DETER_BENCH_ROUNDS:-3}

testbed_create || exit 1
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms

port=6000
# workload NAME: one bulk or RPC connection A -> B on a new port.
workload() {
	port=$((port + 1))
	local srv

	ip netns exec "$B" "$TCPWL" server -b "$B_IP" -p $port \
		$([ "$1" = rpc ] && echo --rpc 200:2000) > /dev/null &
	srv=$!
	wait_listen "$B" $port || return 1
	if [ "$1" = rpc ]; then
		ip netns exec "$A" "$TCPWL" client -c "$B_IP" -p $port --rpc $RPCS:200:2000 > /dev/null
	else
		ip netns exec "$A" "$TCPWL" client -c "$B_IP" -p $port --bytes $BULK > /dev/null
	fi
	wait $srv
}

# record_capture NAME CAP: workload NAME with deter.ko loaded, deter record
# writing into $TB_TMP/logs-CAP and tcpdump -s 128 at A's interface into
# $TB_TMP/CAP.pcap; deter.ko is unloaded after.
record_capture() {
	local rec

	rm -rf "$TB_TMP/logs-$2"
	insmod "$top/deter.ko" 2>/dev/null
	"$DETER" record -o "$TB_TMP/logs-$2" --port $((port + 1)) 2> "$TB_TMP/rec-$2.err" &
	rec=$!
	sleep 1
	capture_start "$A" a0 "$2" "tcp port $((port + 1))" || return 1
	workload "$1"
	capture_stop
	sleep 0.5
	kill -INT $rec
	wait $rec
	rmmod deter
}

# recorder_start: deter record on the next workload's port, armed.
recorder_start() {
	rm -rf "$TB_TMP/logs-cpu"
	"$DETER" record -o "$TB_TMP/logs-cpu" --port $((port + 1)) 2> "$TB_TMP/rec-cpu.err" &
	rec=$!
	for _ in $(seq 100); do
		grep -q "recording into" "$TB_TMP/rec-cpu.err" && return 0
		kill -0 $rec 2>/dev/null || break
		sleep 0.1
	done
	echo "bench: deter record did not start: $(cat "$TB_TMP/rec-cpu.err")" >&2
	return 1
}

# A descriptor nothing is ever written to, for recorded()'s timed waits.
mkfifo "$TB_TMP/idle"
exec {idle_fd}<> "$TB_TMP/idle"

# recorded NAME: workload NAME, then until the recorder has drained,
# encoded, compressed and written both ends' logs: everything recording
# costs but the recorder's start and exit, once per recorder lifetime.
recorded() {
	local logs i

	workload "$1" || return 1
	for ((i = 0; i < 200; i++)); do
		logs=("$TB_TMP"/logs-cpu/*.dlog)
		[ ${#logs[@]} -ge 2 ] && return 0
		# Wait without a fork: an exec of sleep(1) would be counted.
		read -r -t 0.05 -u "$idle_fd"
	done
	echo "bench: deter record wrote no logs" >&2
	return 1
}

# alternate NAME MEASURE: ROUNDS runs of workload NAME, with deter.ko not
# loaded and with recording armed (deter record running), alternating;
# each run is "MEASURE off workload NAME" or "MEASURE on recorded NAME".
alternate() {
	local w=$1 measure=$2 r

	for r in $(seq "$ROUNDS"); do
		"$measure" off workload "$w"
		insmod "$top/deter.ko" || return 1
		recorder_start || return 1
		"$measure" on recorded "$w"
		kill -INT $rec
		wait $rec
		rmmod deter
	done
}
