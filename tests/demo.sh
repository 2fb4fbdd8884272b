#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot the testbed VM and run tests/vm/demo in it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec testbed/run --timeout 600 -- tests/vm/demo
