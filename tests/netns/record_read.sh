#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# record_drop.sh with deter record reading the ring buffers by read() of
# trace_pipe_raw instead of mapping them (DETER_RECORD_NO_MMAP=1), as it
# does where mapping fails (kernels before 6.10): the same checks against
# strace and tcpdump.

export DETER_RECORD_NO_MMAP=1
SCENARIO=record_read
source "$(dirname "$0")/record_drop.sh"
