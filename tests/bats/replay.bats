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

# log_pair_with_status FILE BYTE: copies of the golden pair as a.dlog and
# b.dlog, FILE's status (header offset 108, DETER_LOG_*) set to BYTE.
log_pair_with_status() {
	cp "$DATA/$A.dlog" a.dlog
	cp "$DATA/$B.dlog" b.dlog
	printf "\\x$2" | dd of="$1" bs=1 seek=108 conv=notrunc status=none
}

@test "deter replay of an incomplete log refuses it" {
	log_pair_with_status b.dlog 02	# DETER_LOG_NOT_CLOSED
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

@test "deter replay of a log with missing values refuses it" {
	log_pair_with_status a.dlog 08	# DETER_LOG_MISSING_VALUES
	run --separate-stderr "$DETER" replay a.dlog b.dlog
	assert_status 1
	[ "$stderr" = "deter replay: a.dlog: incomplete log (missing-values): cannot replay" ]
	run "$DETER" ls -d . --json
	[[ "$output" == *'"incomplete":true,"status":"incomplete,missing-values"'* ]]
}

@test "deter replay of a log whose calls went through another layer refuses it" {
	log_pair_with_status a.dlog 20	# DETER_LOG_UNSEEN_CALLS
	run --separate-stderr "$DETER" replay a.dlog b.dlog
	assert_status 1
	[ "$stderr" = "deter replay: a.dlog: incomplete log (unseen-calls): cannot replay" ]
	run "$DETER" ls -d . --json
	[[ "$output" == *'"incomplete":true,"status":"incomplete,unseen-calls"'* ]]
}

@test "deter replay --kernel without --vm is a usage error" {
	run --separate-stderr "$DETER" replay --kernel /boot/vmlinuz "$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 2
	[ "${stderr_lines[0]}" = "deter replay: --kernel needs --vm" ]
}

@test "deter replay --vm --keep is a usage error" {
	run --separate-stderr "$DETER" replay --vm --keep "$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 2
	[[ "${stderr_lines[0]}" == "deter replay: --keep and --vm are exclusive"* ]]
}

@test "deter replay --vm --keep-host-sysctls is a usage error" {
	run --separate-stderr "$DETER" replay --vm --keep-host-sysctls "$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 2
	[[ "${stderr_lines[0]}" == "deter replay: --keep-host-sysctls and --vm are exclusive"* ]]
}

@test "deter replay --vm without the VM runner says where it looked" {
	run --separate-stderr env DETER_VM_RUN="$BATS_TEST_TMPDIR/none/run" \
		"$DETER" replay --vm "$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 1
	[[ "$stderr" == "deter replay: --vm: $BATS_TEST_TMPDIR/none/run: No such file or directory ("*"set DETER_VM_RUN)" ]]
}

@test "deter replay --vm with an unreadable kernel image names it" {
	run --separate-stderr "$DETER" replay --vm --kernel "$BATS_TEST_TMPDIR/bzImage" \
		"$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 1
	[ "$stderr" = "deter replay: --kernel $BATS_TEST_TMPDIR/bzImage: No such file or directory" ]
}

@test "deter replay --vm hands the runner the shares and the guest's replay" {
	cp "$DATA/$A.dlog" "$DATA/$B.dlog" .
	cat > run <<'SH'
#!/bin/sh
printf '%s\n' "$@" > "$(dirname "$0")/args"
exit 0
SH
	chmod +x run
	touch deter.ko
	run --separate-stderr env DETER_VM_RUN="$PWD/run" DETER_KO="$PWD/deter.ko" \
		"$DETER" replay --vm --kernel "$PWD/deter.ko" -n 2 --tcpdump "$B.dlog" "$A.dlog"
	assert_status 0
	[ -d "replay-$B" ]
	args=$(tr '\n' ' ' < args)
	[[ "$args" == "--timeout "*" --kernel $PWD/deter.ko "* ]]
	[[ "$args" == *" --ro $PWD --rw $PWD/replay-$B -- /bin/sh -c "* ]]
	[[ "$args" == *" deter-vm $PWD/deter.ko $DETER_TOP/bin/deter replay $PWD/$B.dlog $PWD/$A.dlog -o $PWD/replay-$B --pcap $PWD/replay-$B/replay --repeat 2 --timeout 30 " ]]
}

@test "deter replay --vm passes on the guest replay's exit status and the VM's failures" {
	printf '#!/bin/sh\nexit 1\n' > run
	chmod +x run
	touch deter.ko
	run --separate-stderr env DETER_VM_RUN="$PWD/run" DETER_KO="$PWD/deter.ko" \
		"$DETER" replay --vm "$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 1
	printf '#!/bin/sh\nexit 124\n' > run
	run --separate-stderr env DETER_VM_RUN="$PWD/run" DETER_KO="$PWD/deter.ko" \
		"$DETER" replay --vm "$DATA/$A.dlog" "$DATA/$B.dlog"
	assert_status 1
	[[ "$stderr" == "deter replay: --vm: the testbed VM did not finish within "*" s" ]]
}
