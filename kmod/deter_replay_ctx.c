// SPDX-License-Identifier: GPL-2.0
/*
 * Replay's contexts: the script each CPU and task works for.
 *
 * TCP reads jiffies without saying for which socket (deter_jiffies()),
 * so the replay answers by context:
 *
 *   a task            --> the script it last took a lock turn for
 *                         (deter_rpl_tasks[], up to DETER_RPL_TASKS)
 *   softirq, the      --> the script this CPU last ran a turn of, or
 *   handler caller        made a passive end for (deter_rpl_cpu)
 *
 * A task answers for its socket with BH off too: tcp_release_cb() in
 * release_sock() tests deadlines there, and the other end's softirq may
 * have used the CPU meanwhile. Before a script is freed every CPU and
 * task lets go of it (deter_rpl_forget()).
 *
 * The handler caller also marks the socket it fires a timer for
 * (deter_rpl_firing) or hands an ICMP error to (deter_rpl_icmp), so that
 * the hooks tell its calls from the real timers and errors, which the
 * replay does not let run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_ctx.h"

#include <linux/sched.h>
#include <linux/spinlock.h>

/* Tasks replaying at once: the processes of a test, both ends. */
#define DETER_RPL_TASKS		16

static DEFINE_PER_CPU(struct deter_rpl *, deter_rpl_cpu);
DEFINE_PER_CPU(struct sock *, deter_rpl_firing);
DEFINE_PER_CPU(struct sock *, deter_rpl_icmp);
static struct {
	struct task_struct *task;	/* NULL: a free slot */
	struct deter_rpl *rpl;		/* the script it works for */
} deter_rpl_tasks[DETER_RPL_TASKS];
static DEFINE_SPINLOCK(deter_rpl_tasks_lock);

/**
 * deter_rpl_set_cpu() - this CPU works for @rpl
 * @rpl: the script
 */
void deter_rpl_set_cpu(struct deter_rpl *rpl)
{
	this_cpu_write(deter_rpl_cpu, rpl);
}

/**
 * deter_rpl_cpu_get() - the script this CPU works for
 *
 * Return: it, or NULL.
 */
struct deter_rpl *deter_rpl_cpu_get(void)
{
	return this_cpu_read(deter_rpl_cpu);
}

/**
 * deter_rpl_task_set() - the current task works for @rpl
 * @rpl: the script (NULL: none any more)
 */
void deter_rpl_task_set(struct deter_rpl *rpl)
{
	unsigned int i, free = DETER_RPL_TASKS;
	unsigned long flags;

	spin_lock_irqsave(&deter_rpl_tasks_lock, flags);
	for (i = 0; i < DETER_RPL_TASKS; i++) {
		if (deter_rpl_tasks[i].task == current) {
			deter_rpl_tasks[i].rpl = rpl;
			goto out;
		}
		if (!deter_rpl_tasks[i].task && free == DETER_RPL_TASKS)
			free = i;
	}
	if (free < DETER_RPL_TASKS && rpl) {
		deter_rpl_tasks[free].task = current;
		deter_rpl_tasks[free].rpl = rpl;
	}
out:
	spin_unlock_irqrestore(&deter_rpl_tasks_lock, flags);
}

/**
 * deter_rpl_task_get() - the script the current task works for
 *
 * Return: it, or NULL.
 */
struct deter_rpl *deter_rpl_task_get(void)
{
	struct deter_rpl *rpl = NULL;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&deter_rpl_tasks_lock, flags);
	for (i = 0; i < DETER_RPL_TASKS; i++)
		if (deter_rpl_tasks[i].task == current)
			rpl = deter_rpl_tasks[i].rpl;
	spin_unlock_irqrestore(&deter_rpl_tasks_lock, flags);
	return rpl;
}

/**
 * deter_rpl_tasks_forget() - no task works for @rpl any more
 * @rpl: the script (NULL: every script)
 */
void deter_rpl_tasks_forget(struct deter_rpl *rpl)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&deter_rpl_tasks_lock, flags);
	for (i = 0; i < DETER_RPL_TASKS; i++) {
		if (!rpl || deter_rpl_tasks[i].rpl == rpl) {
			deter_rpl_tasks[i].task = NULL;
			deter_rpl_tasks[i].rpl = NULL;
		}
	}
	spin_unlock_irqrestore(&deter_rpl_tasks_lock, flags);
}

/**
 * deter_rpl_forget() - no CPU or task answers jiffies reads from @rpl
 *	any more
 * @rpl: the script
 */
void deter_rpl_forget(struct deter_rpl *rpl)
{
	unsigned int cpu;

	deter_rpl_tasks_forget(rpl);
	for_each_possible_cpu(cpu)
		cmpxchg(per_cpu_ptr(&deter_rpl_cpu, cpu), rpl, NULL);
}
