// SPDX-License-Identifier: GPL-2.0
/*
 * deter.ko: deterministic TCP record and replay.
 *
 * This file registers deter with the TCP stack, tears it down, and
 * dispatches each hook to replay or recording; each subsystem lives in
 * files of its own, and the includes run one way, down:
 *
 *   deter_main.c, deter_ctl.c (deter/control, deter/stats)
 *     |
 *     +-- recording: deter_rec_hook.c     hooks and the transmit probe
 *     |              deter_rec_value.c    values TCP reads
 *     |              deter_rec_settings.c configuration, checkpoints
 *     |              deter_rec_emit.c     batches and trace events
 *     |              deter_rec_ctl.c      switch and counters
 *     |
 *     +-- replay:    deter_replay_hook.c   hooks: turns, arrivals, calls
 *     |              deter_replay_value.c  values from the log
 *     |              deter_replay_ctl.c    scripts: load, arm, stop
 *     |              deter_replay_caller.c the handler caller
 *     |              deter_replay_ctx.c    which script a context serves
 *     |              deter_replay_seq.c    the sequencer's pure logic
 *     |
 *     +-- deter_conn.c    per-socket state, its lifetime and counters
 *         deter_debug.c   debug_clock output
 *         deter_sample.c  rate-based send-time sampling (Algorithm 1)
 *         deter_ipid.c    IP ID arithmetic for drop/reorder detection
 *
 * Loading the module publishes deter_tcp_ops through the hooks added by
 * patches/ (CONFIG_TCP_DETER), which flips their static key, and attaches
 * a probe to inet_sock_set_state; unloading withdraws both and waits for
 * hooks in flight.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/tracepoint.h>
#include <net/deter.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_ctl.h"
#include "deter_debug.h"
#include "deter_rec_ctl.h"
#include "deter_rec_hook.h"
#include "deter_rec_value.h"
#include "deter_replay_ctl.h"
#include "deter_replay_hook.h"
#include "deter_replay_value.h"

static struct dentry *deter_debugfs_dir;
static struct tracepoint *deter_tp_state;	/* inet_sock_set_state */

/*
 * A socket's lifetime: deter_conn.c tracks it; recording and replay
 * look at a passive end's creation after it is tracked and have their
 * last word on a socket before it is let go.
 */
static void deter_op_sk_init(struct sock *sk)
{
	if (deter_conn_sk_init(sk))
		deter_rec_lost(sk, DETER_REC_LOST_NOMEM);
}

static void deter_op_sk_clone(struct sock *newsk, const struct sock *parent,
			      const struct sk_buff *skb)
{
	struct deter_sock *ds;

	if (deter_conn_sk_clone(newsk))
		deter_rec_lost(newsk, DETER_REC_LOST_NOMEM);
	deter_rec_clone(newsk, skb);
	ds = deter_conn_get(newsk);
	if (ds)
		deter_replay_clone(ds, newsk, skb);
}

static void deter_op_sk_destroy(struct sock *sk)
{
	struct deter_sock *ds = deter_conn_get(sk);

	if (ds) {
		deter_replay_close(ds, sk);
		deter_rec_close(ds, sk);
	}
	deter_conn_sk_destroy(sk);
}

/*
 * inet_sock_set_state: a replayed socket's handshake is checked against
 * its log; recording selects active connections and opens their logs.
 */
static void deter_op_state(void *data, const struct sock *csk, int oldstate,
			   int newstate)
{
	struct sock *sk = (struct sock *)csk;
	struct deter_sock *ds = deter_conn_get(sk);

	if (!ds)
		return;
	if (newstate == TCP_ESTABLISHED && deter_replay_active())
		deter_replay_established(sk);
	deter_rec_state(ds, sk, oldstate, newstate);
}

static void deter_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "inet_sock_set_state"))
		deter_tp_state = tp;
}

/*
 * Each hook goes to replay when the socket is being replayed, else to
 * recording (which ignores sockets it does not record). Whether any
 * replay runs is tested here, inline: recording pays no call for it.
 * The hooks whose replay answers through a variable ask it in a function
 * of their own, so that recording's path keeps neither that variable nor
 * the registers around it on the stack: a test and a call, ~20
 * instructions less per hook.
 */
