#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: the parameters of congestion controls other than
# cubic and dctcp, and a bool one. A sends 2 MB over 100 Mbit/s with
# TCP_CONGESTION bic and its 100th data segment dropped, with
# tcp_bic's beta 512 (default 819: the window after the fast
# retransmit); B answers with cdg (on the listener), whose use_tolerance
# is Y (default N; sysfs shows a bool as Y or N, the log as 1 or 0).
# Both are set before deter record starts, and both logs must have
# both. deter replay sets them for the run (A used bic, B cdg), puts the
# host's back, and must match tcpdump. With --keep-host-sysctls (the
# defaults) it must not verify.
source "$(dirname "$0")/lib.sh"

BIC=/sys/module/tcp_bic/parameters
CDG=/sys/module/tcp_cdg/parameters
host_keep $BIC/beta $CDG/use_tolerance || exit $ksft_fail
BETA_ORIG=$(cat $BIC/beta)
TOL_ORIG=$(cat $CDG/use_tolerance)

# params_restored I: replay I (-v) said it set both, and after it the
# host's values are back.
params_restored() {
	CHECK_RC=0
	grep -q "^deter replay: tcp_bic.beta = 512 for the replay (the host's $BETA_ORIG)$" \
		"$TB_TMP/replay$1.out" &&
		grep -q "^deter replay: tcp_cdg.use_tolerance = 1 for the replay (the host's 0)$" \
			"$TB_TMP/replay$1.out"
	check_err $? "replay $1 did not say it set both: $(grep 'for the replay' "$TB_TMP/replay$1.out")"
	[ "$(cat $BIC/beta) $(cat $CDG/use_tolerance)" = "$BETA_ORIG $TOL_ORIG" ]
	check_err $? "the host's values after replay $1: $(cat $BIC/beta) $(cat $CDG/use_tolerance)"
	log_test $CHECK_RC "cc_params_bic: replay $1 set bic's beta and cdg's use_tolerance, and put the host's back"
}

scenario_testbed off 100mbit || exit $ksft_fail
switch_drop_nth "$A_IP" 100

workload() {
	tcpwl_pair '--cc cdg' '--cc bic --bytes 2000000'
}

echo 512 > $BIC/beta || exit $ksft_fail
echo Y > $CDG/use_tolerance || exit $ksft_fail
scenario_record cc_params_bic
rc=$?
echo "$BETA_ORIG" > $BIC/beta
echo "$TOL_ORIG" > $CDG/use_tolerance
if [ $rc -eq 0 ]; then
	CHECK_RC=0
	params_check "tcp_bic.beta = 512" "tcp_cdg.use_tolerance = 1"
	grep -q '^started .* cc bic,' "$TB_TMP/show-$ID.txt" &&
		grep -q '^started .* cc cdg,' "$TB_TMP/show-$B_ID.txt"
	check_err $? "the logs do not say bic and cdg: $(grep -h '^started' "$TB_TMP/show-$ID.txt" "$TB_TMP/show-$B_ID.txt")"
	log_test $CHECK_RC "cc_params_bic: both logs have tcp_bic beta 512 and tcp_cdg use_tolerance 1, and no other parameter"

	keep_host_diverges cc_params_bic

	REPLAY_ARGS="-v $REPLAY_ARGS"
	scenario_replays cc_params_bic params_restored
fi
exit $RET
