// SPDX-License-Identifier: GPL-2.0
/*
 * Replay: re-execute recorded connections (DETER §3.1, §4 "Replay").
 *
 * A script (struct deter_replay_hdr + events + checkpoint values) is the
 * log of one connection end. Once armed, the socket whose 4-tuple matches
 * a script is bound to it at connect() (active end) or when the handshake
 * creates it (passive end), and from then on three cursors walk the log:
 *
 *   ctx   the next context event (LOCK, RX): who takes the lock next.
 *         An app waits for its turn in lock_sock(); a segment that is not
 *         yet due is held back and re-entered into TCP when it is; a real
 *         timer or TSQ run is skipped and the worker runs the handler
 *         when the log says (the "handler caller"). Passing a VALUE
 *         JIFFIES event sets the jiffies TCP reads; passing a checkpoint
 *         right after the event just consumed compares it with the
 *         socket's state.
 *   clk   the next CLOCK value, handed to the next tcp_clock_ns() read.
 *   call  the next socket call and its result, checked against the app.
 *
 * The first difference stops the replay of that script ("diverged",
 * with the event and what was expected and found); from then on its
 * hooks let TCP run freely so the processes involved can finish. Nothing
 * here spins: an app waits with a timeout, the worker polls once a jiffy
 * while the owner it needs is busy, and held segments are bounded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/icmp.h>
#include <linux/ip.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/ip.h>
#include <net/protocol.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_debug.h"
#include "deter_ipid.h"
#include "deter_replay.h"

#define DETER_RPL_MAX_SCRIPTS	64
#define DETER_RPL_MAX_EVENTS	BIT(24)
#define DETER_RPL_MAX_HELD	1024	/* segments held back per socket */
#define DETER_RPL_LOOKAHEAD	8192	/* events searched for a held segment */
#define DETER_RPL_APP_WAIT	(10 * HZ)
#define DETER_RPL_TASKS		16

enum deter_rpl_state {
	DETER_RPL_LOADED,
	DETER_RPL_RUNNING,
	DETER_RPL_DONE,
	DETER_RPL_DIVERGED,
};

static const char *const deter_rpl_state_names[] = {
	[DETER_RPL_LOADED] = "loaded",
	[DETER_RPL_RUNNING] = "running",
	[DETER_RPL_DONE] = "done",
	[DETER_RPL_DIVERGED] = "diverged",
};

/*
 * A timing-dependent value the log lists only where it is not the usual
 * one (a test that found true, a backlog that was not empty), each after
 * the run of usual ones before it.
 */
struct deter_rpl_rare {
	const struct deter_replay_ev *ev;	/* the next true one */
	u32 cursor;				/* just past it */
};

struct deter_rpl {
	struct list_head node;		/* deter_rpl_list, RCU */
	struct pid *owner;		/* the process that loaded it */
	bool armed;			/* its owner said "replay" */
	struct deter_replay_hdr hdr;
	struct deter_replay_ev *ev;
	u64 *states;

	spinlock_t lock;		/* cursors and state below */
	enum deter_rpl_state state;
	struct sock *sk;		/* bound socket, held */
	struct deter_sock *ds;
	u32 ctx, clk, call, synack, rnd; /* cursors: event indices */
	struct deter_rpl_rare tsq;	/* TSQ_FULL */
	struct deter_rpl_rare autocork;	/* AUTOCORK */
	struct deter_rpl_rare hostq;	/* HOST_QUEUED */
	struct deter_rpl_rare bl;	/* BACKLOG_LEN */
	struct deter_rpl_rare pf;	/* PAGE_FRAG */
	struct deter_rpl_rare mem;	/* MEM: the next change */
	struct deter_rpl_rare busy;	/* HOST_BUSY: the next change */
	struct deter_rpl_rare host;	/* HOST */
	u32 sig;			/* the next HOST SIGNAL, or past the end */
	u32 ptw;			/* the next RX CTL for the peer's time-wait */
	u32 ctx_seq;			/* seq of the last non-owned context */
	u32 app_woken;			/* ctx + 1 of the last app wake-up */
	u64 rx_last;			/* highest index a segment's RX logs */
	u64 clock;			/* last CLOCK value handed out */
	unsigned long jiffies;		/* jiffies TCP reads */
	u32 jif;			/* JIFFIES events before it applied */
	bool ipid_given;
	u32 diverged_nr;		/* deter_rpl_diverged at its divergence */
	char msg[192];

	struct sk_buff_head held;	/* segments not yet due */
	struct task_struct *driver;	/* the worker inside lock_sock() */
	wait_queue_head_t wq;		/* apps waiting for their turn */
	struct delayed_work work;	/* the handler caller */
	atomic_t users;			/* processes sleeping on wq */
};

/*
 * Scripts of every replay session (the process that loaded them), so
 * replays run side by side. Hooks walk the list under RCU; it changes
 * under deter_rpl_mutex. deter_rpl_armed: some session is replaying.
 */
static LIST_HEAD(deter_rpl_list);
static DEFINE_MUTEX(deter_rpl_mutex);	/* list changes, arming */
bool deter_rpl_armed __read_mostly;
static struct workqueue_struct *deter_rpl_wq;
static DECLARE_WAIT_QUEUE_HEAD(deter_rpl_users_wq);

/* Which script a context is working for, to answer jiffies reads. */
static DEFINE_PER_CPU(struct deter_rpl *, deter_rpl_cpu);
static DEFINE_PER_CPU(struct sock *, deter_rpl_firing);
static DEFINE_PER_CPU(struct sock *, deter_rpl_icmp);	/* being injected */
static struct {
	struct task_struct *task;
	struct deter_rpl *rpl;
} deter_rpl_tasks[DETER_RPL_TASKS];
static DEFINE_SPINLOCK(deter_rpl_tasks_lock);

static const char *const deter_rpl_lock_names[DETER_LOCK_MAX] = {
	[DETER_LOCK_APP] = "app lock",
	[DETER_LOCK_WRITE_TIMER] = "write timer",
	[DETER_LOCK_DELACK_TIMER] = "delayed-ACK timer",
	[DETER_LOCK_KEEPALIVE_TIMER] = "keepalive timer",
	[DETER_LOCK_COMP_ACK_TIMER] = "compressed-ACK timer",
	[DETER_LOCK_TSQ] = "TSQ",
	[DETER_LOCK_BACKLOG] = "backlog batch",
	[DETER_LOCK_MTU_REDUCED] = "PMTU update",
};

static const u8 deter_rpl_site_lock[DETER_SITE_MAX] = {
	[DETER_SITE_LOCK_APP] = DETER_LOCK_APP,
	[DETER_SITE_LOCK_WRITE_TIMER] = DETER_LOCK_WRITE_TIMER,
	[DETER_SITE_LOCK_DELACK_TIMER] = DETER_LOCK_DELACK_TIMER,
	[DETER_SITE_LOCK_KEEPALIVE_TIMER] = DETER_LOCK_KEEPALIVE_TIMER,
	[DETER_SITE_LOCK_COMP_ACK_TIMER] = DETER_LOCK_COMP_ACK_TIMER,
	[DETER_SITE_LOCK_TSQ] = DETER_LOCK_TSQ,
	[DETER_SITE_LOCK_BACKLOG] = DETER_LOCK_BACKLOG,
};

static void deter_rpl_task_set(struct deter_rpl *rpl)
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

static struct deter_rpl *deter_rpl_task_get(void)
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

static void deter_rpl_tasks_forget(struct deter_rpl *rpl)
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

/* The script bound to @sk, if it is being replayed. */
static struct deter_rpl *deter_rpl_get(const struct sock *sk)
{
	struct deter_sock *ds;
	struct deter_rpl *rpl;

	if (!READ_ONCE(deter_rpl_armed) || sk->sk_protocol != IPPROTO_TCP)
		return NULL;
	ds = deter_conn_get(sk);
	rpl = ds ? READ_ONCE(ds->rpl) : NULL;
	return rpl && READ_ONCE(rpl->state) == DETER_RPL_RUNNING ? rpl : NULL;
}

/* A loaded script for this end, by 4-tuple (host order). */
static struct deter_rpl *deter_rpl_find(u32 saddr, u16 sport, u32 daddr,
					u16 dport)
{
	struct deter_rpl *rpl;

	list_for_each_entry_rcu(rpl, &deter_rpl_list, node,
				lockdep_is_held(&deter_rpl_mutex))
		if (rpl->hdr.sport == sport && rpl->hdr.dport == dport &&
		    rpl->hdr.saddr == saddr && rpl->hdr.daddr == daddr)
			return rpl;
	return NULL;
}

static struct deter_rpl *deter_rpl_find_sk(const struct sock *sk)
{
	return deter_rpl_find(ntohl(sk->sk_rcv_saddr), sk->sk_num,
			      ntohl(sk->sk_daddr), ntohs(sk->sk_dport));
}

/* Kick the handler caller and wake apps waiting for their turn. */
static void deter_rpl_kick(struct deter_rpl *rpl, unsigned long delay)
{
	wake_up_all(&rpl->wq);
	mod_delayed_work(deter_rpl_wq, &rpl->work, delay);
}

/*
 * Divergences so far, all scripts: each numbers its own, so that of two
 * ends that diverged, the one whose difference came first (and made the
 * other's) can be told.
 */
static atomic_t deter_rpl_diverged = ATOMIC_INIT(0);

static void __printf(2, 3) deter_rpl_diverge(struct deter_rpl *rpl,
					     const char *fmt, ...)
{
	va_list ap;

	if (rpl->state != DETER_RPL_RUNNING)
		return;
	va_start(ap, fmt);
	vsnprintf(rpl->msg, sizeof(rpl->msg), fmt, ap);
	va_end(ap);
	rpl->diverged_nr = atomic_inc_return(&deter_rpl_diverged);
	WRITE_ONCE(rpl->state, DETER_RPL_DIVERGED);
	pr_info("replay %pI4h:%u diverged: %s\n", &rpl->hdr.saddr,
		rpl->hdr.sport, rpl->msg);
}

static const struct deter_replay_ev *deter_rpl_at(const struct deter_rpl *rpl,
						  u32 i)
{
	return i < rpl->hdr.nevents ? &rpl->ev[i] : NULL;
}

static bool deter_rpl_is_icmp(const struct deter_replay_ev *e)
{
	return e->type == DETER_EV_NET && e->sub == DETER_NET_ICMP;
}

static bool deter_rpl_is_ctx(const struct deter_replay_ev *e)
{
	return e->type == DETER_EV_LOCK || e->type == DETER_EV_RX ||
	       deter_rpl_is_icmp(e);
}

/* An event that happened while a process owned the socket. */
static bool deter_rpl_is_owned(const struct deter_replay_ev *e)
{
	if (e->type == DETER_EV_RX)
		return e->b & DETER_RX_OWNED;
	if (deter_rpl_is_icmp(e))
		return e->a & DETER_ICMP_F_OWNED;
	return e->type == DETER_EV_LOCK && e->sub != DETER_LOCK_APP &&
	       ((e->a & DETER_LOCK_F_DEFERRED) || e->sub == DETER_LOCK_BACKLOG);
}

