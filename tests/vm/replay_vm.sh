#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deter replay --vm, run on the host (make check's vm-host group, not in
# the VM suite): the linger_close scenario is recorded in the testbed VM,
# with tcpdump on each host's egress as ground truth; then `deter replay
# --vm` here boots the VM again and replays the pair of logs in it.
# Passes when the replay verifies itself and both hosts' egress equals
# the truth.
#
# It is also the test of a replay host whose clock is behind the
# recording host's, as a testbed's is behind a production host's: the
# recording VM waits DETER_VM_CLOCK_LEAD seconds (30) before it records,
# the replaying VM boots anew. In linger_close, A's socket is an orphan
# when B's FIN comes, so A's time-wait socket answers it (IP ID 0) with a
# TS value from the host's clock. The replay must send the one B logged:
# one from the replay host's clock is behind what B last accepted, B
# discards it (PAWS) and never sees its FIN acknowledged.

source "$(dirname "$0")/../replay/lib.sh"	# helpers; no testbed on this side

VMRUN=$TB_TOP/testbed/run
LEAD=${DETER_VM_CLOCK_LEAD:-30}

# In the VM: load deter.ko, record linger_close's connection, no replays.
CHECK_RC=0
"$VMRUN" --timeout 900 --rw "$TB_TMP" -- /bin/sh -c \
	'sleep "$3"; insmod "$0" || exit 1; TB_KEEP=1 TB_TMP=$1 REPLAYS=0 bash "$2"; rc=$?; rmmod deter; exit $rc' \
	"$TB_TOP/deter.ko" "$TB_TMP" "$TB_TOP/tests/replay/linger_close.sh" "$LEAD" \
	> "$TB_TMP/vm-record.out" 2>&1
check_err $? "recording in the VM failed: $(grep -E 'FAIL|^    ' "$TB_TMP/vm-record.out" | tail -3)"
sed 's/^/# vm: /' "$TB_TMP/vm-record.out"
ID=$(a_log_id 5201)
[ -n "$ID" ]
check_err $? "no log of A's end in $LOGS"
log_test $CHECK_RC "replay --vm: linger_close recorded in the VM (log ${ID:-none})"
[ $CHECK_RC -eq 0 ] || exit $RET

# The time-wait socket's answer as tcpdump saw it leave A, and as B's log
# has it; B's log counts no drops (tcpdump saw none, and the answer is
# not one of A's numbered segments).
CHECK_RC=0
tw=$(tcpdump -r "$TB_TMP/a0.pcap" -nn -v "src host $A_IP" 2>/dev/null | paste -d ' ' - - |
	sed -n 's/.* id 0, .*Flags \[\.\].*TS val \([0-9]*\) .*/\1/p' | tail -n 1)
peer=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
logged=$("$DETER" show -d "$LOGS" --json "$peer" |
	 sed -n 's/.*"time_wait":true,"tsval":\([0-9]*\)}/\1/p' | tail -n 1)
drops=$("$DETER" ls -d "$LOGS" --json | grep "\"id\":\"$peer\"" |
	sed -n 's/.*"drops":\([0-9]*\).*/\1/p')
[ -n "$tw" ] && [ "$tw" = "$logged" ] && [ "$drops" = 0 ]
check_err $? "time-wait answer: tcpdump TS value ${tw:-none}, B's log ${logged:-none}, B's drops ${drops:-?}"
log_test $CHECK_RC "replay --vm: B's log has A's time-wait answer with tcpdump's TS value ${tw:-none}, no drops"

# Here: replay it in the VM.
CHECK_RC=0
out=$TB_TMP/replay-vm
"$DETER" replay --vm -d "$LOGS" "$ID" -o "$out" --pcap "$out/r" > "$TB_TMP/replay-vm.out" 2>&1
rc=$?
sed 's/^/# /' "$TB_TMP/replay-vm.out" | grep -v '^# \[ *[0-9.]*\]'
check_err $rc "deter replay --vm exited $rc: $(tail -2 "$TB_TMP/replay-vm.out")"
grep -q "^replay $ID: verified" "$TB_TMP/replay-vm.out"
check_err $? "no 'replay $ID: verified' line"
for h in a b; do
	egress_diff "$out" "$h" "$TB_TMP/$h.truth"
	check_err $? "host $h: original (<) vs replay (>) differ: $(sed -n 2,3p "$out/$h.diff" | cut -c1-300)"
done
log_test $CHECK_RC "replay --vm: verified in the VM, both hosts' egress identical to the original"
exit $RET
