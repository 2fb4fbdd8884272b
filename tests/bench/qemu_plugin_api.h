/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU TCG plugin entry points tests/bench/insns.c and profile.c
 * use. QEMU 7.2 (Debian 12) installs no plugin header: these are
 * declared as its include/qemu/qemu-plugin.h has them (plugin API
 * version 1).
 */
#ifndef _QEMU_PLUGIN_API_H
#define _QEMU_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;

enum { QEMU_PLUGIN_INLINE_ADD_U64 };	/* enum qemu_plugin_op */
enum { QEMU_PLUGIN_CB_NO_REGS };	/* enum qemu_plugin_cb_flags */

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   void (*cb)(qemu_plugin_id_t id,
						      struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    void (*cb)(unsigned int vcpu, void *udata),
					    int flags, void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    void (*cb)(qemu_plugin_id_t id, void *udata),
				    void *udata);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  void (*cb)(unsigned int vcpu, void *udata),
					  int flags, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			int argc, char **argv);

#endif /* _QEMU_PLUGIN_API_H */
