#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay under observation: the tail_drop workload, replayed with tcpdump
# (--pcap) and `trace-cmd record -p function_graph -g tcp_ack` attached
# (limited to tcp_* functions, see below).
# The tracer slows the replayed stacks down; the replay must still verify
# itself and match the original's egress, and the trace must hold
# tcp_ack()'s call graph.

source "$(dirname "$0")/lib.sh"

# -l 'tcp_*': patch only TCP's functions in and out. Under QEMU TCG,
# patching every function while the other vCPU runs them oopsed the
# guest once in ten tracer starts ("int3" in an idle-balance function).
REPLAY_ARGS="--trace \"-p function_graph -g tcp_ack -l 'tcp_*'\""

scenario_testbed off || exit $ksft_fail
switch_drop_nth "$A_IP" 30

workload() {
	tcpwl_pair '--rpc 14480:100' '--rpc 10:14480:100'
}

scenario_run traced
for i in $(seq "$REPLAYS"); do
	CHECK_RC=0
	n=$(trace-cmd report -i "$TB_TMP/replay$i/trace.dat" 2>/dev/null |
		grep -c 'tcp_ack()')
	[ "$n" -gt 0 ]
	check_err $? "no tcp_ack() call graph in $TB_TMP/replay$i/trace.dat"
	log_test $CHECK_RC "traced: replay $i's function_graph trace holds $n tcp_ack() calls"
done
exit $RET
