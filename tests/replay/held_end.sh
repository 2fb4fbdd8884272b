#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: a stored pair of logs (tests/data/held_end: an nginx
# connection of the mixed run, tests/bench/mixed.sh) whose replay ends,
# diverged, with segments held for later. The handler caller hands them
# to TCP when the replay is over; the replay must end, and the kernel
# must not report a stalled CPU. A replay that looped re-holding them
# stalled a CPU for good.

source "$(dirname "$0")/lib.sh"

ID=4f13629f0000005d
out=$TB_TMP/replay
mark="deter held_end $$"

echo "$mark" > /dev/kmsg
timeout 120 "$DETER" replay -d "$TB_TOP/tests/data/held_end" "$ID" -o "$out" > "$TB_TMP/replay.out" 2>&1
rc=$?
sed 's/^/    /' "$TB_TMP/replay.out"
CHECK_RC=0
[ $rc -ne 124 ]
check_err $? "deter replay did not end in 120 s"
grep -q "^replay $ID: \(verified\|diverged\)" "$TB_TMP/replay.out"
check_err $? "deter replay said neither verified nor diverged (exit $rc)"
! dmesg | sed -n "/$mark/,\$p" | grep -q "rcu.*stall\|soft lockup"
check_err $? "the kernel reports a stalled CPU: $(dmesg | grep -m1 'stall\|soft lockup')"
log_test $CHECK_RC "held_end: the replay ends (exit $rc), the held segments go to TCP, no CPU stalls"
exit $RET
