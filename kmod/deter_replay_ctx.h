/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for replay's contexts: which script a CPU or a task is
 * working for, so that a jiffies read (which has no socket) is answered
 * from that script, and which socket the handler caller is firing a
 * timer or handing an ICMP error to on this CPU.
 *
 * The per-CPU pointers are written with BH off or preemption disabled
 * by the context they describe; the task table has a spinlock (IRQs
 * off). deter_rpl_forget() is for process context, before a script is
 * freed.
 */
#ifndef _DETER_REPLAY_CTX_H
#define _DETER_REPLAY_CTX_H

#include <linux/percpu.h>

struct deter_rpl;
struct sock;

/* The socket whose timer the handler caller fires on this CPU, or NULL. */
DECLARE_PER_CPU(struct sock *, deter_rpl_firing);
/* The socket it hands an ICMP error on this CPU, or NULL. */
DECLARE_PER_CPU(struct sock *, deter_rpl_icmp);

void deter_rpl_set_cpu(struct deter_rpl *rpl);
struct deter_rpl *deter_rpl_cpu_get(void);
void deter_rpl_task_set(struct deter_rpl *rpl);
struct deter_rpl *deter_rpl_task_get(void);
void deter_rpl_tasks_forget(struct deter_rpl *rpl);
void deter_rpl_forget(struct deter_rpl *rpl);

#endif /* _DETER_REPLAY_CTX_H */