static void deter_rpl_describe(const struct deter_replay_ev *e, char *buf,
			       size_t len)
{
	if (!e)
		snprintf(buf, len, "the end of the log");
	else if (e->type == DETER_EV_LOCK && e->sub < DETER_LOCK_MAX)
		snprintf(buf, len, "%s%s", deter_rpl_lock_names[e->sub],
			 (e->a & DETER_LOCK_F_DEFERRED) &&
			 e->sub != DETER_LOCK_BACKLOG ? " (deferred)" : "");
	else if (e->type == DETER_EV_RX && (e->b & DETER_RX_SYN))
		snprintf(buf, len, "a SYN segment");
	else if (e->type == DETER_EV_RX)
		snprintf(buf, len, "segment ipid %llu", e->a & 0xffff);
	else if (deter_rpl_is_icmp(e))
		snprintf(buf, len, "an ICMP error (type %llu code %llu)",
			 e->a >> 8 & 0xff, e->a & 0xff);
	else
		snprintf(buf, len, "event type %u", e->type);
}

static void deter_rpl_state_read(const struct sock *sk,
				 const struct deter_sock *ds, u64 *v)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	v[DETER_ST_SND_UNA] = tp->snd_una;
	v[DETER_ST_SND_NXT] = tp->snd_nxt;
	v[DETER_ST_RCV_NXT] = tp->rcv_nxt;
	v[DETER_ST_CWND] = tcp_snd_cwnd(tp);
	v[DETER_ST_SSTHRESH] = tp->snd_ssthresh;
	v[DETER_ST_PACKETS_OUT] = tp->packets_out;
	v[DETER_ST_RETRANS_OUT] = tp->retrans_out;
	v[DETER_ST_SACKED_OUT] = tp->sacked_out;
	v[DETER_ST_LOST_OUT] = tp->lost_out;
	v[DETER_ST_RCV_WND] = tp->rcv_wnd;
	v[DETER_ST_TOTAL_RETRANS] = tp->total_retrans;
	v[DETER_ST_TOTAL_RTO] = tp->total_rto;
	v[DETER_ST_RX_ZERO_WND] = ds->rx_zero_wnd;
	v[DETER_ST_STATE] = sk->sk_state;
	v[DETER_ST_BYTES_ACKED] = tp->bytes_acked;
	v[DETER_ST_BYTES_RECEIVED] = tp->bytes_received;
}

static const char *const deter_rpl_st_names[DETER_ST_MAX] = {
	"snd_una", "snd_nxt", "rcv_nxt", "cwnd", "ssthresh", "packets_out",
	"retrans_out", "sacked_out", "lost_out", "rcv_wnd", "total_retrans",
	"total_rto", "rx_zero_wnd", "state", "bytes_acked", "bytes_received",
};

/* Compare checkpoint @e with @sk's state now. Under rpl->lock. */
static void deter_rpl_check(struct deter_rpl *rpl,
			    const struct deter_replay_ev *e)
{
	u64 now[DETER_ST_MAX];
	const u64 *want;
	unsigned int i;

	if (e->a >= rpl->hdr.nstates || !rpl->ds)
		return;
	want = &rpl->states[e->a * DETER_ST_MAX];
	deter_rpl_state_read(rpl->sk, rpl->ds, now);
	if (unlikely(deter_debug_clock))
		deter_debug_state("rpl", rpl->sk, e->seq);
	for (i = 0; i < DETER_ST_MAX; i++) {
		/* counters of the recording side only */
		if (i == DETER_ST_RX_ZERO_WND)
			continue;
		if (now[i] != want[i]) {
			deter_rpl_diverge(rpl, "event %u: %s %s expected %llu, found %llu",
					  e->seq, e->sub ? "summary" : "checkpoint",
					  deter_rpl_st_names[i], want[i], now[i]);
			return;
		}
	}
}

/*
 * Apply the jiffies changes logged before event @i. A change is logged
 * just before the first event (a context taking the lock, or a TCP clock
 * read) that saw it, so TCP reads the new value from that event on. A
 * segment backlogged by a softirq does not apply them: the owner,
 * working at the same time, does at its next event. Under rpl->lock.
 */
static void deter_rpl_jiffies_to(struct deter_rpl *rpl, u32 i)
{
	const struct deter_replay_ev *e;

	for (; rpl->jif < i && (e = deter_rpl_at(rpl, rpl->jif)); rpl->jif++)
		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_JIFFIES)
			rpl->jiffies += e->a;
}

/*
 * Move rpl->ctx from @i to the next context event and, when @taken is
 * the event just consumed, check the checkpoint taken right after it.
 * Under rpl->lock.
 */
static void deter_rpl_ctx_skip(struct deter_rpl *rpl, u32 i,
			       const struct deter_replay_ev *taken)
{
	const struct deter_replay_ev *e;

	for (; (e = deter_rpl_at(rpl, i)) && !deter_rpl_is_ctx(e); i++) {
		if (taken && e->type == DETER_EV_STATE && !e->sub &&
		    e->seq == taken->seq + 1)
			deter_rpl_check(rpl, e);
	}
	rpl->ctx = i;
}

/*
 * The context event at rpl->ctx was taken: move to the next one. Under
 * rpl->lock, in the context that took the lock.
 */
static void deter_rpl_ctx_next(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *taken = &rpl->ev[rpl->ctx];

	/* A softirq's backlogged segment: the owner applies them. */
	if (!deter_rpl_is_owned(taken) || taken->type == DETER_EV_LOCK)
		deter_rpl_jiffies_to(rpl, rpl->ctx);
	if (!deter_rpl_is_owned(taken))
		rpl->ctx_seq = taken->seq;
	deter_rpl_ctx_skip(rpl, rpl->ctx + 1, taken);
	deter_rpl_kick(rpl, 0);
}

/* A HOST SIGNAL: outside the run of host answers (deter_rpl_signal()). */
static bool deter_rpl_is_signal(const struct deter_replay_ev *e)
{
	return e->type == DETER_EV_VALUE && e->sub == DETER_V_HOST &&
	       e->b >> 32 == DETER_HOST_SIGNAL;
}

/* The next VALUE @what at or after *cursor (but signals). Under rpl->lock. */
static const struct deter_replay_ev *deter_rpl_next_value(struct deter_rpl *rpl,
							  u32 *cursor,
							  u16 what)
{
	const struct deter_replay_ev *e;
	u32 i;

	for (i = *cursor; (e = deter_rpl_at(rpl, i)); i++) {
		if (e->type == DETER_EV_VALUE && e->sub == what &&
		    !deter_rpl_is_signal(e)) {
			*cursor = i + 1;
			return e;
		}
	}
	*cursor = i;
	return NULL;
}

static void deter_rpl_rare_init(struct deter_rpl *rpl,
				struct deter_rpl_rare *r, u16 what)
{
	r->cursor = 0;
	r->ev = deter_rpl_next_value(rpl, &r->cursor, what);
}

/* Bind @sk to @rpl: from now on it is replayed. */
static void deter_rpl_bind(struct deter_rpl *rpl, struct sock *sk)
{
	struct deter_sock *ds = deter_conn_get(sk);
	const struct deter_replay_ev *e;

	if (!ds || rpl->sk)
		return;
	sock_hold(sk);
	rpl->sk = sk;
	rpl->ds = ds;
	rpl->jiffies = 0;
	rpl->jif = 0;
	deter_rpl_rare_init(rpl, &rpl->tsq, DETER_V_TSQ_FULL);
	deter_rpl_rare_init(rpl, &rpl->autocork, DETER_V_AUTOCORK);
	deter_rpl_rare_init(rpl, &rpl->hostq, DETER_V_HOST_QUEUED);
	deter_rpl_rare_init(rpl, &rpl->bl, DETER_V_BACKLOG_LEN);
	deter_rpl_rare_init(rpl, &rpl->pf, DETER_V_PAGE_FRAG);
	deter_rpl_rare_init(rpl, &rpl->mem, DETER_V_MEM);
	deter_rpl_rare_init(rpl, &rpl->busy, DETER_V_HOST_BUSY);
	deter_rpl_rare_init(rpl, &rpl->host, DETER_V_HOST);
	rpl->sig = 0;
	rpl->ptw = 0;
	/* The log starts with the jiffies at the connection's start. */
	e = deter_rpl_at(rpl, 0);
	if (e && e->type == DETER_EV_VALUE && e->sub == DETER_V_JIFFIES)
		deter_rpl_jiffies_to(rpl, 1);
	deter_rpl_ctx_skip(rpl, 0, NULL);
	WRITE_ONCE(ds->rpl, rpl);
	WRITE_ONCE(rpl->state, DETER_RPL_RUNNING);
}

static void deter_rpl_set_cpu(struct deter_rpl *rpl)
{
	this_cpu_write(deter_rpl_cpu, rpl);
}

/*
 * A timer's turn the log says was due: make the handler's own check of
 * its deadline agree. Under the socket lock and rpl->lock, after the
 * turn's jiffies were applied: the context before may have re-armed the
 * timer while the handler caller waited for it. Both deadlines and
 * their checks are on the jiffies TCP reads (deter_jiffies(), patch
 * 0005), the logged ones here. A handler deferred to the owner is not
 * made due: it decides in tcp_release_cb(), on replayed deadline and
 * logged jiffies, as the original did.
 */
static void deter_rpl_timer_due(struct deter_rpl *rpl, enum deter_site site)
{
	struct inet_connection_sock *icsk = inet_csk(rpl->sk);

	if (site == DETER_SITE_LOCK_WRITE_TIMER)
		WRITE_ONCE(icsk->icsk_timeout, rpl->jiffies);
	else if (site == DETER_SITE_LOCK_DELACK_TIMER)
		WRITE_ONCE(icsk->icsk_ack.timeout, rpl->jiffies);
}

/* The sk_tsq_flags bit of a handler deferred to the owner, or -1. */
static int deter_rpl_deferred_bit(u8 who)
{
	switch (who) {
	case DETER_LOCK_TSQ:
		return TCP_TSQ_DEFERRED;
	case DETER_LOCK_WRITE_TIMER:
		return TCP_WRITE_TIMER_DEFERRED;
	case DETER_LOCK_DELACK_TIMER:
		return TCP_DELACK_TIMER_DEFERRED;
	case DETER_LOCK_MTU_REDUCED:
		return TCP_MTU_REDUCED_DEFERRED;
	}
	return -1;
}

static bool deter_rpl_is_deferred(const struct deter_replay_ev *e)
{
	return e && e->type == DETER_EV_LOCK &&
	       (e->a & DETER_LOCK_F_DEFERRED) &&
	       deter_rpl_deferred_bit(e->sub) >= 0;
}

