// SPDX-License-Identifier: GPL-2.0
/*
 * profile: a QEMU TCG plugin that counts the instructions the guest runs
 * in each translation block, per phase, for tests/bench/profile.sh: where
 * recording's extra instructions go, function by function.
 *
 *   qemu-system-x86_64 -accel tcg,thread=single \
 *       -plugin profile.so,out=FILE ...
 *
 * The guest's marker instruction (tests/bench/insnmark) opens phase 1 at
 * its first run, closes it at its second, opens phase 2 at its third ...
 * up to PROFILE_PHASES. At exit, FILE gets one line per block that ran
 * in a phase: "VADDR N1 N2 ...", the block's guest address and its
 * instructions in each phase. Counting goes through a callback per block
 * run, so the guest runs a few times slower than with tests/bench/insns.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insnmark.h"

#define PROFILE_EXPORT __attribute__((visibility("default")))
#define PROFILE_PHASES 4
#define PROFILE_SLOTS 4194304u	/* blocks, open addressing; a power of 2 */

PROFILE_EXPORT int qemu_plugin_version = 1;

struct profile_tb {
	uint64_t vaddr;
	uint32_t insns;
	uint64_t n[PROFILE_PHASES];
};

static struct profile_tb *profile_tab;
static unsigned int profile_marks, profile_phase;	/* 0: none open */
static unsigned long profile_full;	/* blocks not counted: table full */
static FILE *profile_out;

/* A block's slot: the same address and length is the same block. */
static struct profile_tb *profile_slot(uint64_t vaddr, uint32_t insns)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ULL) >> 42;
	unsigned int i;

	for (i = 0; i < PROFILE_SLOTS; i++, h = (h + 1) & (PROFILE_SLOTS - 1)) {
		struct profile_tb *e = &profile_tab[h];

		if (e->vaddr == vaddr && e->insns == insns)
			return e;
		if (!e->vaddr) {
			e->vaddr = vaddr;
			e->insns = insns;
			return e;
		}
	}
	return NULL;
}

static void profile_mark(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
	profile_marks++;
	profile_phase = profile_marks % 2 && (profile_marks + 1) / 2 <= PROFILE_PHASES ?
			(profile_marks + 1) / 2 : 0;
}

static void profile_exec(unsigned int vcpu, void *udata)
{
	struct profile_tb *e = udata;

	(void)vcpu;
	if (profile_phase)
		e->n[profile_phase - 1] += e->insns;
}

static void profile_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct profile_tb *e = profile_slot(qemu_plugin_tb_vaddr(tb), n);

	(void)id;
	if (e)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, profile_exec,
						     QEMU_PLUGIN_CB_NO_REGS, e);
	else
		profile_full++;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (insnmark_is(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, profile_mark,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void profile_exit(qemu_plugin_id_t id, void *udata)
{
	unsigned int i, p;

	(void)id;
	(void)udata;
	for (i = 0; i < PROFILE_SLOTS; i++) {
		const struct profile_tb *e = &profile_tab[i];
		uint64_t any = 0;

		for (p = 0; p < PROFILE_PHASES; p++)
			any |= e->n[p];
		if (!any)
			continue;
		fprintf(profile_out, "%llx", (unsigned long long)e->vaddr);
		for (p = 0; p < PROFILE_PHASES; p++)
			fprintf(profile_out, " %llu", (unsigned long long)e->n[p]);
		fputc('\n', profile_out);
	}
	if (profile_full)
		fprintf(profile_out, "# %lu blocks not counted: table full\n", profile_full);
	fclose(profile_out);
}

PROFILE_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
				       int argc, char **argv)
{
	(void)info;
	if (argc != 1 || strncmp(argv[0], "out=", 4)) {
		fprintf(stderr, "profile: usage: -plugin profile.so,out=FILE\n");
		return -1;
	}
	profile_tab = calloc(PROFILE_SLOTS, sizeof(*profile_tab));
	profile_out = fopen(argv[0] + 4, "w");
	if (!profile_tab || !profile_out) {
		perror(argv[0] + 4);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, profile_trans);
	qemu_plugin_register_atexit_cb(id, profile_exit, NULL);
	return 0;
}
