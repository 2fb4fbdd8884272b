#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: socket options the replay must set as the application
# did. RPC with 1.3 s pauses, 1 ms each way, offloads off.
#   A: IP_TOS 0x10 before connect() and 0x28 before request 3 (lockless,
#      in the header), TCP_USER_TIMEOUT, TCP_NOTSENT_LOWAT, and keepalive
#      (1 s idle) set after connect(): probes go out in the pauses.
#      Before every request but the first and before shutdown(), A sets
#      SO_KEEPALIVE and TCP_NODELAY again to the values they have
#      (--reset-opts): lock turns of calls that change nothing deter
#      records.
#   B: IP_TOS 0x08 and keepalive on the listener, inherited by the
#      accepted socket.
# A replay without the options differs in the TOS byte and lacks the
# probes; one without the extra lock turns gets stuck at the end (before
# that, A's recv(), woken to take the log's next app turn, takes them).

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	tcpwl_pair '--rpc 200:2000 --tos 8 --keepalive 1:1:2' \
		'--rpc 5:200:2000 --pause-ms 1300 --tos 16 --tos-at 3:40 --keepalive 1:1:3 --user-timeout 5000 --notsent-lowat 65536 --reset-opts'
}

scenario_run sockopts
CHECK_RC=0
for want in 'tos 0x10' 'tos 0x28' 'keepalive on idle 1 s intvl 1 s cnt 3' \
	    'user_timeout_ms = 5000' 'notsent_lowat = 65536'; do
	"$DETER" show -d "$LOGS" "$ID" | grep -q "config     ${want/ 0x/ = 0x}$"
	check_err $? "A's log has no '$want'"
done
grep -q 'tos 0x28' "$TB_TMP/a.truth"
check_err $? "A's egress never carried TOS 0x28"
"$DETER" show -d "$LOGS" "$ID" | grep -q '^ *[0-9]*  lock       keepalive-timer$'
check_err $? "A's keepalive timer never ran"
log_test $CHECK_RC "sockopts: A's log has the options and keepalive timers, its egress the TOS change"
exit $RET