static inline bool deter_op_lock_rec(struct sock *sk, enum deter_site site)
{
	deter_rec_sk_lock(sk, site);
	if (unlikely(deter_debug_clock))
		deter_debug_timer(sk, site, false, true);
	return true;
}

static noinline bool deter_op_lock_replay(struct sock *sk, enum deter_site site)
{
	bool run;

	if (!deter_replay_sk_lock(sk, site, &run))
		return deter_op_lock_rec(sk, site);
	if (unlikely(deter_debug_clock))
		deter_debug_timer(sk, site, true, run);
	return run;
}

static bool deter_op_lock(struct sock *sk, enum deter_site site)
{
	if (deter_replay_active())
		return deter_op_lock_replay(sk, site);
	return deter_op_lock_rec(sk, site);
}

static void deter_op_release(struct sock *sk)
{
	if (!deter_replay_active() || !deter_replay_sk_backlog_check(sk, true))
		deter_rec_release(sk);
}

static void deter_op_backlog_check(struct sock *sk)
{
	if (!deter_replay_active() || !deter_replay_sk_backlog_check(sk, false))
		deter_rec_backlog_check(sk);
}

static noinline bool deter_op_page_frag_refill_replay(struct sock *sk,
						      struct page_frag *pfrag)
{
	bool ok;

	if (deter_replay_page_frag_refill(sk, pfrag, &ok))
		return ok;
	return deter_rec_page_frag_refill(sk, pfrag);
}

static bool deter_op_page_frag_refill(struct sock *sk, struct page_frag *pfrag)
{
	if (deter_replay_active())
		return deter_op_page_frag_refill_replay(sk, pfrag);
	return deter_rec_page_frag_refill(sk, pfrag);
}

static noinline bool deter_op_rx_replay(struct sock *sk, struct sk_buff *skb)
{
	bool taken;

	if (deter_replay_sk_rx(sk, skb, &taken))
		return taken;
	deter_rec_sk_rx(sk, skb);
	return false;
}

static bool deter_op_rx(struct sock *sk, struct sk_buff *skb)
{
	/* A request socket's: the child's log has it (or its handshake's). */
	if (sk->sk_state == TCP_NEW_SYN_RECV) {
		if (deter_replay_active() && deter_replay_req_rx(sk, skb))
			return true;
		deter_rec_req_rx(sk, skb);
		return false;
	}
	if (deter_replay_active())
		return deter_op_rx_replay(sk, skb);
	deter_rec_sk_rx(sk, skb);
	return false;
}

static void deter_op_call(struct sock *sk, enum deter_call call, u64 arg,
			  u32 flags)
{
	struct deter_sock *ds = deter_conn_get(sk);

	if (ds && call == DETER_CALL_SPLICE_READ)
		flags = deter_conn_splice_read_flags(ds, sk, flags);
	if (!deter_replay_active() ||
	    !deter_replay_sk_call(sk, call, arg, flags))
		deter_rec_sk_call(sk, call, arg, flags);
}

static void deter_op_call_done(struct sock *sk, enum deter_call call,
			       s64 ret)
{
	struct deter_sock *ds = deter_conn_get(sk);
	u64 pages = 0;

	if (ds && call == DETER_CALL_SENDMSG)
		pages = deter_conn_send_pages_done(ds, ret);
	if (!deter_replay_active() ||
	    !deter_replay_sk_call_done(sk, call, ret, pages))
		deter_rec_sk_call_done(sk, call, ret, pages);
}

static void deter_op_send_pages(struct sock *sk, const struct msghdr *msg)
{
	struct deter_sock *ds = deter_conn_get(sk);

	if (ds)
		deter_conn_send_pages(ds, msg, deter_conn_send_errq(sk, msg));
}

static void deter_op_icmp(struct sock *sk, const struct sk_buff *skb,
			  u32 info)
{
	if (!deter_replay_active() || !deter_replay_sk_icmp(sk))
		deter_rec_sk_icmp(sk, skb, info);
}

