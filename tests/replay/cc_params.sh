#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: congestion-control module parameters. tcp_cubic's are
# global (/sys/module/tcp_cubic/parameters) and outside deter.ko's reach:
# deter record reads them at its start and once a second after. The
# original runs a 2 MB transfer over 100 Mbit/s with A's 100th data
# segment dropped, with beta 512 (default 717: the window after the fast
# retransmit), set before deter record starts, and hystart 0 (slow start
# runs until the loss), set while it runs. Both logs must have what sysfs
# said; deter replay sets them for the run, puts the host's back, and
# must match tcpdump. With --keep-host-sysctls (the defaults) it must
# not verify.
source "$(dirname "$0")/lib.sh"

CUBIC=/sys/module/tcp_cubic/parameters
BETA_ORIG=$(cat $CUBIC/beta)
HYSTART_ORIG=$(cat $CUBIC/hystart)
cubic_restore() {
	echo "$BETA_ORIG" > $CUBIC/beta
	echo "$HYSTART_ORIG" > $CUBIC/hystart
	cleanup
}
trap cubic_restore EXIT

# cubic_restored I: after replay I, the host's values are back.
cubic_restored() {
	[ "$(cat $CUBIC/beta) $(cat $CUBIC/hystart)" = "$BETA_ORIG $HYSTART_ORIG" ]
	log_test $? "cc_params: replay $1 put the host's beta and hystart back"
}

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	echo 0 > $CUBIC/hystart || return 1
	sleep 1.5	# deter record's next look
	tcpwl_pair '' '--bytes 2000000'
	echo "$HYSTART_ORIG" > $CUBIC/hystart
}

echo 512 > $CUBIC/beta || exit $ksft_fail
scenario_record cc_params
rc=$?
echo "$BETA_ORIG" > $CUBIC/beta
if [ $rc -eq 0 ]; then
	CHECK_RC=0
	B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	for id in "$ID" "$B_ID"; do
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$id.txt"
		for kv in "beta = 512" "hystart = 0"; do
			grep -q "^ *[0-9]*  config     sysctl tcp_cubic.$kv$" "$TB_TMP/show-$id.txt"
			check_err $? "log $id has no tcp_cubic.$kv: $(grep tcp_cubic "$TB_TMP/show-$id.txt")"
		done
		[ "$(grep -c tcp_cubic "$TB_TMP/show-$id.txt")" -eq 2 ]
		check_err $? "log $id has other parameters: $(grep tcp_cubic "$TB_TMP/show-$id.txt")"
	done
	log_test $CHECK_RC "cc_params: both logs have tcp_cubic beta 512 and hystart 0, and no other parameter"

	CHECK_RC=0
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" --pcap "$TB_TMP/r/r" --keep-host-sysctls \
		> "$TB_TMP/replay.out" 2>&1
	rc=$?
	egress_diff "$TB_TMP/r" a "$TB_TMP/a.truth"
	[ $rc -ne 0 ] && [ -s "$TB_TMP/r/a.diff" ]
	check_err $? "with the defaults, deter replay exited $rc and A's egress $([ -s "$TB_TMP/r/a.diff" ] || echo "did not ")differ: $(tail -2 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "cc_params: with the host's parameters kept, the replay diverges ($(tail -1 "$TB_TMP/replay.out" | cut -c1-120))"

	scenario_replays cc_params cubic_restored
fi
exit $RET