/*
 * The owner is about to run the handlers deferred to it, in
 * tcp_release_cb() (spinlock held). The log has each where the original
 * ran it: set those it has next, as their timer or tasklet would have.
 * The replay's own timers and tasklets defer nothing: they do not run
 * (deter_replay_sk_lock()). An ICMP error the replay handed the owned
 * socket did set its bit (deter_rpl_inject_icmp()): it is taken back
 * until the log has the owner run it.
 */
static void deter_rpl_deferred(struct deter_rpl *rpl, struct sock *sk)
{
	const struct deter_replay_ev *e;
	int bit;

	spin_lock(&rpl->lock);
	if (rpl->state == DETER_RPL_RUNNING &&
	    test_and_clear_bit(TCP_MTU_REDUCED_DEFERRED, &sk->sk_tsq_flags))
		__sock_put(sk);
	while (rpl->state == DETER_RPL_RUNNING &&
	       deter_rpl_is_deferred(e = deter_rpl_at(rpl, rpl->ctx))) {
		bit = deter_rpl_deferred_bit(e->sub);
		deter_rpl_ctx_next(rpl);
		if (!test_and_set_bit(bit, &sk->sk_tsq_flags))
			sock_hold(sk);
	}
	spin_unlock(&rpl->lock);
}

/* ---- hooks ---------------------------------------------------------- */

bool deter_replay_sk_lock(struct sock *sk, enum deter_site site, bool *run)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	const struct deter_replay_ev *e;
	char want[48];
	u8 who;

	*run = true;
	if (!rpl)
		return false;
	/* Not a softirq that runs on the driver's way out of a BH section. */
	if (rpl->driver == current && in_task() &&
	    site != DETER_SITE_LOCK_BACKLOG)
		return true;
	if (site == DETER_SITE_LOCK_DEFERRED) {
		deter_rpl_deferred(rpl, sk);
		return true;
	}
	who = deter_rpl_site_lock[site];
	if (site != DETER_SITE_LOCK_APP && site != DETER_SITE_LOCK_BACKLOG) {
		deter_rpl_set_cpu(rpl);
		if (this_cpu_read(deter_rpl_firing) != sk) {
			*run = false;	/* a real firing: the log decides */
			return true;
		}
	}
	spin_lock(&rpl->lock);
	e = deter_rpl_at(rpl, rpl->ctx);
	if (e && e->type == DETER_EV_LOCK && e->sub == who &&
	    site == DETER_SITE_LOCK_BACKLOG && e->a != rpl->ds->bl_checks) {
		deter_rpl_diverge(rpl, "event %u: backlog batch of check %llu taken at check %u",
				  e->seq, e->a, rpl->ds->bl_checks);
		deter_rpl_kick(rpl, 0);
	} else if (e && e->type == DETER_EV_LOCK && e->sub == who &&
		   !deter_rpl_is_deferred(e)) {
		u64 flags = e->a;

		deter_rpl_ctx_next(rpl);
		if (site == DETER_SITE_LOCK_APP || site == DETER_SITE_LOCK_BACKLOG) {
			/* flags is the backlog check count */
		} else if (flags & DETER_LOCK_F_NOT_DUE) {
			/*
			 * Not due in the original: the handler only armed
			 * the timer again, which changes nothing the replay
			 * needs.
			 */
			*run = false;
		} else {
			deter_rpl_timer_due(rpl, site);
		}
		if (site == DETER_SITE_LOCK_APP)
			rpl->ds->bl_checks = 0;
	} else {
		deter_rpl_describe(e, want, sizeof(want));
		deter_rpl_diverge(rpl, "event %u: expected %s, found %s",
				  e ? e->seq : 0, want, deter_rpl_lock_names[who]);
		deter_rpl_kick(rpl, 0);
	}
	spin_unlock(&rpl->lock);
	if (site == DETER_SITE_LOCK_APP) {
		deter_rpl_set_cpu(rpl);
		deter_rpl_task_set(rpl);
	}
	return true;
}

/*
 * The log has the application take the lock next, right where it is, so
 * a thread sleeping in sk_wait_event() must come and take it, whatever
 * woke it in the original. Whether it slept at all raced there: it
 * tests its wake-up condition between release_sock() and the sleep,
 * unlocked, and a wake-up it missed would leave the replay stuck.
 * The sleeper queued itself before it let the lock go, so a wake-up
 * here either ends its sleep or stops it from starting. Once per
 * position: @at, the turn the caller saw unowned (NULL: the cursor's,
 * at the owner's release). Not for a later turn: the handler caller
 * that saw the socket unowned may come here after the application took
 * that turn, and while it still owns the socket it sleeps on no queue,
 * so a wake-up then is lost, and would keep the one at its release from
 * coming (it slept on where a signal had woken it in the original).
 * Not under rpl->lock.
 */
static void deter_rpl_app_wake(struct deter_rpl *rpl, struct sock *sk,
			       const struct deter_replay_ev *at)
{
	const struct deter_replay_ev *e;
	struct socket_wq *wq;
	bool wake;

	spin_lock_bh(&rpl->lock);
	e = deter_rpl_at(rpl, rpl->ctx);
	wake = rpl->state == DETER_RPL_RUNNING && e && (!at || e == at) &&
	       e->type == DETER_EV_LOCK && e->sub == DETER_LOCK_APP &&
	       rpl->app_woken != rpl->ctx + 1;
	if (wake)
		rpl->app_woken = rpl->ctx + 1;
	spin_unlock_bh(&rpl->lock);
	if (!wake)
		return;
	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_all(&wq->wait);
	rcu_read_unlock();
}

static bool deter_rpl_app_turn(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *e;
	bool turn;

	spin_lock_bh(&rpl->lock);
	e = deter_rpl_at(rpl, rpl->ctx);
	turn = rpl->state != DETER_RPL_RUNNING || !e ||
	       (e->type == DETER_EV_LOCK && e->sub == DETER_LOCK_APP);
	spin_unlock_bh(&rpl->lock);
	return turn;
}

/*
 * The backlog batch the log has next in this ownership, if only owned
 * context events (backlogged segments, deferred handlers) come before
 * it. Under rpl->lock.
 */
static const struct deter_replay_ev *deter_rpl_next_batch(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *e;
	u32 i;

	for (i = rpl->ctx; (e = deter_rpl_at(rpl, i)) &&
	     i - rpl->ctx < DETER_RPL_LOOKAHEAD; i++) {
		if (!deter_rpl_is_ctx(e))
			continue;
		if (!deter_rpl_is_owned(e))
			return NULL;
		if (e->type == DETER_EV_LOCK && e->sub == DETER_LOCK_BACKLOG)
			return e;
	}
	return NULL;
}

/*
 * Does the owner take its next batch at the check it is at? The log
 * numbers each batch with the owner's check, within its ownership, that
 * found it (DETER_LOCK_BACKLOG). Under rpl->lock.
 */
static bool deter_rpl_batch_due(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *b = deter_rpl_next_batch(rpl);

	return rpl->state == DETER_RPL_RUNNING && b &&
	       b->a == rpl->ds->bl_checks;
}

static u64 deter_rpl_rx_idx(const struct deter_sock *ds,
			    const struct sk_buff *skb);
static bool deter_rpl_rx_match(const struct deter_replay_ev *e, bool syn,
			       bool ctl, u64 idx);
static void deter_rpl_reinject(struct sock *sk, struct sk_buff *skb);

/* The held segment RX event @e logs, if it is here. Under rpl->lock. */
static struct sk_buff *deter_rpl_held_find(struct deter_rpl *rpl,
					   const struct deter_replay_ev *e)
{
	struct sk_buff *skb;

	skb_queue_walk(&rpl->held, skb)
		if (deter_rpl_rx_match(e, tcp_hdr(skb)->syn,
				       !tcp_hdr(skb)->syn && !ip_hdr(skb)->id,
				       deter_rpl_rx_idx(rpl->ds, skb)))
			return skb;
	return NULL;
}

/* Has the context cursor left @ctx, or the segment it waits for come? */
static bool deter_rpl_moved(struct deter_rpl *rpl, u32 ctx)
{
	const struct deter_replay_ev *e;
	bool moved;

	spin_lock_bh(&rpl->lock);
	e = deter_rpl_at(rpl, rpl->ctx);
	moved = rpl->state != DETER_RPL_RUNNING || rpl->ctx != ctx || !e ||
		(e->type == DETER_EV_RX && deter_rpl_held_find(rpl, e));
	spin_unlock_bh(&rpl->lock);
	return moved;
}

/*
 * The owner of @sk is about to look at its backlog, at its next check.
 * If the log has a batch found at this check, backlog its segments now,
 * in the logged order, waiting for those still on their way (they were
 * sent before the owner got here in the original, so they come). The
 * handlers deferred to the owner are its own to set, in tcp_release_cb()
 * (deter_rpl_deferred()). An ICMP error that came while it owned the
 * socket is the handler caller's to hand over: before a batch due here,
 * and before the owner lets go (@release). Process context, owning @sk,
 * not holding its spinlock.
 */
static void deter_rpl_owner_check(struct deter_rpl *rpl, struct sock *sk,
				  bool release)
{
	const struct deter_replay_ev *e, *b;
	struct sk_buff *skb;
	bool due, done;
	u32 ctx;

	for (;;) {
		skb = NULL;
		spin_lock_bh(&rpl->lock);
		ctx = rpl->ctx;
		e = deter_rpl_at(rpl, ctx);
		if (rpl->state != DETER_RPL_RUNNING || !e ||
		    !deter_rpl_is_owned(e)) {
			spin_unlock_bh(&rpl->lock);
			return;
		}
		b = deter_rpl_next_batch(rpl);
		if (b && b->a < rpl->ds->bl_checks) {
			deter_rpl_diverge(rpl, "event %u: batch of check %llu, now at check %u",
					  b->seq, b->a, rpl->ds->bl_checks);
			spin_unlock_bh(&rpl->lock);
			deter_rpl_kick(rpl, 0);
			return;
		}
		due = b && b->a == rpl->ds->bl_checks;
		if (e->type == DETER_EV_RX)
			done = !due;
		else if (deter_rpl_is_icmp(e))
			done = !due && !release;
		else	/* a batch, or a handler deferred to tcp_release_cb() */
			done = true;
		if (!done && e->type == DETER_EV_RX) {
			skb = deter_rpl_held_find(rpl, e);
			if (skb)
				__skb_unlink(skb, &rpl->held);
		}
		spin_unlock_bh(&rpl->lock);
		if (unlikely(deter_debug_clock))
			pr_info("rpl %u check %u at event %u: %s\n",
				rpl->hdr.sport, rpl->ds->bl_checks, e->seq,
				done ? "done" : skb ? "backlogged" : "waiting");
		if (done)
			return;
		if (skb) {
			deter_rpl_reinject(sk, skb);	/* deter_replay_sk_rx() takes it */
			continue;
		}
		deter_rpl_kick(rpl, 0);
		if (!wait_event_timeout(rpl->wq, deter_rpl_moved(rpl, ctx),
					DETER_RPL_APP_WAIT)) {
			char want[48];

			spin_lock_bh(&rpl->lock);
			deter_rpl_describe(deter_rpl_at(rpl, rpl->ctx), want,
					   sizeof(want));
			deter_rpl_diverge(rpl, "event %u: stuck: the owner's backlog waits for %s",
					  e->seq, want);
			spin_unlock_bh(&rpl->lock);
			wake_up_all(&rpl->wq);
			return;
		}
		/*
		 * A softirq that took a segment of the batch moved the
		 * cursor in tcp_v4_rcv() before it added the segment to the
		 * backlog, both under the socket's spinlock: once we have
		 * had that lock the segment is there for the check to see.
		 */
		spin_lock_bh(&sk->sk_lock.slock);
		spin_unlock_bh(&sk->sk_lock.slock);
	}
}

