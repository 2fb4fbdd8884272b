#!/bin/bash
insmod /work/main/deter.ko debug_clock=1
dmesg -C
REPLAYS=1 bash /work/main/tests/replay/pending/bbr.sh 2>&1 | grep -v BENCH | tail -5
dmesg > /root/fails/bbr.dmesg
rmmod deter
