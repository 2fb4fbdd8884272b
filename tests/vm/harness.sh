# SPDX-License-Identifier: GPL-2.0
#
# How the VM suite turns a scenario's run into results it cannot lose.
# Sourced by tests/vm/suite (in the VM) and by tests/bats/harness.bats
# (on the host, with stand-in scenarios).
#
#   scenario_exec SCRIPT   run SCRIPT, show its output, then add result
#                          lines for what it did not report itself, and
#                          a '# scenario: NAME ran' marker for check.sh
#
# A scenario reports as selftests do, 'TEST: name [ OK | FAIL ]' lines,
# and exits 0 when all passed. What it may not do is fail silently:
#
#   exit status   TEST lines        added result
#   0             at least one      none
#   0             none              FAIL 'NAME: reported no result'
#   non-zero      at least a FAIL   none
#   non-zero      no FAIL           FAIL 'NAME: exited with status N ...'
#
# so a scenario that dies in setup (exit before its first TEST line), or
# is killed by its timeout, is a counted failure named after its file.

HARNESS_TIMEOUT=${HARNESS_TIMEOUT:-600}	# s: the longest scenario takes ~4 min in the VM

# harness_result NAME RC OUTPUT: what scenario_exec adds for a scenario
# that exited with RC after printing OUTPUT (a file).
harness_result() {
	local name=$1 rc=$2 tests fails

	tests=$(grep -c '^TEST: ' "$3")
	fails=$(grep -c '^TEST: .*\[FAIL\]$' "$3")
	if [ "$rc" -eq 0 ] && [ "$tests" -eq 0 ]; then
		printf 'TEST: %-60s [FAIL]\n' "$name: reported no result"
	elif [ "$rc" -ne 0 ] && [ "$fails" -eq 0 ]; then
		[ "$rc" -eq 124 ] && echo "    killed after $HARNESS_TIMEOUT s"
		printf 'TEST: %-60s [FAIL]\n' "$name: exited with status $rc, reporting no failure"
	fi
	echo "# scenario: $name ran"
}

# scenario_exec SCRIPT: run SCRIPT with bash under the timeout; its
# output (stdout and stderr, in order) goes to stdout as it comes.
scenario_exec() {
	local name rc out

	name=$(basename "$1" .sh)
	out=$(mktemp /tmp/deter-scenario.XXXXXX)
	timeout "$HARNESS_TIMEOUT" bash "$1" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	harness_result "$name" "$rc" "$out"
	rm -f "$out"
}