void deter_replay_sk_lock_wait(struct sock *sk)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	char want[48];

	if (!rpl || rpl->driver == current)
		return;
	atomic_inc(&rpl->users);
	deter_rpl_kick(rpl, 0);
	if (!wait_event_timeout(rpl->wq, deter_rpl_app_turn(rpl),
				DETER_RPL_APP_WAIT)) {
		spin_lock_bh(&rpl->lock);
		deter_rpl_describe(deter_rpl_at(rpl, rpl->ctx), want,
				   sizeof(want));
		deter_rpl_diverge(rpl, "event %u: stuck: app wants the lock, log expects %s",
				  rpl->ctx < rpl->hdr.nevents ?
				  rpl->ev[rpl->ctx].seq : 0, want);
		spin_unlock_bh(&rpl->lock);
		wake_up_all(&rpl->wq);
	}
	if (atomic_dec_and_test(&rpl->users))
		wake_up_all(&deter_rpl_users_wq);
}

/**
 * deter_replay_sk_backlog_check() - the owner is about to look at its backlog
 * @sk: the socket, owned by the caller
 * @release: in release_sock(), else deter_sk_backlog_check()
 *
 * Return: whether @sk is replayed (recording then skips it).
 */
bool deter_replay_sk_backlog_check(struct sock *sk, bool release)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);

	if (!rpl)
		return false;
	if (rpl->driver == current)
		return true;
	atomic_inc(&rpl->users);
	spin_lock_bh(&rpl->lock);
	rpl->ds->bl_checks++;	/* softirq reads it in deter_rpl_batch_due() */
	spin_unlock_bh(&rpl->lock);
	deter_rpl_owner_check(rpl, sk, release);
	if (release) {
		/* Its next turn may come right after this one. */
		deter_rpl_app_wake(rpl, sk, NULL);
		/* The handler caller may be waiting for the owner to let go. */
		deter_rpl_kick(rpl, 0);
	}
	if (atomic_dec_and_test(&rpl->users))
		wake_up_all(&deter_rpl_users_wq);
	return true;
}

/* The index TCP's IP ID series gives @skb, without moving the series. */
static u64 deter_rpl_rx_idx(const struct deter_sock *ds,
			    const struct sk_buff *skb)
{
	u16 id = ntohs(ip_hdr(skb)->id);

	return ds->rx_primed ? deter_ipid_extend(ds->rx_ref, id) : id;
}

/* An arrival of other segments than the original's (GSO, GRO). */
#define DETER_RPL_SEGS_FMT "event %u: ipid %llu: %u segment(s), %llu logged: %s"
static const char deter_rpl_regrouped[] =
	"the sender's packets split or merged otherwise than in the original (GSO, GRO)";

/*
 * Does segment @idx, which RX @e logs, hold other segments than the
 * original's arrival did? Then its network or receiver split or merged
 * the sender's packets otherwise, and TCP would see other data, lengths
 * and truesizes from here on: the replay diverges, at the arrival, due
 * or not. A SYN's RX has no count, the time-wait answer's a TS value.
 * Under rpl->lock.
 */
static bool deter_rpl_segs_differ(struct deter_rpl *rpl,
				  const struct deter_replay_ev *e,
				  const struct sk_buff *skb, u64 idx)
{
	if (e->b & (DETER_RX_SYN | DETER_RX_CTL) ||
	    deter_conn_rx_segs(skb) == max_t(u64, e->c, 1))
		return false;
	deter_rpl_diverge(rpl, DETER_RPL_SEGS_FMT, e->seq, idx & 0xffff,
			  deter_conn_rx_segs(skb), max_t(u64, e->c, 1),
			  deter_rpl_regrouped);
	deter_rpl_kick(rpl, 0);
	return true;
}

/*
 * Is segment @idx (@syn: a SYN; @ctl: IP ID 0, which the peer's control
 * socket sends) the one RX @e logs? A segment the peer's time-wait
 * socket sent (RX CTL) is not in the IP ID series: any with IP ID 0 is.
 */
static bool deter_rpl_rx_match(const struct deter_replay_ev *e, bool syn,
			       bool ctl, u64 idx)
{
	if (e->type != DETER_EV_RX || !!(e->b & DETER_RX_SYN) != syn)
		return false;
	if (e->b & DETER_RX_CTL)
		return ctl;
	return syn || e->a == idx;
}

bool deter_replay_sk_rx(struct sock *sk, struct sk_buff *skb, bool *taken)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	const struct deter_replay_ev *e;
	struct deter_sock *ds;
	bool syn, ctl, owned;
	u64 idx;
	u32 i;

	*taken = false;
	if (!rpl || skb->protocol != htons(ETH_P_IP))
		return !!rpl;
	/*
	 * In the original the segment came from another host, so its data
	 * was its own; here veth hands over a clone of the sender's skb.
	 * Unshare it as a forwarding hop's skb_cow() does, so that its
	 * truesize, tailroom and whether TCP may steal its head (receive
	 * buffer charge, coalescing, scaling_ratio) come out as they did.
	 */
	if (skb_cloned(skb) && pskb_expand_head(skb, 0, 0, GFP_ATOMIC)) {
		spin_lock(&rpl->lock);
		deter_rpl_diverge(rpl, "no memory to unshare a received segment");
		deter_rpl_kick(rpl, 0);
		spin_unlock(&rpl->lock);
		return true;
	}
	deter_rpl_set_cpu(rpl);
	ds = rpl->ds;
	syn = ((const struct tcphdr *)skb->data)->syn;
	ctl = !syn && !ip_hdr(skb)->id;
	idx = deter_rpl_rx_idx(ds, skb);
	owned = sock_owned_by_user(sk);

	spin_lock(&rpl->lock);
	e = deter_rpl_at(rpl, rpl->ctx);
	if (e && deter_rpl_rx_match(e, syn, ctl, idx) &&
	    !!(e->b & DETER_RX_OWNED) == owned &&
	    (!owned || deter_rpl_batch_due(rpl))) {
		if (deter_rpl_segs_differ(rpl, e, skb, idx)) {
			spin_unlock(&rpl->lock);
			return true;
		}
		if (!syn) {
			if (!(e->b & DETER_RX_CTL)) {
				ds->rx_ref = idx;
				ds->rx_primed = true;
			}
			if (!((const struct tcphdr *)skb->data)->window)
				ds->rx_zero_wnd++;
		}
		deter_rpl_ctx_next(rpl);
		spin_unlock(&rpl->lock);
		return true;
	}
	/* Due later (or due now, but the owner is not the one logged). */
	for (i = rpl->ctx; i < rpl->hdr.nevents &&
	     i - rpl->ctx < DETER_RPL_LOOKAHEAD; i++)
		if (deter_rpl_rx_match(&rpl->ev[i], syn, ctl, idx))
			break;
	/*
	 * A segment past every one the log has came, in the original, after
	 * the socket's log ended: to the time-wait socket that took over
	 * (a FIN answering ours), or to none. It goes there when the replay
	 * ends (deter_rpl_work()).
	 */
	if (i < rpl->hdr.nevents && i - rpl->ctx < DETER_RPL_LOOKAHEAD &&
	    deter_rpl_segs_differ(rpl, &rpl->ev[i], skb, idx)) {
		spin_unlock(&rpl->lock);
		return true;
	}
	if (((i < rpl->hdr.nevents && i - rpl->ctx < DETER_RPL_LOOKAHEAD) ||
	     (!syn && ds->rx_primed && idx > rpl->rx_last)) &&
	    skb_queue_len(&rpl->held) < DETER_RPL_MAX_HELD) {
		/* Re-entered into tcp_v4_rcv() later: restore its IPCB. */
		memmove(IPCB(skb), &TCP_SKB_CB(skb)->header.h4,
			sizeof(struct inet_skb_parm));
		__skb_queue_tail(&rpl->held, skb);
		*taken = true;
		deter_rpl_kick(rpl, i == rpl->ctx ? 1 : 0);
	} else {
		char want[48];

		deter_rpl_describe(e, want, sizeof(want));
		deter_rpl_diverge(rpl, "event %u: expected %s, found %ssegment ipid %llu",
				  e ? e->seq : 0, want, syn ? "SYN " : "",
				  idx & 0xffff);
		deter_rpl_kick(rpl, 0);
	}
	spin_unlock(&rpl->lock);
	return true;
}

/* A splice read's pipe room and socket mode (DETER_SPLICE_RD_*) in words. */
static void deter_rpl_splice_read(u32 flags, char *buf, size_t len)
{
	snprintf(buf, len, "room for %u buffers, %s", DETER_SPLICE_RD_ROOM(flags),
		 flags & DETER_SPLICE_RD_NONBLOCK ? "nonblocking" : "blocking");
}

/**
 * deter_replay_sk_call() - a replayed socket's owner entered a call
 * @sk: the socket, owned by the caller
 * @call: the call
 * @arg: as the hook has it (bytes asked ...)
 * @flags: as the hook has it; a splice read's with its pipe's room
 *	(deter_conn_splice_read_flags())
 *
 * Return: false if @sk is not replayed (record it).
 */
bool deter_replay_sk_call(struct sock *sk, enum deter_call call, u64 arg,
			  u32 flags)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	const struct deter_replay_ev *e;
	u32 i;

	if (!rpl)
		return false;
	/* Unlocked; the script has none of them (replay_script_build()). */
	if (call == DETER_CALL_RECV_ERRQUEUE)
		return true;
	spin_lock_bh(&rpl->lock);
	for (i = rpl->call; (e = deter_rpl_at(rpl, i)); i++)
		if (e->type == DETER_EV_CALL)
			break;
	if (!e) {
		deter_rpl_diverge(rpl, "a socket call (%u, %llu bytes) beyond the end of the log",
				  call, arg);
	} else if (e->sub != call || e->a != arg) {
		deter_rpl_diverge(rpl, "event %u: expected call %u (%llu B), found %u (%llu B)",
				  e->seq, e->sub, e->a, call, arg);
	} else if (call == DETER_CALL_SPLICE_READ &&
		   ((e->b >> 32) ^ flags) & ~DETER_SPLICE_RD_FLAGS) {
		char w[48], f[48];

		/* Format 14 on: the generator gives its pipe that room. */
		deter_rpl_splice_read(e->b >> 32, w, sizeof(w));
		deter_rpl_splice_read(flags, f, sizeof(f));
		deter_rpl_diverge(rpl, "event %u: a splice read expected %s, found %s",
				  e->seq, w, f);
	}
	rpl->call = i + 1;
	spin_unlock_bh(&rpl->lock);
	return true;
}

