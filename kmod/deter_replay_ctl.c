// SPDX-License-Identifier: GPL-2.0
/*
 * Replay's scripts: loading, arming, stopping.
 *
 * `deter replay` writes one script per connection end to deter/replay,
 * then "replay" to deter/control. Each process that loads scripts runs
 * one replay of its own, so replays run side by side:
 *
 *   write deter/replay  --> validate, copy, list (LOADED); -EEXIST for a
 *                           4-tuple already listed, -EALREADY once the
 *                           writer's replay runs, -ENOSPC past
 *                           DETER_RPL_MAX_SCRIPTS
 *   "replay"            --> arm the writer's scripts: a socket whose
 *                           4-tuple matches one is bound to it at
 *                           connect() or its handshake (RUNNING)
 *   "stop", or the      --> unlist the writer's scripts (or those of
 *   writer exited           processes gone), wait for hooks in flight,
 *                           free them
 *
 * Reading deter/replay gives one status line per script (deter_abi.h).
 *
 * Freeing is in three steps, because hooks find a script from a socket
 * (ds->rpl), from the list (RCU), and from a CPU or a task
 * (deter_replay_ctx.c): take it out of reach of each, wait an RCU grace
 * period, then for the processes sleeping on its wait queue to leave.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_ctl.h"

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "deter_replay_caller.h"
#include "deter_replay_ctx.h"
#include "deter_replay_gone.h"

/* Scripts loaded at once, all replays: two ends of 32 connections. */
#define DETER_RPL_MAX_SCRIPTS	64

/*
 * Scripts of every replay (the process that loaded them). Hooks walk the
 * list under RCU; it changes under deter_rpl_mutex. deter_rpl_armed:
 * some replay runs.
 */
static LIST_HEAD(deter_rpl_list);
static DEFINE_MUTEX(deter_rpl_mutex);	/* list changes, arming */
bool deter_rpl_armed __read_mostly;
DECLARE_WAIT_QUEUE_HEAD(deter_rpl_users_wq);

static const char *const deter_rpl_state_names[] = {
	[DETER_RPL_LOADED] = "loaded",
	[DETER_RPL_RUNNING] = "running",
	[DETER_RPL_DONE] = "done",
	[DETER_RPL_DIVERGED] = "diverged",
};

/**
 * deter_rpl_find() - a loaded script for this end, by 4-tuple
 * @saddr: this end's address, host order
 * @sport: its port
 * @daddr: the peer's address
 * @dport: its port
 *
 * Under RCU or deter_rpl_mutex.
 *
 * Return: the script, or NULL.
 */
struct deter_rpl *deter_rpl_find(u32 saddr, u16 sport, u32 daddr, u16 dport)
{
	struct deter_rpl *rpl;

	list_for_each_entry_rcu(rpl, &deter_rpl_list, node,
				lockdep_is_held(&deter_rpl_mutex))
		if (rpl->hdr.sport == sport && rpl->hdr.dport == dport &&
		    rpl->hdr.saddr == saddr && rpl->hdr.daddr == daddr)
			return rpl;
	return NULL;
}

/**
 * deter_rpl_find_sk() - a loaded script for the end @sk is
 * @sk: a socket with its addresses and ports set
 *
 * Return: the script, or NULL.
 */
struct deter_rpl *deter_rpl_find_sk(const struct sock *sk)
{
	return deter_rpl_find(ntohl(sk->sk_rcv_saddr), sk->sk_num,
			      ntohl(sk->sk_daddr), ntohs(sk->sk_dport));
}

/**
 * deter_rpl_find_child() - the script for a passive end the handshake
 *	just created
 * @sport: its port
 * @dport: the peer's port
 *
 * Its addresses are still the listener's: matched by ports, the first
 * armed script not yet bound. Under RCU.
 *
 * Return: the script, or NULL.
 */
struct deter_rpl *deter_rpl_find_child(u16 sport, u16 dport)
{
	struct deter_rpl *rpl;

	list_for_each_entry_rcu(rpl, &deter_rpl_list, node)
		if (rpl->hdr.sport == sport && rpl->hdr.dport == dport &&
		    READ_ONCE(rpl->armed) && rpl->state == DETER_RPL_LOADED)
			return rpl;
	return NULL;
}

