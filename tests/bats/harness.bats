#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The test harness itself: a scenario cannot fail without being counted
# (tests/vm/harness.sh), an injected fault that never happened fails its
# scenario (switch_faults_check), and an empty ground truth never matches
# (egress_diff). Scenarios here are stand-ins; the namespaces are the
# host's own, as the VM's would be.

bats_require_minimum_version 1.5.0
load test_helper

# scenario BODY: a stand-in scenario script named like a real one.
scenario() {
	mkdir -p "$BATS_TEST_TMPDIR/s"
	printf '#!/bin/bash\n%s\n' "$1" > "$BATS_TEST_TMPDIR/s/planted.sh"
}

exec_scenario() {
	run bash -c "source '$DETER_TOP/tests/vm/harness.sh'; scenario_exec '$BATS_TEST_TMPDIR/s/planted.sh'"
}

@test "a scenario that dies in setup is a failure named after it" {
	scenario 'echo "setup failed" >&2; exit 1'
	exec_scenario
	assert_status 0
	[[ "$output" == *"setup failed"* ]]
	grep -qE '^TEST: planted: exited with status 1, reporting no failure +\[FAIL\]$' <<< "$output"
	grep -qx '# scenario: planted ran' <<< "$output"
}

@test "a scenario that exits 0 without a result is a failure" {
	scenario 'exit 0'
	exec_scenario
	grep -qE '^TEST: planted: reported no result +\[FAIL\]$' <<< "$output"
}

@test "a scenario killed by its timeout is a failure" {
	scenario 'sleep 30'
	run bash -c "HARNESS_TIMEOUT=1; source '$DETER_TOP/tests/vm/harness.sh'; scenario_exec '$BATS_TEST_TMPDIR/s/planted.sh'"
	grep -qE '^TEST: planted: exited with status 124, reporting no failure +\[FAIL\]$' <<< "$output"
}

@test "a scenario's own failure is counted once" {
	scenario 'printf "TEST: %-60s [FAIL]\n" x; exit 1'
	exec_scenario
	[ "$(grep -c '^TEST: ' <<< "$output")" = 1 ]
}

@test "a passing scenario adds nothing but its marker" {
	scenario 'printf "TEST: %-60s [ OK ]\n" x; exit 0'
	exec_scenario
	[ "$(grep -c '^TEST: ' <<< "$output")" = 1 ]
	grep -qx '# scenario: planted ran' <<< "$output"
}

@test "a skip is a failure" {
	run bash -c "source '$DETER_TOP/tests/netns/lib.sh'; log_test \$ksft_skip thing"
	grep -qE '^TEST: thing +\[FAIL\]$' <<< "$output"
}

# testbed: the A - switch - B topology in the host's namespaces.
testbed() {
	ip netns add "deter-bats-$$" 2>/dev/null || skip "cannot create network namespaces"
	ip netns del "deter-bats-$$"
	command -v nft >/dev/null || skip "nft not installed (make deps)"
}

@test "a drop rule that never fired fails its scenario" {
	testbed
	run bash -c "source '$DETER_TOP/tests/netns/lib.sh'
		testbed_create || exit 9
		switch_drop_first_syn \$A_IP || exit 9
		switch_faults_check planted"
	assert_status 1
	grep -qE '^TEST: planted: the switch.s faults happened .* +\[FAIL\]$' <<< "$output"
	[[ "$output" == *"rules that matched no packet"* ]]
}

@test "a drop rule that fired passes" {
	testbed
	run bash -c "source '$DETER_TOP/tests/netns/lib.sh'
		testbed_create || exit 9
		switch_drop_first_syn \$A_IP || exit 9
		ip netns exec \$A timeout 2 bash -c \"echo > /dev/tcp/\$B_IP/9\" 2>/dev/null
		switch_faults_check planted"
	assert_status 0
	grep -qE '^TEST: planted: the switch.s faults happened \(drop 1\) +\[ OK \]$' <<< "$output"
}

@test "a rule nft refuses is a reported failure" {
	testbed
	run bash -c "source '$DETER_TOP/tests/netns/lib.sh'
		testbed_create || exit 9
		switch_nft bad 'ip saddr nonsense counter drop'"
	assert_status 1
	grep -qE '^TEST: switch: fault rule bad installed +\[FAIL\]$' <<< "$output"
}

@test "an empty ground truth matches nothing, not even an empty replay" {
	run bash -c "source '$DETER_TOP/tests/replay/lib.sh'
		mkdir -p \$TB_TMP/out && : > \$TB_TMP/empty.truth
		egress_diff \$TB_TMP/out a \$TB_TMP/empty.truth"
	assert_status 1
}