/* A spliced send's pages (DETER_SPLICE_*) in words. */
static void deter_rpl_pages(u64 pages, char *buf, size_t len)
{
	if (!(pages & DETER_SPLICE_KNOWN))
		snprintf(buf, len, "none (no spliced send)");
	else if (pages & DETER_SPLICE_OTHER)
		snprintf(buf, len, "not a file's");
	else
		snprintf(buf, len, "from offset %llu%s", pages & DETER_SPLICE_OFF,
			 pages & DETER_SPLICE_CONT ? " on from the last" : "");
}

/**
 * deter_replay_sk_call_done() - a replayed socket call returned
 * @sk: the socket, owned by the caller
 * @call: the call
 * @ret: what it returned
 * @pages: a send's pages, as deter_conn_send_pages_done() found them
 *
 * Return: false if @sk is not replayed (record it).
 */
bool deter_replay_sk_call_done(struct sock *sk, enum deter_call call,
			       s64 ret, u64 pages)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	const struct deter_replay_ev *e, *next;
	u32 i;

	if (!rpl)
		return false;
	if (call == DETER_CALL_RECV_ERRQUEUE)
		return true;
	spin_lock_bh(&rpl->lock);
	for (i = rpl->call; (e = deter_rpl_at(rpl, i)); i++)
		if (e->type == DETER_EV_CALL_DONE)
			break;
	if (!e) {
		deter_rpl_diverge(rpl, "a socket call returned beyond the end of the log");
	} else if ((s64)e->a != ret) {
		deter_rpl_diverge(rpl, "event %u: call %u expected to return %lld, got %lld",
				  e->seq, e->sub, (s64)e->a, ret);
	} else if (e->b & DETER_SPLICE_KNOWN &&
		   (e->b & ~DETER_SEND_ERRQ) != (pages & ~DETER_SEND_ERRQ)) {
		char want[40], found[40];

		/* Logs of format 12 on; where TCP merges and splits them. */
		deter_rpl_pages(e->b, want, sizeof(want));
		deter_rpl_pages(pages, found, sizeof(found));
		deter_rpl_diverge(rpl, "event %u: a spliced send's pages expected %s, found %s",
				  e->seq, want, found);
	} else if ((e->b ^ pages) & DETER_SEND_ERRQ) {
		/* Format 13 on; the replay makes neither. */
		deter_rpl_diverge(rpl, "event %u: a send's error queue bits %#llx, found %#llx",
				  e->seq, e->b & DETER_SEND_ERRQ,
				  pages & DETER_SEND_ERRQ);
	} else {
		next = deter_rpl_at(rpl, i + 1);
		if (next && next->type == DETER_EV_STATE && !next->sub &&
		    next->seq == e->seq + 1)
			deter_rpl_check(rpl, next);
	}
	rpl->call = i + 1;
	spin_unlock_bh(&rpl->lock);
	return true;
}

static u64 deter_rpl_clock(struct deter_rpl *rpl, u64 val)
{
	const struct deter_replay_ev *e;

	spin_lock_bh(&rpl->lock);
	e = deter_rpl_next_value(rpl, &rpl->clk, DETER_V_CLOCK);
	if (!e) {
		deter_rpl_diverge(rpl, "a clock read beyond the end of the log");
	} else if (e->seq < rpl->ctx_seq) {
		deter_rpl_diverge(rpl, "event %u: clock read logged before event %u (ran)",
				  e->seq, rpl->ctx_seq);
	} else {
		deter_rpl_jiffies_to(rpl, rpl->clk - 1);
		rpl->clock += e->a;
		val = rpl->clock;
	}
	if (unlikely(deter_debug_clock))
		deter_debug_clock_read(rpl->hdr.flags & DETER_CONN_ACTIVE ?
				       "rpl-a" : "rpl-b", rpl->sk, e ? e->seq : 0,
				       rpl->jiffies);
	spin_unlock_bh(&rpl->lock);
	return val;
}

/* A random number the original drew: the next one the log has. */
static u64 deter_rpl_random(struct deter_rpl *rpl, u64 val)
{
	const struct deter_replay_ev *e;

	spin_lock_bh(&rpl->lock);
	e = deter_rpl_next_value(rpl, &rpl->rnd, DETER_V_RANDOM);
	if (e)
		val = e->a;
	else
		deter_rpl_diverge(rpl, "a random number drawn beyond the end of the log");
	spin_unlock_bh(&rpl->lock);
	return val;
}

static const char *const deter_rpl_rare_names[DETER_V_MAX] = {
	[DETER_V_TSQ_FULL] = "TSQ full",
	[DETER_V_AUTOCORK] = "autocork",
	[DETER_V_HOST_QUEUED] = "segment still queued",
	[DETER_V_BACKLOG_LEN] = "backlog not empty",
	[DETER_V_PAGE_FRAG] = "page fragment restart",
	[DETER_V_HOST_BUSY] = "host queue change",
	[DETER_V_MEM] = "memory decision change",
	[DETER_V_HOST] = "unusual host answer",
};

/*
 * A timing-dependent read whose usual outcome the log leaves out (TSQ
 * full, autocork, a segment's previous copy still queued, a non-empty
 * backlog, a page fragment starting over): as in the original, it comes
 * out unusual where the log says, after the run (*@run) of usual ones.
 * Return whether it does here; the logged second field goes to *@b.
 */
static bool deter_rpl_rare(struct deter_rpl *rpl, struct deter_rpl_rare *r,
			   u16 what, u32 *run, u64 *b)
{
	const struct deter_replay_ev *e;
	bool yes = false;

	spin_lock_bh(&rpl->lock);
	e = r->ev;
	if (e && e->a == *run) {
		if (b)
			*b = e->b;
		r->ev = deter_rpl_next_value(rpl, &r->cursor, what);
		*run = 0;
		yes = true;
	} else {
		if (e && e->a < *run)
			deter_rpl_diverge(rpl, "event %u: %s after %llu, not %u",
					  e->seq, deter_rpl_rare_names[what], e->a,
					  *run);
		(*run)++;
	}
	spin_unlock_bh(&rpl->lock);
	return yes;
}

static const char *const deter_rpl_host_names[DETER_HOST_MAX] = {
	[DETER_HOST_XMIT] = "output refused",
	[DETER_HOST_TIMEOUT] = "wait timed out",
	[DETER_HOST_NOSPACE] = "send buffer full mark",
	[DETER_HOST_SIGNAL] = "signal",
	[DETER_HOST_CACHED_CWND_CLAMP] = "cached cwnd clamp",
	[DETER_HOST_CACHED_SSTHRESH] = "cached ssthresh",
	[DETER_HOST_CACHED_REORDERING] = "cached reordering",
	[DETER_HOST_CACHED_RTT] = "cached rtt",
};

static const char *const deter_rpl_mem_names[DETER_MEM_MAX] = {
	[DETER_MEM_PRESSURE] = "memory pressure",
	[DETER_MEM_ABOVE_LOW] = "memory above tcp_mem[0]",
	[DETER_MEM_SUPPRESS] = "allocation suppressed",
	[DETER_MEM_OOM] = "out of memory or orphans",
};

/*
 * A rare value of several kinds, its kind in its second field (b >>
 * @shift, named by @names[@nkinds]): where the log has one, it must be
 * of @kind. Return whether it comes here, with its second field in *@b.
 */
static bool deter_rpl_rare_kind(struct deter_rpl *rpl, struct deter_rpl_rare *r,
				u16 what, u32 *run, unsigned int shift,
				const char *const *names, unsigned int nkinds,
				unsigned int kind, u64 *b)
{
	if (!deter_rpl_rare(rpl, r, what, run, b))
		return false;
	if (*b >> shift == kind)
		return true;
	spin_lock_bh(&rpl->lock);
	deter_rpl_diverge(rpl, "%s logged where the replay has %s",
			  names[(*b >> shift) % nkinds], names[kind]);
	spin_unlock_bh(&rpl->lock);
	return false;
}

/*
 * The host's unusual answer to one of the socket's requests: where the log
 * has one, it must be of @kind; its answer goes to *@answer.
 */
static bool deter_rpl_host(struct deter_rpl *rpl, unsigned int kind, u64 *answer)
{
	u64 b = 0;

	if (!deter_rpl_rare_kind(rpl, &rpl->host, DETER_V_HOST, &rpl->ds->host_run,
				 32, deter_rpl_host_names, DETER_HOST_MAX, kind, &b))
		return false;
	if (answer)
		*answer = (u32)b;
	return true;
}

/*
 * A memory accounting decision shared with the host's other sockets: it
 * comes out as it did in the original, changing where the log says,
 * whatever the replay host's own load.
 */
static bool deter_rpl_mem(struct deter_rpl *rpl, unsigned int kind)
{
	struct deter_sock *ds = rpl->ds;
	u64 b = 0;

	if (deter_rpl_rare_kind(rpl, &rpl->mem, DETER_V_MEM, &ds->mem_run, 1,
				deter_rpl_mem_names, DETER_MEM_MAX, kind, &b)) {
		ds->mem_state &= ~BIT(kind);
		ds->mem_state |= (b & 1) << kind;
	}
	return ds->mem_state & BIT(kind);
}

/*
 * A signal check in a socket call (DETER_VAL_SIGNAL): the log's next
 * signal ends the call here if it is the call's (after its CALL) and the
 * owner took every lock turn before it (the waits the call made first).
 * The checks that found none are not logged, since how many a recv()
 * makes depends on whether a segment was in the backlog yet; a call
 * that returned before it looked again returned what the log says, or
 * the replay diverged there.
 */
static bool deter_rpl_signal(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *e;
	bool yes = false;
	u32 i;

	spin_lock_bh(&rpl->lock);
	for (e = deter_rpl_at(rpl, rpl->sig); e; e = deter_rpl_at(rpl, ++rpl->sig))
		if (rpl->sig >= rpl->call && deter_rpl_is_signal(e))
			break;
	if (e) {
		for (i = rpl->ctx; i < rpl->sig; i++)
			if (rpl->ev[i].type == DETER_EV_LOCK)
				break;
		yes = i >= rpl->sig;
		if (yes)
			rpl->sig++;
	}
	spin_unlock_bh(&rpl->lock);
	return yes;
}