static void deter_rpl_free(struct deter_rpl *rpl)
{
	cancel_delayed_work_sync(&rpl->work);
	/* A script dropped right after its socket's end has not let go yet. */
	deter_rpl_let_go(rpl);
	deter_shape_pages_free(&rpl->pages);
	if (rpl->ds)
		WRITE_ONCE(rpl->ds->rpl, NULL);
	if (rpl->sk)
		sock_put(rpl->sk);
	put_pid(rpl->owner);
	kvfree(rpl->ev);
	kvfree(rpl->states);
	kfree(rpl);
}

static int deter_rpl_parse(const u8 *buf, size_t len, struct deter_rpl **out)
{
	const struct deter_replay_hdr *h = (const void *)buf;
	size_t evlen, stlen;
	struct deter_rpl *rpl;
	int err;
	u32 i;

	err = deter_rpl_validate(buf, len);
	if (err)
		return err;
	evlen = (size_t)h->nevents * sizeof(struct deter_replay_ev);
	stlen = (size_t)h->nstates * DETER_ST_MAX * sizeof(u64);
	rpl = kzalloc(sizeof(*rpl), GFP_KERNEL);
	if (!rpl)
		return -ENOMEM;
	spin_lock_init(&rpl->lock);
	skb_queue_head_init(&rpl->held);
	skb_queue_head_init(&rpl->frames);
	init_waitqueue_head(&rpl->wq);
	INIT_DELAYED_WORK(&rpl->work, deter_rpl_work);	/* deter_rpl_free() cancels it */
	rpl->hdr = *h;
	rpl->ev = kvmalloc(evlen, GFP_KERNEL);
	rpl->states = kvmalloc(stlen ?: 1, GFP_KERNEL);
	if (!rpl->ev || !rpl->states) {
		deter_rpl_free(rpl);
		return -ENOMEM;
	}
	memcpy(rpl->ev, buf + sizeof(*h), evlen);
	memcpy(rpl->states, buf + sizeof(*h) + evlen, stlen);
	for (i = 0; i < h->nevents; i++) {
		const struct deter_replay_ev *e = &rpl->ev[i];

		if (e->type == DETER_EV_RX &&
		    !(e->b & (DETER_RX_SYN | DETER_RX_CTL)))
			rpl->rx_last = max(rpl->rx_last, e->a);
		rpl->shaped |= deter_rpl_is_shape(e);
	}
	rpl->state = DETER_RPL_LOADED;
	*out = rpl;
	return 0;
}

/*
 * Drop the scripts of the replay of process @owner (NULL: of every
 * process, or with @dead of every process that has exited). A running
 * script ends as diverged ("stopped"). Process context; sleeps until no
 * hook uses them.
 */
static void deter_rpl_stop(struct pid *owner, bool dead)
{
	struct deter_rpl *rpl, *tmp;
	LIST_HEAD(gone);
	bool any = false;

	mutex_lock(&deter_rpl_mutex);
	list_for_each_entry_safe(rpl, tmp, &deter_rpl_list, node) {
		if (dead ? pid_has_task(rpl->owner, PIDTYPE_TGID) :
		    owner && rpl->owner != owner) {
			any |= rpl->armed;
			continue;
		}
		list_del_rcu(&rpl->node);
		list_add_tail(&rpl->node, &gone);	/* after the grace period */
	}
	if (list_empty(&gone)) {
		mutex_unlock(&deter_rpl_mutex);
		return;
	}
	WRITE_ONCE(deter_rpl_armed, any);
	/* Take each out of reach of new hooks, then wait for those in flight. */
	list_for_each_entry(rpl, &gone, node) {
		spin_lock_bh(&rpl->lock);
		if (rpl->state == DETER_RPL_RUNNING)
			deter_rpl_diverge(rpl, "stopped");
		WRITE_ONCE(rpl->armed, false);
		if (rpl->ds)
			WRITE_ONCE(rpl->ds->rpl, NULL);
		spin_unlock_bh(&rpl->lock);
		deter_rpl_forget(rpl);
	}
	synchronize_rcu();
	/* Hooks that were in flight may have pointed a CPU or task at one. */
	list_for_each_entry(rpl, &gone, node)
		deter_rpl_forget(rpl);
	synchronize_rcu();
	mutex_unlock(&deter_rpl_mutex);
	list_for_each_entry_safe(rpl, tmp, &gone, node) {
		list_del(&rpl->node);
		wake_up_all(&rpl->wq);
		wait_event(deter_rpl_users_wq, !atomic_read(&rpl->users));
		deter_rpl_free(rpl);
	}
}

