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
host_keep $CUBIC/beta $CUBIC/hystart || exit $ksft_fail
BETA_ORIG=$(cat $CUBIC/beta)
HYSTART_ORIG=$(cat $CUBIC/hystart)

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
	params_check "tcp_cubic.beta = 512" "tcp_cubic.hystart = 0"
	log_test $CHECK_RC "cc_params: both logs have tcp_cubic beta 512 and hystart 0, and no other parameter"

	keep_host_diverges cc_params

	scenario_replays cc_params cubic_restored
fi
exit $RET
