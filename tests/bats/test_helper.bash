# SPDX-License-Identifier: GPL-2.0
# Shared set-up for deter's bats tests.

DETER_TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DETER=$DETER_TOP/bin/deter

setup() {
	[ -x "$DETER" ] || skip "bin/deter not built (make)"
	cd "$BATS_TEST_TMPDIR" || return 1
}

# assert_status N: the last `run` exited with N.
assert_status() {
	if [ "$status" -ne "$1" ]; then
		echo "expected exit status $1, got $status; output:" >&2
		echo "$output" >&2
		return 1
	fi
}

# assert_output TEXT: the last `run` printed exactly TEXT.
assert_output() {
	if [ "$output" != "$1" ]; then
		printf 'expected output:\n%s\nactual output:\n%s\n' "$1" "$output" >&2
		return 1
	fi
}
