#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nginx (two workers, epoll, keep-alive, sendfile) serving wrk (two
# threads, four keep-alive connections, each a stream of GETs of a 4 KiB
# file) for two seconds, 1 ms each way, offloads off.

source "$(dirname "$0")/lib.sh"

scenario_testbed off || exit $ksft_fail

workload() {
	app_nginx || return 1
	ip netns exec "$A" wrk -t 2 -c 4 -d 2s "http://$B_IP/4k" > "$TB_TMP/wrk.out" 2>&1 || return 1
	cat "$TB_TMP/wrk.out" | sed 's/^/    wrk| /'
	grep -q "requests in" "$TB_TMP/wrk.out" && ! grep -q "Non-2xx\|Socket errors" "$TB_TMP/wrk.out"
}

app_run nginx_wrk 80
exit $RET