/**
 * deter_replay_sk_icmp() - an ICMP error reached a replayed socket
 * @sk: the socket, its spinlock held (it may be owned)
 *
 * The handler caller hands the socket the errors its log has, at their
 * turns (deter_rpl_inject_icmp()); any other diverges the replay.
 *
 * Return: whether @sk is replayed (recording then skips it).
 */
bool deter_replay_sk_icmp(struct sock *sk)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	const struct deter_replay_ev *e;

	if (!rpl)
		return false;
	spin_lock_bh(&rpl->lock);
	e = deter_rpl_at(rpl, rpl->ctx);
	if (this_cpu_read(deter_rpl_icmp) == sk && e && deter_rpl_is_icmp(e))
		deter_rpl_ctx_next(rpl);
	else
		deter_rpl_diverge(rpl, "an ICMP error the original did not get reached the socket");
	spin_unlock_bh(&rpl->lock);
	return true;
}

/**
 * deter_replay_page_frag_refill() - tcp_sendmsg_locked() refills its page
 *	fragment
 * @sk: the socket, owned by the caller
 * @pfrag: the fragment
 * @ok: set to whether the fragment has room
 *
 * The fragment starts over where it did in the original, at the logged
 * offset of a page as large, and keeps going where it kept going, so
 * every skb's data falls into as many fragments as it did. The payload
 * is synthetic: moving back within a page still in use only rewrites it.
 *
 * Return: whether @sk is replayed (recording then skips it).
 */
bool deter_replay_page_frag_refill(struct sock *sk, struct page_frag *pfrag,
				   bool *ok)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	struct page *page = pfrag->page, *p;
	unsigned int off = pfrag->offset, size = pfrag->size, order;
	bool restart;
	u64 at = 0;

	if (!rpl)
		return false;
	*ok = sk_page_frag_refill(sk, pfrag);
	if (!*ok)
		return true;
	restart = deter_rpl_rare(rpl, &rpl->pf, DETER_V_PAGE_FRAG,
				 &rpl->ds->pf_same, &at);
	order = (at >> 16) & 15;
	if (restart) {
		if (pfrag->size < (PAGE_SIZE << order)) {
			p = alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_NOWARN,
					order);
			if (!p) {
				spin_lock_bh(&rpl->lock);
				deter_rpl_diverge(rpl, "no memory for an order-%u page fragment",
						  order);
				spin_unlock_bh(&rpl->lock);
				return true;
			}
			put_page(pfrag->page);
			pfrag->page = p;
		}
		pfrag->size = PAGE_SIZE << order;
		pfrag->offset = at & 0xffff;
	} else if (page && pfrag->page == page) {
		/* It went back to the start of a page the original still shared. */
		pfrag->offset = off;
		pfrag->size = size;
	} else if (page) {
		spin_lock_bh(&rpl->lock);
		deter_rpl_diverge(rpl, "page fragment: a new page where the original kept going");
		spin_unlock_bh(&rpl->lock);
	}
	return true;
}

bool deter_replay_value(const struct sock *sk, const struct sk_buff *skb,
			enum deter_value what, u64 *val)
{
	const struct deter_replay_ev *e;
	struct deter_rpl *rpl = NULL;
	const struct tcphdr *th;
	const struct iphdr *iph;

	if (!READ_ONCE(deter_rpl_armed))
		return false;
	/*
	 * A request socket and a time-wait socket have only the common
	 * fields: no sk_protocol.
	 */
	if (what != DETER_VAL_SYNACK_CLOCK && what != DETER_VAL_TW_TSVAL &&
	    sk->sk_protocol != IPPROTO_TCP)
		return false;

	switch (what) {
	case DETER_VAL_ISN:
	case DETER_VAL_TS_OFF:
		/* Under RCU (hook context): the list may change. */
		if (skb) {	/* passive: the listener and the SYN */
			iph = ip_hdr(skb);
			th = tcp_hdr(skb);
			rpl = deter_rpl_find(ntohl(iph->daddr), ntohs(th->dest),
					     ntohl(iph->saddr), ntohs(th->source));
		} else {
			rpl = deter_rpl_find_sk(sk);
		}
		if (rpl && !READ_ONCE(rpl->armed))
			rpl = NULL;	/* its session has not started */
		if (!skb && rpl && READ_ONCE(rpl->state) == DETER_RPL_LOADED) {
			spin_lock_bh(&rpl->lock);
			deter_rpl_bind(rpl, (struct sock *)sk);
			spin_unlock_bh(&rpl->lock);
			deter_rpl_task_set(rpl);
		}
		if (rpl)
			*val = what == DETER_VAL_ISN ? rpl->hdr.iss :
						       rpl->hdr.tsoffset;
		return !!rpl;
	case DETER_VAL_TW_TSVAL:
		/*
		 * @sk is the time-wait socket of a replayed end, whose log
		 * ended at tcp_time_wait(); in softirq. What it sent is in
		 * the peer's log, in order: its RX CTL events.
		 */
		rpl = deter_rpl_find(ntohl(sk->sk_daddr), ntohs(sk->sk_dport),
				     ntohl(sk->sk_rcv_saddr), sk->sk_num);
		if (!rpl || !READ_ONCE(rpl->armed) || !deter_rpl_find_sk(sk))
			return false;
		spin_lock_bh(&rpl->lock);
		for (; (e = deter_rpl_at(rpl, rpl->ptw)); rpl->ptw++)
			if (e->type == DETER_EV_RX && (e->b & DETER_RX_CTL) &&
			    e->c)
				break;
		if (e) {
			*val = e->c - 1;
			rpl->ptw++;
		}
		spin_unlock_bh(&rpl->lock);
		return !!e;
	case DETER_VAL_SYNACK_CLOCK:
		/* @sk is the request socket; it may be in softirq. */
		list_for_each_entry_rcu(rpl, &deter_rpl_list, node) {
			if (rpl->hdr.sport != sk->sk_num ||
			    rpl->hdr.dport != ntohs(sk->sk_dport) ||
			    rpl->hdr.saddr != ntohl(sk->sk_rcv_saddr) ||
			    rpl->hdr.daddr != ntohl(sk->sk_daddr) ||
			    !READ_ONCE(rpl->armed))
				continue;
			spin_lock_bh(&rpl->lock);
			e = deter_rpl_next_value(rpl, &rpl->synack,
						 DETER_V_SYNACK_CLOCK);
			if (e)
				*val = e->a;
			spin_unlock_bh(&rpl->lock);
			return !!e;
		}
		return false;
	default:
		break;
	}

	/* The rest are the bound socket's own. */
	rpl = deter_rpl_get(sk);
	if (!rpl)
		return false;
	switch (what) {
	case DETER_VAL_IP_ID:
		spin_lock_bh(&rpl->lock);
		if (!rpl->ipid_given) {
			u32 i = 0;

			e = deter_rpl_next_value(rpl, &i, DETER_V_IP_ID);
			if (e)
				*val = e->a;
			else if (rpl->hdr.flags & DETER_CONN_ACTIVE)
				*val = (u16)(rpl->hdr.ipid - 1);	/* the SYN's */
			else
				*val = rpl->hdr.ipid;
			rpl->ipid_given = true;
		}
		spin_unlock_bh(&rpl->lock);
		return true;
	case DETER_VAL_CLOCK:
		*val = deter_rpl_clock(rpl, *val);
		return true;
	case DETER_VAL_TSQ_FULL:
		*val = deter_rpl_rare(rpl, &rpl->tsq, DETER_V_TSQ_FULL,
				      &rpl->ds->tsq_room, NULL);
		return true;
	case DETER_VAL_AUTOCORK:
		*val = deter_rpl_rare(rpl, &rpl->autocork, DETER_V_AUTOCORK,
				      &rpl->ds->autocork_idle, NULL);
		return true;
	case DETER_VAL_HOST_QUEUED:
		*val = deter_rpl_rare(rpl, &rpl->hostq, DETER_V_HOST_QUEUED,
				      &rpl->ds->hostq_gone, NULL);
		return true;
	case DETER_VAL_MEM_PRESSURE:
	case DETER_VAL_MEM_ABOVE_LOW:
	case DETER_VAL_MEM_SUPPRESS:
	case DETER_VAL_OOM:
		*val = deter_rpl_mem(rpl, deter_value_mem_kind(what));
		return true;
	case DETER_VAL_RANDOM:
		*val = deter_rpl_random(rpl, *val);
		return true;
	case DETER_VAL_XMIT: {
		u32 here = *val;

		/*
		 * The segment went out here whatever the original's host
		 * did with it; the receiver's log has the ones that never
		 * arrived, and the network replays their loss. The replay
		 * host's own refusal is not the original's: say so.
		 */
		*val = 0;
		if (deter_rpl_host(rpl, DETER_HOST_XMIT, val))
			return true;
		if (here) {
			spin_lock_bh(&rpl->lock);
			deter_rpl_diverge(rpl, "the replay host's output path returned %d",
					  (int)here);
			spin_unlock_bh(&rpl->lock);
		}
		return true;
	}
	case DETER_VAL_WAIT_LEFT:
		/*
		 * The replay sets no timeouts: a wait ends when the log has
		 * this call take the lock again, and times out where the
		 * original's did.
		 */
		if (deter_rpl_host(rpl, DETER_HOST_TIMEOUT, NULL))
			*val = 0;
		else if (!*val)
			*val = MAX_SCHEDULE_TIMEOUT;
		return true;
	case DETER_VAL_NOSPACE: {
		/*
		 * The replay's application never polls: the mark is the
		 * original's, which its tcp_poll() may have set.
		 */
		u64 now = 0;

		if (deter_rpl_host(rpl, DETER_HOST_NOSPACE, &now))
			rpl->ds->nospace = now & 1;
		*val = rpl->ds->nospace;
		return true;
	}
	case DETER_VAL_SIGNAL:
		/* The replay's application gets none: the original's. */
		*val = deter_rpl_signal(rpl);
		return true;
	case DETER_VAL_CACHED_CWND_CLAMP:
	case DETER_VAL_CACHED_SSTHRESH:
	case DETER_VAL_CACHED_REORDERING:
	case DETER_VAL_CACHED_RTT: {
		/* The original's, whatever the replay host has cached. */
		u64 cached;

		if (deter_rpl_host(rpl, deter_value_cached_kind(what), &cached))
			*val = cached;
		else
			*val = deter_value_cached_none(sk, what);
		return true;
	}
	case DETER_VAL_HOST_IDLE:
		if (deter_rpl_rare(rpl, &rpl->busy, DETER_V_HOST_BUSY,
				   &rpl->ds->busy_run, NULL))
			rpl->ds->busy = !rpl->ds->busy;
		*val = !rpl->ds->busy;
		return true;
	case DETER_VAL_BACKLOG_LEN:
		/* Only the owner's reads are logged; the rest find it empty. */
		if (!sock_owned_by_user_nocheck(sk))
			return false;
		*val = 0;
		deter_rpl_rare(rpl, &rpl->bl, DETER_V_BACKLOG_LEN,
			       &rpl->ds->bl_empty, val);
		return true;
	default:
		return false;
	}
}

