#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: the parameters of a congestion control other than
# cubic and dctcp, and a bool one. A sends 2 MB over 100 Mbit/s with
# TCP_CONGESTION bic and its 100th data segment dropped, with
# tcp_bic's beta 512 (default 819: the window after the fast
# retransmit) and tcp_cdg's use_tolerance Y (default N; sysfs shows a
# bool as Y or N, the log as 1 or 0), both set before deter record
# starts. Both logs must have both; deter replay sets bic's for the run
# (A used bic, B cubic; no end used cdg), puts the host's back, and must
# match tcpdump. With --keep-host-sysctls (bic's default) it must not
# verify.
source "$(dirname "$0")/lib.sh"

BIC=/sys/module/tcp_bic/parameters
CDG=/sys/module/tcp_cdg/parameters
BETA_ORIG=$(cat $BIC/beta) || exit $ksft_fail
TOL_ORIG=$(cat $CDG/use_tolerance) || exit $ksft_fail
params_restore() {
	echo "$BETA_ORIG" > $BIC/beta
	echo "$TOL_ORIG" > $CDG/use_tolerance
	cleanup
}
trap params_restore EXIT

# bic_restored I: after replay I, the host's beta is back.
bic_restored() {
	[ "$(cat $BIC/beta)" = "$BETA_ORIG" ]
	log_test $? "cc_params_bic: replay $1 put the host's tcp_bic beta back ($(cat $BIC/beta))"
}

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '' '--cc bic --bytes 2000000'
}

echo 512 > $BIC/beta || exit $ksft_fail
echo Y > $CDG/use_tolerance || exit $ksft_fail
scenario_record cc_params_bic
rc=$?
echo "$BETA_ORIG" > $BIC/beta
echo "$TOL_ORIG" > $CDG/use_tolerance
if [ $rc -eq 0 ]; then
	CHECK_RC=0
	B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
	for id in "$ID" "$B_ID"; do
		"$DETER" show -d "$LOGS" "$id" > "$TB_TMP/show-$id.txt"
		for kv in "tcp_bic.beta = 512" "tcp_cdg.use_tolerance = 1"; do
			grep -q "^ *[0-9]*  config     sysctl $kv$" "$TB_TMP/show-$id.txt"
			check_err $? "log $id has no $kv: $(grep 'sysctl tcp_' "$TB_TMP/show-$id.txt")"
		done
		[ "$(grep -c 'sysctl tcp_[a-z]*\.' "$TB_TMP/show-$id.txt")" -eq 2 ]
		check_err $? "log $id has other parameters: $(grep 'sysctl tcp_' "$TB_TMP/show-$id.txt")"
	done
	grep -q '^ *[0-9]*  config     congestion = bic$' "$TB_TMP/show-$ID.txt"
	check_err $? "A's log does not say bic: $(grep congestion "$TB_TMP/show-$ID.txt")"
	log_test $CHECK_RC "cc_params_bic: both logs have tcp_bic beta 512 and tcp_cdg use_tolerance 1, and no other parameter"

	CHECK_RC=0
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" --pcap "$TB_TMP/r/r" --keep-host-sysctls \
		> "$TB_TMP/replay.out" 2>&1
	rc=$?
	egress_diff "$TB_TMP/r" a "$TB_TMP/a.truth"
	[ $rc -ne 0 ] && [ -s "$TB_TMP/r/a.diff" ]
	check_err $? "with the defaults, deter replay exited $rc and A's egress $([ -s "$TB_TMP/r/a.diff" ] || echo "did not ")differ: $(tail -2 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "cc_params_bic: with the host's parameters kept, the replay diverges ($(tail -1 "$TB_TMP/replay.out" | cut -c1-120))"

	scenario_replays cc_params_bic bic_restored
fi
exit $RET
