#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay scenario: zero window from a slow reader. B reads 1000 B every
# 20 ms from a small receive buffer while A sends 60 kB; B's window
# closes, A probes it and resumes when it reopens.

source "$(dirname "$0")/../lib.sh"

testbed_create || exit $ksft_fail
offload "$A" a0 off
offload "$B" b0 off
link_shape "$A" a0 1ms
link_shape "$B" b0 1ms

workload() {
	ip netns exec "$B" "$TCPWL" server -b "$B_IP" --rcvbuf 8192 \
		--read-size 1000 --read-delay-us 20000 > /dev/null &
	local srv=$!
	wait_listen "$B" 5201 || return 1
	ip netns exec "$A" "$TCPWL" client -c "$B_IP" --bytes 60000 > /dev/null
	wait $srv
}

scenario_run zero_window
exit $RET
