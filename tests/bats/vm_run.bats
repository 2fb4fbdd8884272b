#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# tests/vm/run's argument handling (the VM itself is exercised by make check's vm group).

bats_require_minimum_version 1.5.0
load test_helper

RUN=$DETER_TOP/tests/vm/run

@test "vm run --help prints usage and exits 0" {
	run "$RUN" --help
	assert_status 0
	[[ "${lines[0]}" == "usage: tests/vm/run "* ]]
}

@test "vm run without a command is a usage error" {
	run --separate-stderr "$RUN"
	assert_status 2
	[ "${stderr_lines[0]}" = "tests/vm/run: no command given" ]
}

@test "vm run rejects an unknown option" {
	run --separate-stderr "$RUN" --frob -- true
	assert_status 2
	[ "${stderr_lines[0]}" = "tests/vm/run: unknown option '--frob'" ]
}

@test "vm run rejects a timeout that is not a number" {
	run --separate-stderr "$RUN" --timeout soon -- true
	assert_status 2
	[ "${stderr_lines[0]}" = "tests/vm/run: --timeout: 'soon' is not a positive number of seconds" ]
}

@test "vm run rejects a missing kernel image" {
	run --separate-stderr "$RUN" --kernel "$BATS_TEST_TMPDIR/nope" -- true
	assert_status 125
	[ "$stderr" = "tests/vm/run: kernel image '$BATS_TEST_TMPDIR/nope' not readable" ]
}

@test "vm run --rw needs an existing directory" {
	run --separate-stderr "$RUN" --rw "$BATS_TEST_TMPDIR/none" -- true
	assert_status 2
	[ "${stderr_lines[0]}" = "tests/vm/run: --rw $BATS_TEST_TMPDIR/none: not a directory" ]
}