bool deter_replay_jiffies(unsigned long *now)
{
	struct deter_rpl *rpl;

	if (!READ_ONCE(deter_rpl_armed))
		return false;
	/*
	 * A process answers for the socket it replays, also with BH off
	 * (tcp_release_cb() in release_sock(): deferred handlers test
	 * deadlines there, and the other end's softirq may have used this
	 * CPU meanwhile); softirq, and the handler caller, per CPU.
	 */
	rpl = in_task() ? deter_rpl_task_get() : NULL;
	if (!rpl)
		rpl = this_cpu_read(deter_rpl_cpu);
	if (!rpl || READ_ONCE(rpl->state) != DETER_RPL_RUNNING || !rpl->sk)
		return false;
	*now = READ_ONCE(rpl->jiffies);
	return true;
}

/*
 * The passive end's first arrival, @skb, which its log has no RX event
 * for (VALUE CHILD_IPID): as many segments as the original's, checked
 * like every later arrival in deter_replay_sk_rx(). Under rpl->lock.
 */
static bool deter_rpl_child_check(struct deter_rpl *rpl,
				  const struct sk_buff *skb)
{
	const struct deter_replay_ev *e;
	u32 i, segs = deter_conn_rx_segs(skb);

	if (skb->protocol != htons(ETH_P_IP))
		return false;
	for (i = 0; i < rpl->hdr.nevents && i < DETER_RPL_LOOKAHEAD; i++) {
		e = &rpl->ev[i];
		if (e->type != DETER_EV_VALUE || e->sub != DETER_V_CHILD_IPID)
			continue;
		if (segs == max_t(u64, e->b, 1))
			return false;
		deter_rpl_diverge(rpl, DETER_RPL_SEGS_FMT, e->seq,
				  (u64)ntohs(ip_hdr(skb)->id), segs,
				  max_t(u64, e->b, 1), deter_rpl_regrouped);
		return true;
	}
	return false;
}

/**
 * deter_replay_clone() - the handshake created a passive end
 * @ds: its deter state
 * @newsk: the new socket
 * @skb: the segment that created it, its first arrival (may be NULL)
 *
 * Binds it to its script, checks its first arrival's segments, and gives
 * the fields tcp_create_openreq_child() stamped with jiffies the logged
 * value.
 */
void deter_replay_clone(struct deter_sock *ds, struct sock *newsk,
			const struct sk_buff *skb)
{
	struct inet_connection_sock *icsk = inet_csk(newsk);
	struct tcp_sock *tp = tcp_sk(newsk);
	struct deter_rpl *rpl;
	bool diverged;
	u32 now;

	if (!READ_ONCE(deter_rpl_armed))
		return;
	/* Addresses are still the listener's: match by ports. */
	list_for_each_entry_rcu(rpl, &deter_rpl_list, node) {
		if (rpl->hdr.sport != newsk->sk_num ||
		    rpl->hdr.dport != ntohs(newsk->sk_dport) ||
		    !READ_ONCE(rpl->armed) || rpl->state != DETER_RPL_LOADED)
			continue;
		spin_lock_bh(&rpl->lock);
		deter_rpl_bind(rpl, newsk);
		diverged = skb && rpl->sk == newsk &&
			   deter_rpl_child_check(rpl, skb);
		now = rpl->jiffies;
		spin_unlock_bh(&rpl->lock);
		if (diverged)
			deter_rpl_kick(rpl, 0);
		tp->lsndtime = now;
		tp->rcv_tstamp = now;
		tp->snd_cwnd_stamp = now;
		icsk->icsk_ack.lrcvtime = now;
		return;
	}
}

/**
 * deter_replay_established() - a replayed socket completed its handshake
 * @sk: the socket
 *
 * The handshake must have agreed on what the original's did: a replay
 * host that sends another window scale or MSS (net.core.rmem_max sets the
 * scale TCP offers; routes and interfaces the MSS) would otherwise replay
 * every later window differently, unnoticed until a checkpoint happens to
 * show it. The ISNs and the TS offset come from the log; compared too.
 */
