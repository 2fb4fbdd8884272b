#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# deter ls and deter show on the golden logs of tests/data, and on broken copies.

bats_require_minimum_version 1.5.0
load test_helper

DATA=$DETER_TOP/tests/data
A=106fbda500000005
B=106fbda500000006

@test "deter ls lists both ends of the golden connection" {
	run "$DETER" ls -d "$DATA"
	assert_status 0
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "ID "*"STATUS" ]]
	[[ "${lines[1]}" == "$A  10.0.1.1:60268 "*"10.0.2.1:5201 "*" complete" ]]
	[[ "${lines[2]}" == "$B  10.0.2.1:5201 "*"10.0.1.1:60268 "*" complete" ]]
}

@test "deter ls --json gives one object per connection with its counters" {
	run "$DETER" ls -d "$DATA" --json
	assert_status 0
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == "{\"id\":\"$A\",\"local\":\"10.0.1.1:60268\",\"remote\":\"10.0.2.1:5201\","* ]]
	[[ "${lines[0]}" == *"\"retransmissions\":1,\"rtos\":0,\"drops\":0,"* ]]
	[[ "${lines[1]}" == *"\"drops\":1,\"reorders\":0,\"ce_marks\":0,\"zero_windows\":0,\"incomplete\":false,"* ]]
}

@test "deter ls --flagged keeps connections with retransmissions or drops" {
	run "$DETER" ls -d "$DATA" --flagged --json
	assert_status 0
	[ "${#lines[@]}" -eq 2 ]
	run "$DETER" ls -d "$DATA" --incomplete --json
	assert_status 0
	[ "${#lines[@]}" -eq 0 ]
}

@test "deter show by id prefix prints the connection and its events" {
	run "$DETER" show -d "$DATA" 106fbda500000006
	assert_status 0
	[ "${lines[0]}" = "connection $B  10.0.2.1:5201 -> 10.0.1.1:60268  (passive open, host deter-vm, netns 4026532197)" ]
	[[ "$output" == *"net        gap ipid "*" count 1"* ]]
	[[ "${lines[-1]}" == *"summary    snd_una "* ]]
}

@test "deter show --stats accounts for every event and body byte" {
	run "$DETER" show --stats -d "$DATA" $A
	assert_status 0
	[[ "${lines[4]}" == "file       1469 B: header 248 B, body 1221 B compressed from 1828 B"* ]]
	[ "${lines[5]}" = "events     336 in 337 records" ]
	# The table's events and bytes add up to the log's.
	sums=$(printf '%s\n' "${lines[@]:7}" | awk '{ ev += $(NF - 3); b += $(NF - 2) } END { print ev, b }')
	[ "$sums" = "336 1828" ]
	[[ "$output" == *"value   clock_ns                 89       89       570"* ]]
}

@test "deter show --json --stats is a usage error" {
	run --separate-stderr "$DETER" show --json --stats -d "$DATA" $A
	assert_status 2
	[ "${stderr_lines[0]}" = "deter show: --json and --stats do not go together" ]
}

@test "deter show of an ambiguous prefix is an error" {
	run --separate-stderr "$DETER" show -d "$DATA" 106f
	assert_status 1
	[ "$stderr" = "deter show: 106f: ambiguous id prefix in $DATA (2 matches)" ]
}

@test "deter show of an unknown id says so" {
	run --separate-stderr "$DETER" show -d "$DATA" ffff
	assert_status 1
	[ "$stderr" = "deter show: ffff: no such connection in $DATA" ]
}

@test "deter show without a connection is a usage error" {
	run --separate-stderr "$DETER" show -d "$DATA"
	assert_status 2
	[ "${stderr_lines[0]}" = "deter show: no connection given" ]
}

@test "a truncated log is rejected naming file and offset" {
	cp "$DATA/$A.dlog" t.dlog
	truncate -s 500 t.dlog
	run --separate-stderr "$DETER" show t.dlog
	assert_status 1
	[ "$stderr" = "deter show: t.dlog:500: file is 500 bytes, header says 1469" ]
}

@test "a log of another format version is rejected" {
	cp "$DATA/$A.dlog" v.dlog
	printf '\x13' | dd of=v.dlog bs=1 seek=8 conv=notrunc status=none
	run --separate-stderr "$DETER" show v.dlog
	assert_status 1
	[ "$stderr" = "deter show: v.dlog:8: log format 19 is not supported (this deter reads format 18)" ]
}

@test "a file that is not a log is rejected" {
	echo "hello" > n.dlog
	run --separate-stderr "$DETER" show n.dlog
	assert_status 1
	[ "$stderr" = "deter show: n.dlog:0: not a deter log (bad magic)" ]
}

@test "a corrupt body is one error line, never a crash" {
	for off in 256 300 400 600 800 1000; do
		cp "$DATA/$A.dlog" c.dlog
		printf '\xff\xff' | dd of=c.dlog bs=1 seek=$off conv=notrunc status=none
		run --separate-stderr "$DETER" show c.dlog
		[ "$status" -eq 1 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "deter show: c.dlog:"* ]]
	done
}

