#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deter replay --vm, run on the host (make check's vm-host group, not in
# the VM suite): the rpc scenario is recorded in the testbed VM, with
# tcpdump on each host's egress as ground truth; then `deter replay --vm`
# here boots the VM again and replays the pair of logs in it. Passes when
# the replay verifies itself and both hosts' egress equals the truth.

source "$(dirname "$0")/../replay/lib.sh"	# helpers; no testbed on this side

VMRUN=$TB_TOP/tests/vm/run

# In the VM: load deter.ko, record rpc.sh's connection, no replays.
CHECK_RC=0
"$VMRUN" --timeout 900 --rw "$TB_TMP" -- /bin/sh -c \
	'insmod "$0" || exit 1; TB_KEEP=1 TB_TMP=$1 REPLAYS=0 bash "$2"; rc=$?; rmmod deter; exit $rc' \
	"$TB_TOP/deter.ko" "$TB_TMP" "$TB_TOP/tests/replay/rpc.sh" > "$TB_TMP/vm-record.out" 2>&1
check_err $? "recording in the VM failed: $(grep -E 'FAIL|^    ' "$TB_TMP/vm-record.out" | tail -3)"
sed 's/^/# vm: /' "$TB_TMP/vm-record.out"
ID=$(a_log_id 5201)
[ -n "$ID" ]
check_err $? "no log of A's end in $LOGS"
log_test $CHECK_RC "replay --vm: rpc recorded in the VM (log ${ID:-none})"
[ $CHECK_RC -eq 0 ] || exit $RET

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
