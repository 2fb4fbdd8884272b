#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scenario: A attaches the "tls" ULP once connected, sets a kTLS transmit
# key and sends 1 MB, which kTLS encrypts into records. A ULP or a BPF
# sockmap puts a layer above TCP that calls it past deter's hooks
# (kTLS's sends reach TCP through tcp_sendmsg_locked(), not
# tcp_sendmsg()), so A's log would have lock turns without their calls:
# it must be marked incomplete, "other-layer" (log format 13), B's
# (which reads the records as plain bytes) must be complete, and deter
# replay must refuse the pair in one line saying why.
source "$(dirname "$0")/lib.sh"

scenario_testbed off 100mbit || exit $ksft_fail

workload() {
	tcpwl_pair '' '--bytes 1000000 --ulp tls-tx'
}

ulp_check() {
	local a b rc

	CHECK_RC=0
	a=$(grep "\"id\":\"$ID\"" "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"')
	b=$(grep -v "\"id\":\"$ID\"" "$TB_TMP/ls.json" | grep -o '"status":"[^"]*"')
	[ "$a" = '"status":"incomplete,other-layer"' ] && [ "$b" = '"status":"complete"' ]
	check_err $? "A's log: ${a:-none}, B's: ${b:-none}"
	"$DETER" show -d "$LOGS" "$ID" | grep -q ' value      missing 2 (calls through a layer above TCP'
	check_err $? "A's log has no MISSING LAYER value"
	log_test $CHECK_RC "ulp_tls: A's log is incomplete (other-layer), B's complete"

	CHECK_RC=0
	"$DETER" replay -d "$LOGS" "$ID" -o "$TB_TMP/r" > "$TB_TMP/replay.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && [ "$(wc -l < "$TB_TMP/replay.out")" = 1 ] &&
		grep -q "incomplete log (other-layer): cannot replay" "$TB_TMP/replay.out"
	check_err $? "deter replay exited $rc: $(head -3 "$TB_TMP/replay.out")"
	log_test $CHECK_RC "ulp_tls: deter replay refuses the log in one line ($(cut -c1-100 "$TB_TMP/replay.out"))"
}

REC_INCOMPLETE_OK=1 scenario_record ulp_tls || exit $ksft_fail
ulp_check
exit $RET
