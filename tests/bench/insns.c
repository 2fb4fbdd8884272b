// SPDX-License-Identifier: GPL-2.0
/*
 * insns: a QEMU TCG plugin that counts the instructions the guest runs,
 * for make bench's CPU figure. Guest CPU time under TCG swings by tens of
 * percent from run to run; the instructions a workload takes do not.
 *
 *   qemu-system-x86_64 -accel tcg,thread=single \
 *       -plugin insns.so,out=FILE ...
 *
 * Every time the guest runs the marker instruction (insnmark: a 9-byte
 * NOP with displacement "Detr"), one line "mark N INSNS" goes to FILE:
 * the instructions all vCPUs ran since the guest started. An idle vCPU
 * halts and runs none. With one TCG thread the vCPUs take turns, so one
 * plain counter is exact.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "insnmark.h"

#define INSNS_EXPORT __attribute__((visibility("default")))

INSNS_EXPORT int qemu_plugin_version = 1;

static uint64_t insns_total;
static unsigned long insns_marks;
static FILE *insns_out;

static void insns_mark(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
	fprintf(insns_out, "mark %lu %llu\n", ++insns_marks,
		(unsigned long long)insns_total);
	fflush(insns_out);
}

static void insns_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &insns_total, n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (insnmark_is(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, insns_mark,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void insns_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	fprintf(insns_out, "total %llu\n", (unsigned long long)insns_total);
	fclose(insns_out);
}

INSNS_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
				     int argc, char **argv)
{
	(void)info;
	if (argc != 1 || strncmp(argv[0], "out=", 4)) {
		fprintf(stderr, "insns: usage: -plugin insns.so,out=FILE\n");
		return -1;
	}
	insns_out = fopen(argv[0] + 4, "w");
	if (!insns_out) {
		perror(argv[0] + 4);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, insns_tb);
	qemu_plugin_register_atexit_cb(id, insns_exit, NULL);
	return 0;
}