void deter_replay_established(const struct sock *sk)
{
	const u32 neg = DETER_CONN_TS | DETER_CONN_SACK | DETER_CONN_ECN |
			DETER_CONN_WSCALE;
	struct deter_rpl *rpl = deter_rpl_get(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct deter_replay_hdr *h;
	char logged[24], found[24];
	const char *what = NULL;
	u32 ws, opts;

	if (!rpl)
		return;
	h = &rpl->hdr;
	ws = tp->rx_opt.snd_wscale << 4 | tp->rx_opt.rcv_wscale;
	opts = deter_conn_negotiated(tp);
	if (opts != (h->flags & neg)) {
		what = "options (DETER_CONN_* bits)";
		snprintf(logged, sizeof(logged), "%#x", h->flags & neg);
		snprintf(found, sizeof(found), "%#x", opts);
	} else if (ws != h->wscale) {
		what = "window scales (the peer's/this end's)";
		snprintf(logged, sizeof(logged), "%u/%u", h->wscale >> 4, h->wscale & 0xf);
		snprintf(found, sizeof(found), "%u/%u", ws >> 4, ws & 0xf);
	} else if (tp->mss_cache != h->mss) {
		what = "MSS";
		snprintf(logged, sizeof(logged), "%u", h->mss);
		snprintf(found, sizeof(found), "%u", tp->mss_cache);
	} else if (tp->snd_nxt - 1 != h->iss || tp->rcv_nxt - 1 != h->irs) {
		what = "ISNs (this end's/the peer's)";
		snprintf(logged, sizeof(logged), "%u/%u", h->iss, h->irs);
		snprintf(found, sizeof(found), "%u/%u", tp->snd_nxt - 1, tp->rcv_nxt - 1);
	} else if (tp->tsoffset != h->tsoffset) {
		what = "TS offset";
		snprintf(logged, sizeof(logged), "%u", h->tsoffset);
		snprintf(found, sizeof(found), "%u", tp->tsoffset);
	}
	if (!what)
		return;
	spin_lock_bh(&rpl->lock);
	deter_rpl_diverge(rpl, "handshake: %s %s logged, %s in the replay",
			  what, logged, found);
	spin_unlock_bh(&rpl->lock);
	deter_rpl_kick(rpl, 0);
}

void deter_replay_close(struct deter_sock *ds, struct sock *sk)
{
	struct deter_rpl *rpl = READ_ONCE(ds->rpl);
	const struct deter_replay_ev *e;
	u32 i;

	if (!rpl)
		return;
	spin_lock_bh(&rpl->lock);
	if (rpl->state == DETER_RPL_RUNNING) {
		for (i = rpl->ctx; (e = deter_rpl_at(rpl, i)); i++)
			if (e->type == DETER_EV_STATE && e->sub)
				deter_rpl_check(rpl, e);
	}
	if (rpl->state == DETER_RPL_RUNNING) {
		e = deter_rpl_at(rpl, rpl->ctx);
		if (e)
			deter_rpl_diverge(rpl, "event %u: the socket closed with %u events left",
					  e->seq, rpl->hdr.nevents - rpl->ctx);
		else
			WRITE_ONCE(rpl->state, DETER_RPL_DONE);
	}
	WRITE_ONCE(ds->rpl, NULL);
	rpl->ds = NULL;
	spin_unlock_bh(&rpl->lock);
	deter_rpl_kick(rpl, 0);
}

/* ---- the handler caller ----------------------------------------------- */

static void deter_rpl_fire_timer(struct deter_rpl *rpl, struct sock *sk,
				 u8 who)
{
	struct inet_connection_sock *icsk = inet_csk(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct timer_list *t = NULL;

	local_bh_disable();
	this_cpu_write(deter_rpl_firing, sk);
	deter_rpl_set_cpu(rpl);
	/* deter_replay_sk_lock() makes the handler find the timer due. */
	switch (who) {
	case DETER_LOCK_WRITE_TIMER:
		t = &icsk->icsk_retransmit_timer;
		break;
	case DETER_LOCK_DELACK_TIMER:
		t = &icsk->icsk_delack_timer;
		break;
	case DETER_LOCK_KEEPALIVE_TIMER:
		t = &icsk->icsk_keepalive_timer;
		break;
	case DETER_LOCK_COMP_ACK_TIMER:
		/* The handler drops the reference an armed timer holds. */
		if (hrtimer_try_to_cancel(&tp->compressed_ack_timer) != 1)
			sock_hold(sk);
		tp->compressed_ack_timer.function(&tp->compressed_ack_timer);
		break;
	}
	if (t) {
		if (!timer_delete(t))
			sock_hold(sk);
		t->function(t);
	}
	this_cpu_write(deter_rpl_firing, NULL);
	local_bh_enable();
}

/* Append an IPv4 header of @len bytes, @len - 20 of them zeroed payload. */
static struct iphdr *deter_rpl_put_iph(struct sk_buff *skb, unsigned int len,
				       u8 protocol, __be32 saddr, __be32 daddr)
{
	struct iphdr *iph = skb_put_zero(skb, len);

	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->tot_len = htons(len);
	iph->protocol = protocol;
	iph->saddr = saddr;
	iph->daddr = daddr;
	return iph;
}

/*
 * Hand @sk the ICMP error @e logs, as icmp_unreach() hands one to TCP's
 * error handler: the IP header it quotes and the first 8 bytes of the
 * TCP header, the segment's sequence number as far past snd_una as in
 * the original. A process may own the socket, as it did then.
 */
static void deter_rpl_inject_icmp(struct deter_rpl *rpl, struct sock *sk,
				  const struct deter_replay_ev *e)
{
	const unsigned int quoted = sizeof(struct iphdr) + 8;
	const struct inet_sock *inet = inet_sk(sk);
	const struct net_protocol *ipprot;
	struct sk_buff *skb;
	struct icmphdr *ih;
	struct iphdr *iph;
	struct tcphdr *th;
	u32 info = e->b >> 32;

	skb = alloc_skb(MAX_HEADER + sizeof(*iph) + sizeof(*ih) + quoted,
			GFP_KERNEL);
	if (!skb) {
		spin_lock_bh(&rpl->lock);
		deter_rpl_diverge(rpl, "event %u: out of memory for an ICMP error",
				  e->seq);
		spin_unlock_bh(&rpl->lock);
		return;
	}
	skb_reserve(skb, MAX_HEADER);
	skb_reset_network_header(skb);
	/* From the peer's way; tcp_v4_err() reads only what follows. */
	deter_rpl_put_iph(skb, sizeof(*iph), IPPROTO_ICMP, inet->inet_daddr,
			  inet->inet_saddr);
	skb_set_transport_header(skb, skb->len);
	ih = skb_put_zero(skb, sizeof(*ih));
	ih->type = e->a >> 8 & 0xff;
	ih->code = e->a & 0xff;
	if (ih->type == ICMP_DEST_UNREACH && ih->code == ICMP_FRAG_NEEDED)
		ih->un.frag.mtu = htons(info);
	iph = deter_rpl_put_iph(skb, quoted, IPPROTO_TCP, inet->inet_saddr,
				inet->inet_daddr);	/* the segment it quotes */
	th = (struct tcphdr *)(iph + 1);
	th->source = inet->inet_sport;
	th->dest = inet->inet_dport;
	__skb_pull(skb, sizeof(*iph) + sizeof(*ih));
	skb->protocol = htons(ETH_P_IP);
	skb->dev = sock_net(sk)->loopback_dev;

	local_bh_disable();
	this_cpu_write(deter_rpl_icmp, sk);
	deter_rpl_set_cpu(rpl);
	th->seq = htonl(READ_ONCE(tcp_sk(sk)->snd_una) + (u32)e->b);
	rcu_read_lock();
	ipprot = rcu_dereference(inet_protos[IPPROTO_TCP]);
	if (ipprot && ipprot->err_handler)
		ipprot->err_handler(skb, info);
	rcu_read_unlock();
	this_cpu_write(deter_rpl_icmp, NULL);
	local_bh_enable();
	kfree_skb(skb);
}

/*
 * May the ICMP error @e, which came while a process owned the socket, be
 * handed over now? The owner works on meanwhile: it must have made the
 * clock reads logged before the error, and sent the segment the error
 * quotes. Under rpl->lock.
 */
static bool deter_rpl_icmp_ready(struct deter_rpl *rpl, struct sock *sk,
				 const struct deter_replay_ev *e)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct deter_replay_ev *c;
	u32 i = rpl->clk;

	c = deter_rpl_next_value(rpl, &i, DETER_V_CLOCK);
	if (c && c->seq < e->seq)
		return false;
	/* One that quotes a segment already acknowledged: TCP ignores it. */
	return (s32)e->b < 0 ||
	       after(READ_ONCE(tp->snd_nxt), READ_ONCE(tp->snd_una) + (u32)e->b);
}

/* TSQ work outside the owner: run it the way tcp_release_cb() does. */
static void deter_rpl_run_tsq(struct deter_rpl *rpl, struct sock *sk)
{
	WRITE_ONCE(rpl->driver, current);
	deter_rpl_task_set(rpl);
	lock_sock(sk);
	spin_lock_bh(&rpl->lock);
	deter_rpl_ctx_next(rpl);
	spin_unlock_bh(&rpl->lock);
	if (!test_and_set_bit(TCP_TSQ_DEFERRED, &sk->sk_tsq_flags))
		sock_hold(sk);
	release_sock(sk);
	deter_rpl_task_set(NULL);
	WRITE_ONCE(rpl->driver, NULL);
}

/* Re-enter a held segment into TCP now that it is due. */
static void deter_rpl_reinject(struct sock *sk, struct sk_buff *skb)
{
	const struct net_protocol *ipprot;
	struct net_device *dev;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(sock_net(sk), skb->skb_iif);
	ipprot = rcu_dereference(inet_protos[IPPROTO_TCP]);
	if (!dev || !ipprot) {
		rcu_read_unlock();
		kfree_skb(skb);
		return;
	}
	skb->dev = dev;
	local_bh_disable();
	ipprot->handler(skb);
	local_bh_enable();
	rcu_read_unlock();
}

static void deter_rpl_work(struct work_struct *work)
{
	struct deter_rpl *rpl = container_of(to_delayed_work(work),
					     struct deter_rpl, work);
	const struct deter_replay_ev *e;
	struct sk_buff *skb, *found;
	struct sock *sk;
	bool owned, want_owned, ready, woken;
	int rounds;

	for (rounds = 0; rounds < 256; rounds++) {
		spin_lock_bh(&rpl->lock);
		sk = rpl->sk;
		e = deter_rpl_at(rpl, rpl->ctx);
		if (rpl->state != DETER_RPL_RUNNING || !e || !rpl->ds) {
			/* Let anything held go: the replay is over. */
			while ((skb = __skb_dequeue(&rpl->held))) {
				spin_unlock_bh(&rpl->lock);
				if (sk)
					deter_rpl_reinject(sk, skb);
				else
					kfree_skb(skb);
				spin_lock_bh(&rpl->lock);
			}
			spin_unlock_bh(&rpl->lock);
			wake_up_all(&rpl->wq);
			return;
		}
		owned = sock_owned_by_user_nocheck(sk);
		want_owned = deter_rpl_is_owned(e);
		if (deter_rpl_is_icmp(e)) {
			ready = owned == want_owned &&
				(!owned || deter_rpl_icmp_ready(rpl, sk, e));
			spin_unlock_bh(&rpl->lock);
			if (!ready) {	/* wait for the owner logged */
				mod_delayed_work(deter_rpl_wq, &rpl->work, 1);
				return;
			}
			deter_rpl_inject_icmp(rpl, sk, e);
			spin_lock_bh(&rpl->lock);
			if (rpl->ctx < rpl->hdr.nevents && &rpl->ev[rpl->ctx] == e)
				deter_rpl_diverge(rpl, "event %u: the ICMP error missed the socket",
						  e->seq);
			spin_unlock_bh(&rpl->lock);
			continue;
		}
		if (e->type == DETER_EV_RX) {
			/*
			 * Backlogged segments are the owner's to feed, at its
			 * checks (deter_rpl_owner_check()): racing it
			 * would split a batch.
			 */
			if (want_owned) {
				spin_unlock_bh(&rpl->lock);
				return;
			}
			found = deter_rpl_held_find(rpl, e);
			if (!found || owned != want_owned) {
				spin_unlock_bh(&rpl->lock);
				if (found)	/* wait for the owner logged */
					mod_delayed_work(deter_rpl_wq, &rpl->work, 1);
				return;	/* else the segment is still on its way */
			}
			__skb_unlink(found, &rpl->held);
			spin_unlock_bh(&rpl->lock);
			deter_rpl_reinject(sk, found);
			continue;
		}
		woken = rpl->app_woken == rpl->ctx + 1;
		spin_unlock_bh(&rpl->lock);
		if (e->sub == DETER_LOCK_APP || e->sub == DETER_LOCK_BACKLOG) {
			if (e->sub == DETER_LOCK_APP && !owned)
				deter_rpl_app_wake(rpl, sk, e);
			/*
			 * The owner wakes it when it lets go, unless the app's
			 * turn came after the owner's wake-up point: a batch
			 * or a deferred handler that release_sock() ran (a
			 * signal, not a segment, woke the original's app next).
			 * Look again once it has let go.
			 */
			else if (e->sub == DETER_LOCK_APP && !woken)
				mod_delayed_work(deter_rpl_wq, &rpl->work, 1);
			wake_up_all(&rpl->wq);
			return;
		}
		/* The owner's, in tcp_release_cb(): deter_rpl_deferred(). */
		if (deter_rpl_is_deferred(e))
			return;
		if (owned != want_owned) {
			mod_delayed_work(deter_rpl_wq, &rpl->work, 1);
			return;
		}
		if (e->sub == DETER_LOCK_TSQ) {
			deter_rpl_run_tsq(rpl, sk);
			continue;
		}
		deter_rpl_fire_timer(rpl, sk, e->sub);
	}
	mod_delayed_work(deter_rpl_wq, &rpl->work, 0);
}

/* ---- scripts and control ---------------------------------------------- */

static void deter_rpl_free(struct deter_rpl *rpl)
{
	cancel_delayed_work_sync(&rpl->work);
	skb_queue_purge(&rpl->held);
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
	u32 i;

	if (len < sizeof(*h) || memcmp(h->magic, DETER_REPLAY_MAGIC, 8) ||
	    h->version != DETER_ABI_VERSION || h->hdr_len != sizeof(*h) ||
	    !h->nevents || h->nevents > DETER_RPL_MAX_EVENTS ||
	    h->nstates > h->nevents)
		return -EINVAL;
	evlen = (size_t)h->nevents * sizeof(struct deter_replay_ev);
	stlen = (size_t)h->nstates * DETER_ST_MAX * sizeof(u64);
	if (len != sizeof(*h) + evlen + stlen)
		return -EINVAL;
	rpl = kzalloc(sizeof(*rpl), GFP_KERNEL);
	if (!rpl)
		return -ENOMEM;
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

		if ((i && e->seq <= rpl->ev[i - 1].seq) || !e->type ||
		    e->type > DETER_EV_LAST ||
		    (e->type == DETER_EV_STATE && e->a >= h->nstates) ||
		    (e->type == DETER_EV_LOCK && e->sub >= DETER_LOCK_MAX)) {
			deter_rpl_free(rpl);
			return -EINVAL;
		}
		if (e->type == DETER_EV_RX &&
		    !(e->b & (DETER_RX_SYN | DETER_RX_CTL)))
			rpl->rx_last = max(rpl->rx_last, e->a);
	}
	spin_lock_init(&rpl->lock);
	skb_queue_head_init(&rpl->held);
	init_waitqueue_head(&rpl->wq);
	INIT_DELAYED_WORK(&rpl->work, deter_rpl_work);
	rpl->state = DETER_RPL_LOADED;
	*out = rpl;
	return 0;
}

/* No CPU or task answers jiffies reads from @rpl any more. */
static void deter_rpl_forget(struct deter_rpl *rpl)
{
	unsigned int cpu;

	deter_rpl_tasks_forget(rpl);
	for_each_possible_cpu(cpu)
		cmpxchg(per_cpu_ptr(&deter_rpl_cpu, cpu), rpl, NULL);
}

/*
 * Drop the scripts of session @owner (NULL: of every session, or with
 * @dead of every session whose process has exited). A running script
 * ends as diverged ("stopped"). Process context; sleeps until no hook
 * uses them.
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

	rpl->owner = get_task_pid(current, PIDTYPE_TGID);
	/* Sessions whose process is gone without "stop" end here. */
	deter_rpl_stop(NULL, true);

	mutex_lock(&deter_rpl_mutex);
	list_for_each_entry(old, &deter_rpl_list, node) {
		n++;
		if (old->owner == rpl->owner && old->armed)
			err = -EALREADY;	/* this session already runs */
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
 * Other processes' replays go on: each process is one replay session.
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

int deter_replay_init(struct dentry *dir)
{
	deter_rpl_wq = alloc_ordered_workqueue("deter_replay", 0);
	if (!deter_rpl_wq)
		return -ENOMEM;
	debugfs_create_file("replay", 0600, dir, NULL, &deter_rpl_fops);
	return 0;
}

void deter_replay_exit(void)
{
	deter_rpl_stop(NULL, false);
	deter_rpl_tasks_forget(NULL);
	destroy_workqueue(deter_rpl_wq);
}