static ssize_t deter_rpl_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct deter_rpl *rpl, *old;
	unsigned int n = 0;
	u8 *buf;
	int err;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (len < sizeof(struct deter_replay_hdr) || len > (64U << 20))
		return -EINVAL;
	buf = vmemdup_user(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	err = deter_rpl_parse(buf, len, &rpl);
	kvfree(buf);
	if (err)
		return err;
	err = deter_rpl_gone_start();
	if (err) {
		deter_rpl_free(rpl);
		return err;
	}

	rpl->owner = get_task_pid(current, PIDTYPE_TGID);
	/* Replays whose process is gone without "stop" end here. */
	deter_rpl_stop(NULL, true);

	mutex_lock(&deter_rpl_mutex);
	list_for_each_entry(old, &deter_rpl_list, node) {
		n++;
		if (old->owner == rpl->owner && old->armed)
			err = -EALREADY;	/* this replay already runs */
	}
	if (!err && n >= DETER_RPL_MAX_SCRIPTS)
		err = -ENOSPC;
	else if (!err && deter_rpl_find(rpl->hdr.saddr, rpl->hdr.sport,
					rpl->hdr.daddr, rpl->hdr.dport))
		err = -EEXIST;
	if (!err) {
		list_add_tail_rcu(&rpl->node, &deter_rpl_list);
		rpl = NULL;
	}
	mutex_unlock(&deter_rpl_mutex);
	if (rpl) {
		deter_rpl_free(rpl);
		return err;
	}
	return len;
}

static int deter_rpl_show(struct seq_file *m, void *v)
{
	struct deter_rpl *rpl;

	mutex_lock(&deter_rpl_mutex);
	list_for_each_entry(rpl, &deter_rpl_list, node) {
		spin_lock_bh(&rpl->lock);
		seq_printf(m, "%pI4h:%u %pI4h:%u %s %u/%u %u %s\n",
			   &rpl->hdr.saddr, rpl->hdr.sport, &rpl->hdr.daddr,
			   rpl->hdr.dport, deter_rpl_state_names[rpl->state],
			   rpl->ctx, rpl->hdr.nevents, rpl->diverged_nr,
			   rpl->msg[0] ? rpl->msg : "-");
		spin_unlock_bh(&rpl->lock);
	}
	mutex_unlock(&deter_rpl_mutex);
	return 0;
}

static int deter_rpl_open(struct inode *inode, struct file *file)
{
	return single_open(file, deter_rpl_show, NULL);
}

static const struct file_operations deter_rpl_fops = {
	.owner = THIS_MODULE,
	.open = deter_rpl_open,
	.read = seq_read,
	.write = deter_rpl_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * deter_replay_arm() - start replaying the scripts the calling process
 *	loaded, or stop them and drop them
 * @on: start (true) or stop
 *
 * Other processes' replays go on: each process runs one replay.
 *
 * Return: 0, or -ENOENT when starting with no script loaded.
 */
int deter_replay_arm(bool on)
{
	struct pid *me;
	struct deter_rpl *rpl;
	int err = -ENOENT;

	if (!on) {
		me = get_task_pid(current, PIDTYPE_TGID);
		deter_rpl_stop(me, false);
		put_pid(me);
		return 0;
	}
	me = task_tgid(current);
	mutex_lock(&deter_rpl_mutex);
	list_for_each_entry(rpl, &deter_rpl_list, node) {
		if (rpl->owner != me)
			continue;
		WRITE_ONCE(rpl->armed, true);
		err = 0;
	}
	if (!err)
		WRITE_ONCE(deter_rpl_armed, true);
	mutex_unlock(&deter_rpl_mutex);
	return err;
}

/**
 * deter_replay_init() - create deter/replay and the handler caller
 * @dir: deter's debugfs directory
 *
 * Return: 0, or -ENOMEM.
 */
int deter_replay_init(struct dentry *dir)
{
	int err = deter_rpl_caller_init();

	if (err)
		return err;
	debugfs_create_file("replay", 0600, dir, NULL, &deter_rpl_fops);
	return 0;
}

/**
 * deter_replay_exit() - stop and free every script
 */
void deter_replay_exit(void)
{
	deter_rpl_gone_exit();
	deter_rpl_stop(NULL, false);
	deter_rpl_tasks_forget(NULL);
	deter_rpl_caller_exit();
}
