#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# deter replay's command line: help, usage errors, and logs that cannot be
# replayed (missing, not a pair, truncated, incomplete), each one line.
# Replays themselves run in the VM (tests/netns/).

bats_require_minimum_version 1.5.0
load test_helper

DATA=$DETER_TOP/tests/data
A=106fbda500000005
B=106fbda500000006

@test "deter replay --help prints its usage and exits 0" {
	run "$DETER" replay --help
	assert_status 0
	[ "${lines[0]}" = "usage: deter replay [-d DIR] [OPTION]... ID" ]
	[[ "$output" == *"--repeat N"* ]]
	[[ "$output" == *"--timeout S"* ]]
}

@test "deter help replay equals deter replay --help" {
	run "$DETER" replay --help
	help=$output
	run "$DETER" help replay
	assert_status 0
	assert_output "$help"
}

@test "deter replay without a connection is a usage error" {
	run --separate-stderr "$DETER" replay
	assert_status 2
	[ "$stderr" = "deter replay: no connection given
Try 'deter replay --help'." ]
}

@test "deter replay with three logs is a usage error" {
	run --separate-stderr "$DETER" replay a.dlog b.dlog c.dlog
	assert_status 2
	[ "${stderr_lines[0]}" = "deter replay: unexpected argument 'c.dlog'" ]
}

@test "deter replay rejects an unknown option" {
	run --separate-stderr "$DETER" replay --bogus "$A"
	assert_status 2
	[ "${stderr_lines[0]}" = "deter replay: unknown option '--bogus'" ]
}

@test "deter replay rejects a zero repeat count and timeout" {
	run --separate-stderr "$DETER" replay --repeat 0 "$A"
	assert_status 2
	[ "${stderr_lines[0]}" = "deter replay: --repeat: '0' is not a positive number" ]
	run --separate-stderr "$DETER" replay --timeout x "$A"
	assert_status 2
	[ "${stderr_lines[0]}" = "deter replay: --timeout: 'x' is not a number of seconds" ]
}

@test "deter replay --vm says it is not supported yet" {
	run --separate-stderr "$DETER" replay --vm "$A"
	assert_status 1
	[ "$stderr" = "deter replay: --vm: not supported yet" ]
}

@test "deter replay of a missing log names it" {
	run --separate-stderr "$DETER" replay -d logs "$A"
	assert_status 1
	[ "$stderr" = "deter replay: logs/$A.dlog: No such file or directory" ]
}

@test "deter replay of a log without its peer in the directory says so" {
	mkdir d
	cp "$DATA/$A.dlog" d/
	run --separate-stderr "$DETER" replay -d d "$A"
	assert_status 1
	[ "$stderr" = "deter replay: d/$A.dlog: no peer log in d (none is 10.0.2.1:5201 -> 10.0.1.1:60268 with ISNs 3991922170/357393988)" ]
}

@test "deter replay of two logs that are not a pair names the second" {
	cp "$DATA/$A.dlog" a.dlog
	cp "$DATA/$A.dlog" other.dlog
	run --separate-stderr "$DETER" replay a.dlog other.dlog
	assert_status 1
	[ "$stderr" = "deter replay: other.dlog: not the peer of a.dlog (10.0.1.1:60268 -> 10.0.2.1:5201, expected 10.0.2.1:5201 -> 10.0.1.1:60268)" ]
}

@test "deter replay of one log twice is an error" {
	cp "$DATA/$A.dlog" a.dlog
	run --separate-stderr "$DETER" replay a.dlog a.dlog
	assert_status 1
	[ "$stderr" = "deter replay: a.dlog: the same log twice: give both ends' logs" ]
}

@test "deter replay of a pair with swapped ISNs that do not match is an error" {
	cp "$DATA/$A.dlog" a.dlog
	cp "$DATA/$B.dlog" b.dlog
	# b's iss (offset 80) off by one.
	printf '\x67' | dd of=b.dlog bs=1 seek=80 conv=notrunc status=none
	run --separate-stderr "$DETER" replay a.dlog b.dlog
	assert_status 1
	[[ "$stderr" == "deter replay: b.dlog: not the peer of a.dlog (ISNs "* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
}

@test "deter replay of a truncated log is one error line naming file and offset" {
	cp "$DATA/$A.dlog" a.dlog
	cp "$DATA/$B.dlog" b.dlog
	truncate -s 500 b.dlog
	run --separate-stderr "$DETER" replay a.dlog b.dlog
	assert_status 1
	[[ "$stderr" == "deter replay: b.dlog:500: file is 500 bytes, header says "* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
}

@test "deter replay does not take a truncated log in the directory for the peer" {
	mkdir d
	cp "$DATA/$A.dlog" "$DATA/$B.dlog" d/
	truncate -s 500 "d/$B.dlog"
	run --separate-stderr "$DETER" replay -d d "$A"
	assert_status 1
	[ "$stderr" = "deter replay: d/$A.dlog: no peer log in d (none is 10.0.2.1:5201 -> 10.0.1.1:60268 with ISNs 3991922170/357393988; unreadable logs skipped)" ]
}

@test "deter replay of an incomplete log refuses it" {
	cp "$DATA/$A.dlog" a.dlog
	cp "$DATA/$B.dlog" b.dlog
	# status (offset 108): DETER_LOG_NOT_CLOSED.
	printf '\x02' | dd of=b.dlog bs=1 seek=108 conv=notrunc status=none
	run --separate-stderr "$DETER" replay a.dlog b.dlog
	assert_status 1
	[ "$stderr" = "deter replay: b.dlog: incomplete log (not-closed): cannot replay" ]
}

@test "deter replay without deter.ko says how to load it" {
	[ "$(id -u)" = 0 ] || skip "needs root to get past the CAP_NET_ADMIN check"
	run --separate-stderr env DETER_DEBUGFS="$BATS_TEST_TMPDIR/none" \
		"$DETER" replay "$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 1
	[ "$stderr" = "deter replay: $BATS_TEST_TMPDIR/none/replay missing: deter.ko is not loaded (insmod deter.ko) or this kernel lacks deter's replay hooks" ]
	[ ! -e "replay-$A" ]
}

@test "deter replay finds the peer log by id in the directory" {
	[ "$(id -u)" = 0 ] || skip "needs root to get past the CAP_NET_ADMIN check"
	run --separate-stderr env DETER_DEBUGFS="$BATS_TEST_TMPDIR/none" \
		"$DETER" replay -d "$DATA" "$B"
	assert_status 1
	[[ "$stderr" == *"/none/replay missing: deter.ko is not loaded"* ]]
}
