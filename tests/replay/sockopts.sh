#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: socket options the replay must set as the application
# did. RPC with 1.3 s pauses, 1 ms each way, offloads off.
#   A: before connect(): IP_TOS 0x10, TCP_USER_TIMEOUT, TCP_NOTSENT_LOWAT,
#      TCP_SYNCNT, TCP_LINGER2, SO_MAX_PACING_RATE, SO_PRIORITY 5,
#      SO_MARK 7, SO_RCVTIMEO 5 s, SO_SNDTIMEO 4 s; after it keepalive
#      (1 s idle: probes go out in the pauses); TCP_CONGESTION reno
#      before request 3 (cc-at counts from 0) and IP_TOS 0x28 before
#      request 4. Before every request but the first and before
#      shutdown(), SO_KEEPALIVE and TCP_NODELAY again, to the values they
#      have (--reset-opts): lock turns of calls that change nothing deter
#      records.
#   B: IP_TOS 0x08, keepalive, TCP_THIN_LINEAR_TIMEOUTS and
#      SO_MAX_PACING_RATE and SO_MARK 9 on the listener, inherited by the
#      accepted socket.
# A replay without the options differs in the TOS byte and lacks the
# probes; one without the extra lock turns gets stuck at the end (before
# that, A's recv(), woken to take the log's next app turn, takes them).
# TCP_CONGESTION, TCP_SYNCNT, TCP_LINGER2, TCP_THIN_LINEAR_TIMEOUTS,
# SO_MAX_PACING_RATE, SO_PRIORITY, SO_MARK and the timeouts (no call
# waits that long) change nothing this workload's headers show (pacing
# starts after 10 data segments): for them the test checks the logs.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000 --tos 8 --keepalive 1:1:2 --thin-lto --max-pacing-rate 200000 --mark 9' \
		'--rpc 5:200:2000 --pause-ms 1300 --tos 16 --tos-at 3:40 --keepalive 1:1:3 --user-timeout 5000 --notsent-lowat 65536 --reset-opts --syncnt 3 --linger2 7 --max-pacing-rate 1000000 --cc-at 2:reno --priority 5 --mark 7 --rcvtimeo-ms 5000 --sndtimeo-ms 4000'
}

scenario_run sockopts
CHECK_RC=0
for want in 'tos 0x10' 'tos 0x28' 'keepalive on idle 1 s intvl 1 s cnt 3' \
	    'user_timeout_ms = 5000' 'notsent_lowat = 65536' 'syncnt = 3' \
	    'linger2_s = 7' 'max_pacing_rate = 1000000' 'congestion = reno' \
	    'priority = 5' 'mark = 7' 'rcvtimeo_us = 5000000' 'sndtimeo_us = 4000000'; do
	"$DETER" show -d "$LOGS" "$ID" | grep -q "config     ${want/ 0x/ = 0x}$"
	check_err $? "A's log has no '$want'"
done
B_ID=$(log_id "$B_IP:5201" "$A_IP:[0-9]*")
for want in 'thin_linear_timeouts = 1' 'max_pacing_rate = 200000' 'mark = 9'; do
	"$DETER" show -d "$LOGS" "$B_ID" | grep -q "config     $want$"
	check_err $? "B's log has no '$want'"
done
grep -q 'tos 0x28' "$TB_TMP/a.truth"
check_err $? "A's egress never carried TOS 0x28"
"$DETER" show -d "$LOGS" "$ID" | grep -q '^ *[0-9]*  lock       keepalive-timer$'
check_err $? "A's keepalive timer never ran"
log_test $CHECK_RC "sockopts: the logs have the options and A's keepalive timers, its egress the TOS change"
exit $RET
