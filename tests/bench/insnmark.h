/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's marker instruction, for the QEMU plugins that look for it
 * (tests/bench/insns.c, profile.c): nopw 0x72746544(%rax,%rax,1), a
 * 9-byte NOP with displacement "Detr", which tests/bench/insnmark.c runs.
 */
#ifndef _INSNMARK_H
#define _INSNMARK_H

#include <string.h>

#include "qemu_plugin_api.h"

static inline int insnmark_is(const struct qemu_plugin_insn *insn)
{
	static const unsigned char marker[] = {
		0x66, 0x0f, 0x1f, 0x84, 0x00, 0x44, 0x65, 0x74, 0x72,
	};

	return qemu_plugin_insn_size(insn) == sizeof(marker) &&
	       !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker));
}

#endif /* _INSNMARK_H */
