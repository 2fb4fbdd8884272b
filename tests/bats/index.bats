#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The log directory's index (DIR/index): written by deter index (deter
# record and deter compact append to it), read by deter ls, and never
# trusted over a log that changed since.

bats_require_minimum_version 1.5.0
load test_helper

A=106fbda500000005
B=106fbda500000006
REC=280		# one record: the 248-byte log header, size, mtime, ctime, inode
HDR=16		# the index's own header

setup() {
	[ -x "$DETER" ] || skip "bin/deter not built (make)"
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir logs
	cp -p "$DETER_TOP"/tests/data/*.dlog logs/
}

# put_u32 FILE OFFSET VALUE: overwrite 4 bytes, little-endian.
put_u32() {
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($3 & 255)) $(($3 >> 8 & 255)) \
		$(($3 >> 16 & 255)) $(($3 >> 24 & 255)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

@test "deter index writes DIR/index, 0600, and deter ls lists the same with it" {
	run "$DETER" ls -d logs
	assert_status 0
	before=$output
	run "$DETER" index -d logs
	assert_status 0
	assert_output "logs/index: 2 logs"
	[ "$(stat -c %a logs/index)" = 600 ]
	[ "$(stat -c %s logs/index)" -eq $((HDR + 2 * REC)) ]
	run "$DETER" ls -d logs
	assert_status 0
	assert_output "$before"
}

# opened CMD...: the logs CMD opened (strace), one name per line.
opened() {
	strace -f -qq -e trace=openat -o trace "$@" > /dev/null 2>&1
	sed -n 's/.*"\([^"]*\.dlog\)".*/\1/p' trace | sort -u
}

@test "deter ls reads the index, not the logs, while the logs are as indexed" {
	opened "$DETER" ls -d logs > before
	[ "$(wc -l < before)" -eq 2 ]
	"$DETER" index -d logs
	opened "$DETER" ls -d logs > after
	[ ! -s after ]
	# A log whose bytes changed, even with its size and mtime kept, is read.
	touch -r logs/$A.dlog ref
	printf 'XXXXXXXX' | dd of=logs/$A.dlog bs=1 conv=notrunc status=none
	touch -r ref logs/$A.dlog
	[ "$(opened "$DETER" ls -d logs)" = "logs/$A.dlog" ]
	run --separate-stderr "$DETER" ls -d logs
	assert_status 1
	[ "$stderr" = "deter ls: logs/$A.dlog:0: not a deter log (bad magic)" ]
	# Written anew from the logs, the index leaves it out, and says why.
	run --separate-stderr "$DETER" index -d logs
	assert_status 1
	[ "$stderr" = "deter index: logs/$A.dlog:0: not a deter log (bad magic)" ]
	[ "$output" = "logs/index: 1 log; the ones named above left out" ]
}

@test "a log changed since it was indexed is read from the log" {
	"$DETER" index -d logs
	put_u32 logs/$B.dlog 116 7	# total_retrans; dd moves the mtime
	touch -d '+1 sec' logs/$B.dlog
	run "$DETER" ls -d logs --json
	assert_status 0
	[[ "${lines[1]}" == *"\"id\":\"$B\""*"\"retransmissions\":7,"* ]]
}

@test "an indexed log that is gone is not listed; one not indexed is" {
	"$DETER" index -d logs
	rm logs/$A.dlog
	run "$DETER" ls -d logs
	assert_status 0
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == "$B "* ]]
	cp -p "$DETER_TOP"/tests/data/$A.dlog logs/copy.dlog
	run "$DETER" ls -d logs
	assert_status 0
	[ "${#lines[@]}" -eq 3 ]
}

@test "a damaged index is named with its offset, and the logs are listed anyway" {
	"$DETER" ls -d logs > want
	printf 'not an index at all' > logs/index
	run --separate-stderr "$DETER" ls -d logs
	assert_status 1
	[ "$stderr" = "deter ls: logs/index:0: not a deter index (bad magic); reading every log's header" ]
	[ "$output" = "$(cat want)" ]
	run "$DETER" index -d logs
	assert_status 0
	run --separate-stderr "$DETER" ls -d logs
	assert_status 0
	[ -z "$stderr" ]
}

@test "a record cut short at the end is ignored, and cut off by the next append" {
	"$DETER" index -d logs
	truncate -s -100 logs/index
	run --separate-stderr "$DETER" ls -d logs
	assert_status 0
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 3 ]
	# deter compact rewrites both logs and appends their new records.
	run "$DETER" compact -d logs
	assert_status 0
	[ "$(stat -c %s logs/index)" -eq $((HDR + 3 * REC)) ]
	# The new records speak for the rewritten logs.
	[ -z "$(opened "$DETER" ls -d logs)" ]
}

@test "deter index with an unreadable directory or an argument fails clearly" {
	run --separate-stderr "$DETER" index -d nowhere
	assert_status 1
	[ "$stderr" = "deter index: nowhere: No such file or directory" ]
	run --separate-stderr "$DETER" index -d logs extra
	assert_status 2
	[ "${stderr_lines[0]}" = "deter index: unexpected argument 'extra'" ]
}

@test "deter ls --open also lists logs being written (part files), as open" {
	cp -p logs/$A.dlog logs/.$A.dlog.part
	mv logs/$A.dlog logs-A.dlog
	printf 'a frame being written' >> logs/.$A.dlog.part
	run "$DETER" ls -d logs
	assert_status 0
	[ "${#lines[@]}" -eq 2 ]
	run "$DETER" ls -d logs --open
	assert_status 0
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[1]}" == "$A "*" open" ]]
	run "$DETER" show logs/.$A.dlog.part
	assert_status 0
	[[ "${lines[0]}" == "connection $A "* ]]
	# A log (not a part file) with bytes past its body is still an error.
	cat logs-A.dlog > logs/$A.dlog
	printf 'x' >> logs/$A.dlog
	run --separate-stderr "$DETER" show logs/$A.dlog
	assert_status 1
	[[ "$stderr" == "deter show: logs/$A.dlog:"*"header says"* ]]
}