@test "deter ls reports a broken log and still lists the others" {
	mkdir d
	cp "$DATA"/*.dlog d/
	echo junk > d/0000000000000001.dlog
	run --separate-stderr "$DETER" ls -d d
	assert_status 1
	[ "$stderr" = "deter ls: d/0000000000000001.dlog:0: not a deter log (bad magic)" ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "deter ls of a missing directory fails" {
	run --separate-stderr "$DETER" ls -d nowhere
	assert_status 1
	[ "$stderr" = "deter ls: nowhere: No such file or directory" ]
}

@test "deter record without deter.ko says how to load it" {
	[ -e /sys/kernel/debug/deter/control ] && skip "deter.ko is loaded here"
	run --separate-stderr "$DETER" record -o logs
	assert_status 1
	[ "$stderr" = "deter record: deter.ko is not loaded (/sys/kernel/debug/deter/control missing): insmod deter.ko" ]
}

@test "deter record rejects a zstd level outside 1-19" {
	for z in 0 20 x; do
		run --separate-stderr "$DETER" record --zstd-level $z
		assert_status 2
		[ "${stderr_lines[0]}" = "deter record: --zstd-level: '$z' is not a level from 1 to 19" ]
	done
}

@test "deter record --help names the zstd level and its default" {
	run "$DETER" record --help
	assert_status 0
	[[ "$output" == *"-z, --zstd-level N"*"default: about level 3's CPU, level 4's size)"* ]]
}

@test "deter record rejects a bad --max-size or --max-age" {
	for v in 0 -1 10X 10MB M 1.5G 99999999999999999999; do
		run --separate-stderr "$DETER" record --max-size "$v"
		assert_status 2
		[ "${stderr_lines[0]}" = "deter record: --max-size: '$v' is not a size (bytes, or a number and K, M, G or T)" ]
	done
	for v in 0 1w 2x h 101000d; do
		run --separate-stderr "$DETER" record --max-age "$v"
		assert_status 2
		[ "${stderr_lines[0]}" = "deter record: --max-age: '$v' is not an age (seconds, or a number and s, m, h or d)" ]
	done
}

@test "deter record takes --max-size and --max-age, and --help says what they remove" {
	[ -e /sys/kernel/debug/deter/control ] && skip "deter.ko is loaded here"
	# Parsed; then it stops for want of deter.ko, as here.
	for a in "--max-size 4096" "--max-size 10m" "-s 1G" "--max-age 90" "-a 2h" "--max-age 7D"; do
		run --separate-stderr "$DETER" record -o d $a
		assert_status 1
		[[ "${stderr_lines[0]}" == "deter record: deter.ko is not loaded"* ]]
	done
	run "$DETER" record --help
	assert_status 0
	[[ "$output" == *"-s, --max-size SIZE"*"flagged ones (deter ls"*"-a, --max-age AGE"*"every log in DIR counts and may be removed"*"Both ends of a connection recorded into DIR go together."* ]]
}

@test "deter record rejects a bad port" {
	run --separate-stderr "$DETER" record --port 0
	assert_status 2
	[ "${stderr_lines[0]}" = "deter record: --port: '0' is not a port" ]
}

@test "deter compact recompresses every log in place: same events, smaller, 0600" {
	mkdir d
	cp "$DATA/$A.dlog" "$DATA/$B.dlog" d/
	chmod 644 d/*.dlog
	run "$DETER" compact -d d
	assert_status 0
	[[ "$output" == "2 logs: 3139 B -> "*" B ("*" %)" ]]
	for id in $A $B; do
		[ "$(stat -c %a d/$id.dlog)" = 600 ]
		[ "$(stat -c %s d/$id.dlog)" -lt "$(stat -c %s "$DATA/$id.dlog")" ]
		cmp <("$DETER" show "$DATA/$id.dlog") <("$DETER" show d/$id.dlog)
	done
	# Compacting again finds nothing smaller and leaves the logs.
	sizes=$(stat -c %s d/*.dlog)
	run "$DETER" compact -d d $A $B -z 3
	assert_status 0
	[ "$(stat -c %s d/*.dlog)" = "$sizes" ]
}

@test "deter compact leaves a log it cannot decode as it was, in one line" {
	mkdir d
	cp "$DATA/$A.dlog" d/
	cp "$DATA/$B.dlog" d/c.dlog
	printf '\xff\xff' | dd of=d/c.dlog bs=1 seek=600 conv=notrunc status=none
	cp d/c.dlog c.copy
	run --separate-stderr "$DETER" compact -d d
	assert_status 1
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == "deter compact: d/c.dlog:body+"[0-9]*": "* ]]
	[[ "$output" == "1 log: 1469 B -> "*"; the ones named above left as they were" ]]
	cmp d/c.dlog c.copy
	[ "$(ls -a d | grep -c tmp)" -eq 0 ]
}

@test "deter compact rejects a zstd level outside 1-19" {
	run --separate-stderr "$DETER" compact --zstd-level 20
	assert_status 2
	[ "${stderr_lines[0]}" = "deter compact: --zstd-level: '20' is not a level from 1 to 19" ]
}

@test "deter compact leaves a link alone" {
	mkdir d
	cp "$DATA/$A.dlog" d/
	ln -s "$A.dlog" d/l.dlog
	run --separate-stderr "$DETER" compact d/l.dlog
	assert_status 1
	[ "$stderr" = "deter compact: d/l.dlog: not a regular file with one link; left as it is" ]
	[ -L d/l.dlog ]
	cmp d/$A.dlog "$DATA/$A.dlog"
}
