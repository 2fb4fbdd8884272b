#!/bin/bash
export DETER_BENCH_RPCS=500
source "$(dirname "$0")/lib.sh"
insmod "$top/deter.ko"
valgrind --tool=callgrind --callgrind-out-file=/root/fails/cg.out "$DETER" record -o "$TB_TMP/logs" --port $((port + 1)) 2> "$TB_TMP/rec.err" &
rec=$!
for _ in $(seq 300); do grep -q "recording into" "$TB_TMP/rec.err" && break; sleep 0.1; done
workload rpc
sleep 1
kill -INT $rec; wait $rec
cat "$TB_TMP/rec.err" | tail -3
