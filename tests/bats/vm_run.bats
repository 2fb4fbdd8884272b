#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# testbed/run's argument handling (the VM itself is exercised by make check's vm group).

bats_require_minimum_version 1.5.0
load test_helper

RUN=$DETER_TOP/testbed/run

@test "vm run --help prints usage and exits 0" {
	run "$RUN" --help
	assert_status 0
	[[ "${lines[0]}" == "usage: testbed/run "* ]]
}

@test "vm run without a command is a usage error" {
	run --separate-stderr "$RUN"
	assert_status 2
	[ "${stderr_lines[0]}" = "testbed/run: no command given" ]
}

@test "vm run rejects an unknown option" {
	run --separate-stderr "$RUN" --frob -- true
	assert_status 2
	[ "${stderr_lines[0]}" = "testbed/run: unknown option '--frob'" ]
}

@test "vm run rejects a --plugin it cannot read" {
	run --separate-stderr "$RUN" --plugin /nonexistent/insns.so,out=x -- true
	assert_status 2
	[ "${stderr_lines[0]}" = "testbed/run: --plugin /nonexistent/insns.so: not readable" ]
}

@test "vm run rejects a timeout that is not a number" {
	run --separate-stderr "$RUN" --timeout soon -- true
	assert_status 2
	[ "${stderr_lines[0]}" = "testbed/run: --timeout: 'soon' is not a positive number of seconds" ]
}

@test "vm run rejects a missing kernel image" {
	run --separate-stderr "$RUN" --kernel "$BATS_TEST_TMPDIR/nope" -- true
	assert_status 125
	[ "$stderr" = "testbed/run: kernel image '$BATS_TEST_TMPDIR/nope' not readable" ]
}

@test "vm run --rw needs an existing directory" {
	run --separate-stderr "$RUN" --rw "$BATS_TEST_TMPDIR/none" -- true
	assert_status 2
	[ "${stderr_lines[0]}" = "testbed/run: --rw $BATS_TEST_TMPDIR/none: not a directory" ]
}

# The rest boot the testbed VM (make kernel first); ~10 s each.
vm_ready() {
	"$DETER_TOP/testbed/kernel.sh" image >/dev/null 2>&1 && return 0
	[ -n "${CI:-}" ] && { echo "no testbed kernel under CI" >&2; return 1; }
	skip "no testbed kernel (make kernel)"
}

@test "vm run exits with the command's exit status" {
	vm_ready
	run "$RUN" --timeout 120 -- sh -c 'exit 3'
	assert_status 3
}

@test "vm run gives the guest 2 CPUs and the patched kernel" {
	vm_ready
	run --separate-stderr "$RUN" --timeout 120 -- sh -c 'nproc; uname -r'
	assert_status 0
	[ "${lines[0]}" = 2 ]
	[[ "${lines[1]}" == 6.12.*-deter ]]
}

@test "vm run kills a guest that does not finish in time" {
	vm_ready
	run --separate-stderr "$RUN" --timeout 15 -- sleep infinity
	assert_status 124
	[ "${stderr_lines[-1]}" = "testbed/run: guest did not finish within 15s; killed" ]
}

@test "vm run shares a --rw directory writable at the same path" {
	vm_ready
	run "$RUN" --timeout 120 --rw "$BATS_TEST_TMPDIR" -- sh -c "echo hello > '$BATS_TEST_TMPDIR/out'"
	assert_status 0
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = hello ]
}
