#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Style checks as TAP, one test point per file: checkpatch --strict on
# every C file and every patch, kernel-doc on the kernel sources.
# Uses the scripts of the testbed kernel tree (make kernel) or of KDIR.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
kdir=${KDIR:-$(testbed/kernel.sh tree 2>/dev/null)}
if [ -z "$kdir" ] || [ ! -x "$kdir/scripts/checkpatch.pl" ]; then
	echo "not ok 1 - lint: no kernel tree with scripts/checkpatch.pl (make kernel or KDIR=)"
	exit 1
fi
cp="$kdir/scripts/checkpatch.pl --strict --no-tree --quiet --show-types"
cp+=" --ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES,NEW_TYPEDEFS"

n=0
fail=0
point() {	# rc name output
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		printf '%s\n' "$3" | sed 's/^/# /'
		fail=1
	fi
}

# Userspace follows the same style but has no kernel types or attribute
# macros, and calls libraries with their own naming.
user_ignore=PREFER_KERNEL_TYPES,PREFER_DEFINED_ATTRIBUTE_MACRO,CAMELCASE,VOLATILE
for f in $(find kmod cli recorder replay include tests -name '*.[ch]' | sort); do
	case "$f" in
	# TRACE_EVENT() layout, as in include/trace/events/.
	*_trace.h) out=$($cp --ignore PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE,MACRO_ARG_REUSE -f "$f" 2>&1) ;;
	kmod/*|include/*|tests/kunit/*) out=$($cp -f "$f" 2>&1) ;;
	*) out=$($cp --ignore "$user_ignore" -f "$f" 2>&1) ;;
	esac
	point $? "checkpatch $f" "$out"
done
# Through stdin: checkpatch reads a file git tracks as source, not as a patch.
for f in patches/*.patch; do
	out=$($cp - < "$f" 2>&1)
	point $? "checkpatch $f" "$out"
done
for f in kmod/*.c include/*.h; do
	out=$("$kdir/scripts/kernel-doc" -none -Wall "$f" 2>&1)
	[ -z "$out" ]
	point $? "kernel-doc $f" "$out"
done
echo "1..$n"
exit $fail