/* Seen by the splice read it starts, record and replay alike. */
static noinline u64 deter_op_pipe_room(const struct sock *sk, u64 val)
{
	struct deter_sock *ds = deter_conn_get(sk);

	if (ds)
		ds->pipe_room = min_t(u64, val, U32_MAX);
	return val;
}

static noinline u64 deter_op_value_replay(const struct sock *sk,
					  const struct sk_buff *skb,
					  enum deter_value what, u64 val)
{
	u64 v = val;

	if (deter_replay_value(sk, skb, what, &v))
		return v;
	return deter_rec_value(sk, skb, what, val);
}

static u64 deter_op_value(const struct sock *sk, const struct sk_buff *skb,
			  enum deter_value what, u64 val)
{
	if (what == DETER_VAL_PIPE_ROOM)
		return deter_op_pipe_room(sk, val);
	if (deter_replay_active())
		return deter_op_value_replay(sk, skb, what, val);
	return deter_rec_value(sk, skb, what, val);
}

static noinline unsigned long deter_op_jiffies_replay(void)
{
	unsigned long now;

	if (deter_replay_jiffies(&now))
		return now;
	return deter_rec_jiffies_read();
}

static unsigned long deter_op_jiffies(void)
{
	if (deter_replay_active())
		return deter_op_jiffies_replay();
	return deter_rec_jiffies_read();
}

static const struct deter_ops deter_tcp_ops = {
	.sk_init	= deter_op_sk_init,
	.sk_clone	= deter_op_sk_clone,
	.sk_destroy	= deter_op_sk_destroy,
	.sk_lock	= deter_op_lock,
	.sk_lock_wait	= deter_replay_sk_lock_wait,
	.sk_release	= deter_op_release,
	.sk_backlog_check = deter_op_backlog_check,
	.sk_rx		= deter_op_rx,
	.sk_call	= deter_op_call,
	.sk_call_done	= deter_op_call_done,
	.sk_page_frag_refill = deter_op_page_frag_refill,
	.value		= deter_op_value,
	.jiffies	= deter_op_jiffies,
	.sk_icmp	= deter_op_icmp,
	.sk_send_pages	= deter_op_send_pages,
	.owner		= THIS_MODULE,
};

static int __init deter_init(void)
{
	int err;

	for_each_kernel_tracepoint(deter_find_tp, NULL);
	if (!deter_tp_state) {
		pr_err("tracepoint inet_sock_set_state not found\n");
		return -ENOENT;
	}
	deter_conn_init();
	deter_debugfs_dir = debugfs_create_dir("deter", NULL);
	err = deter_rec_init();
	if (err)
		goto err_debugfs;
	err = deter_replay_init(deter_debugfs_dir);
	if (err)
		goto err_rec;
	deter_ctl_init(deter_debugfs_dir);
	err = tracepoint_probe_register(deter_tp_state, deter_op_state, NULL);
	if (err)
		goto err_replay;

	err = deter_register_ops(&deter_tcp_ops);
	if (err) {
		pr_err("cannot register TCP hooks: %d\n", err);
		goto err_state;
	}
	pr_info("loaded, format version %d\n", DETER_ABI_VERSION);
	return 0;

err_state:
	tracepoint_probe_unregister(deter_tp_state, deter_op_state, NULL);
	tracepoint_synchronize_unregister();
err_replay:
	deter_replay_exit();
err_rec:
	deter_rec_exit();
err_debugfs:
	debugfs_remove(deter_debugfs_dir);
	return err;
}

static void __exit deter_exit(void)
{
	/* Hooks, then probes, then the state they used. */
	deter_unregister_ops(&deter_tcp_ops);
	tracepoint_probe_unregister(deter_tp_state, deter_op_state, NULL);
	tracepoint_synchronize_unregister();
	deter_replay_exit();
	deter_rec_exit();
	deter_conn_exit();
	debugfs_remove(deter_debugfs_dir);
	pr_info("unloaded\n");
}

module_init(deter_init);
module_exit(deter_exit);

MODULE_DESCRIPTION("deter: deterministic TCP record and replay");
MODULE_AUTHOR("deter developers");
MODULE_LICENSE("GPL");
