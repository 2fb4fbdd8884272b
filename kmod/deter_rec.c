// SPDX-License-Identifier: GPL-2.0
/*
 * Recording: turn what the TCP hooks see into deter's trace events.
 *
 * deter records, per connection, everything its execution depends on
 * that TCP does not compute itself (DETER §3.1-3.3, Table 1). Each hook
 * emits one event carrying a per-socket sequence number; hooks that run
 * under the socket lock thus number their events in lock order, which is
 * the order replay enforces:
 *
 *   lock_sock / timers / TSQ --> LOCK(who, flags)         handler calls,
 *   tcp_v4_rcv               --> RX(IP ID index, ECN)     lock order
 *                                NET(GAP | LATE | CE)     network actions
 *   tcp_sendmsg/recvmsg/...  --> CALL(size, flags, tid), CALL_DONE(ret)
 *   socket calls             --> CONFIG(field, value)     when changed
 *   net_dev_start_xmit       --> SAMPLE(index, ns, gap)   Algorithm 1
 *   ESTABLISHED              --> deter_conn: 4-tuple, ISNs, IP ID, options
 *   every 64th event, close  --> deter_state: checkpoint / summary
 *
 * Network actions are inferred at the receiver from IP IDs: a connected
 * 6.12 socket numbers its packets from a per-socket counter advanced by
 * each skb's segment count, so an ID above the expected one opens a gap
 * (drop, or reordering if the missing IDs arrive LATE) and CE marks come
 * from the IP header. SYNs are left out of the series: a SYN-ACK carries
 * ID 0. The recorder folds GAP and LATE into drops and reorderings.
 *
 * A lost event shows as a hole in a connection's sequence numbers, so
 * the recorder can mark that connection incomplete instead of writing a
 * wrong log; a socket deter could not track at all emits deter_lost.
 *
 * Nothing here sleeps or allocates; the cost while disarmed is one
 * test of deter_rec_armed per hook.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/hash.h>
#include <linux/icmp.h>
#include <linux/ip.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/seq_file.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <kunit/visibility.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_ipid.h"
#include "deter_rec.h"
#include "deter_replay.h"

#define CREATE_TRACE_POINTS
#include "deter_trace.h"

/* A checkpoint every this many events: ~1.5 bytes/event once encoded. */
#define DETER_REC_CHECKPOINT_MASK 63

/* At a checkpoint, look for settings changed, at most this often. */
#define DETER_REC_SETTINGS_EVERY (HZ / 10)

static void deter_rec_settings_check(struct deter_sock *ds, struct sock *sk,
				     bool force);

/* Ports to record; none means all. 16 covers a testbed's services. */
#define DETER_REC_PORTS_MAX 16

static bool deter_rec_armed __read_mostly;
static u32 deter_rec_threshold_ns __read_mostly = DETER_SAMPLE_THRESHOLD_NS;
static u16 deter_rec_ports[DETER_REC_PORTS_MAX] __read_mostly;
static unsigned int deter_rec_nports __read_mostly;
static DEFINE_MUTEX(deter_rec_ctl_mutex);	/* serialises control writes */

static atomic64_t deter_rec_conns;	/* connections selected */
static atomic64_t deter_rec_not_ipv4;	/* IPv6 ones left out */
static DEFINE_PER_CPU(u64, deter_rec_events);	/* events recorded */
static atomic64_t deter_rec_tx_pkts;	/* packets seen leaving, recorded conns */
static atomic64_t deter_rec_tx_orphan;	/* of those, found by 4-tuple */

static struct tracepoint *deter_rec_tp_xmit;	/* net_dev_start_xmit */
static struct tracepoint *deter_rec_tp_state;	/* inet_sock_set_state */

static const u8 deter_rec_lock_abi[DETER_SITE_MAX] = {
	[DETER_SITE_LOCK_APP] = DETER_LOCK_APP,
	[DETER_SITE_LOCK_WRITE_TIMER] = DETER_LOCK_WRITE_TIMER,
	[DETER_SITE_LOCK_DELACK_TIMER] = DETER_LOCK_DELACK_TIMER,
	[DETER_SITE_LOCK_KEEPALIVE_TIMER] = DETER_LOCK_KEEPALIVE_TIMER,
	[DETER_SITE_LOCK_COMP_ACK_TIMER] = DETER_LOCK_COMP_ACK_TIMER,
	[DETER_SITE_LOCK_TSQ] = DETER_LOCK_TSQ,
	[DETER_SITE_LOCK_BACKLOG] = DETER_LOCK_BACKLOG,
};

static const u8 deter_rec_call_abi[DETER_CALL_MAX] = {
	[DETER_CALL_SENDMSG] = DETER_ABI_CALL_SENDMSG,
	[DETER_CALL_RECVMSG] = DETER_ABI_CALL_RECVMSG,
	[DETER_CALL_SHUTDOWN] = DETER_ABI_CALL_SHUTDOWN,
	[DETER_CALL_CLOSE] = DETER_ABI_CALL_CLOSE,
	[DETER_CALL_SETSOCKOPT] = DETER_ABI_CALL_SETSOCKOPT,
	[DETER_CALL_SPLICE_READ] = DETER_ABI_CALL_SPLICE_READ,
	[DETER_CALL_RECV_ERRQUEUE] = DETER_ABI_CALL_RECV_ERRQUEUE,
};

/* The state of @sk if deter is recording it, else NULL. */
static struct deter_sock *deter_rec_get(const struct sock *sk)
{
	struct deter_sock *ds;

	if (!READ_ONCE(deter_rec_armed))
		return NULL;
	ds = deter_conn_get(sk);
	return ds && READ_ONCE(ds->rec) ? ds : NULL;
}

/*
 * Record one event: it joins the connection's batch, which goes out as
 * one trace event when full (DETER_EV_BATCH), before any record that is
 * not an event (identity, checkpoint, summary, discard) and when
 * recording stops. The recorder orders events by sequence number, so a
 * batch may hold events of several contexts.
 */
static u32 deter_rec_emit(struct deter_sock *ds, u16 type, u16 sub, u64 a,
			  u64 b, u64 c)
{
	unsigned long flags;
	u32 seq;

	this_cpu_inc(deter_rec_events);
	spin_lock_irqsave(&ds->ev_lock, flags);
	seq = atomic_inc_return(&ds->seq);
	ds->ev[ds->ev_n++] = (struct deter_rec_ev){
		.a = a, .b = b, .c = c, .seq = seq, .type = type, .sub = sub,
	};
	if (ds->ev_n == DETER_EV_BATCH) {
		trace_deter_ev(ds->conn, ds->ev, ds->ev_n);
		ds->ev_n = 0;
	}
	spin_unlock_irqrestore(&ds->ev_lock, flags);
	return seq;
}

/* Emit the events still in @ds's batch; ev_lock held. */
static void __deter_rec_ev_flush(struct deter_sock *ds)
{
	lockdep_assert_held(&ds->ev_lock);
	if (ds->ev_n)
		trace_deter_ev(ds->conn, ds->ev, ds->ev_n);
	ds->ev_n = 0;
}

static void deter_rec_ev_flush(struct deter_sock *ds)
{
	unsigned long flags;

	spin_lock_irqsave(&ds->ev_lock, flags);
	__deter_rec_ev_flush(ds);
	spin_unlock_irqrestore(&ds->ev_lock, flags);
}

/* At "stop": what a recorded connection's batch holds goes out. */
static void deter_rec_stop_flush(struct deter_sock *ds)
{
	if (READ_ONCE(ds->rec))
		deter_rec_ev_flush(ds);
}

/*
 * Emit a state record (enum deter_state_kind) after every event numbered
 * before it: the batch goes out first and the number is taken under the
 * same lock, so the recorder gets a connection's records in order (but
 * for what merging the CPUs' buffers by their clocks may swap).
 */
static u32 deter_rec_state_ev(struct deter_sock *ds, struct sock *sk,
			      u32 kind, u32 rx_zero_wnd)
{
	unsigned long flags;
	u32 seq;

	spin_lock_irqsave(&ds->ev_lock, flags);
	__deter_rec_ev_flush(ds);
	seq = atomic_inc_return(&ds->seq);
	trace_deter_state(ds->conn, seq, kind, sk, rx_zero_wnd);
	spin_unlock_irqrestore(&ds->ev_lock, flags);
	return seq;
}

static void deter_rec_checkpoint(struct deter_sock *ds, struct sock *sk,
				 u32 seq)
{
	if ((seq & DETER_REC_CHECKPOINT_MASK) != DETER_REC_CHECKPOINT_MASK)
		return;
	seq = deter_rec_state_ev(ds, sk, DETER_STATE_CHECKPOINT,
				 ds->rx_zero_wnd);
	if (unlikely(deter_debug_clock))
		deter_debug_state("rec", sk, seq);
	/* After it: the replay compares a checkpoint right after its event. */
	deter_rec_settings_check(ds, sk, false);
}

/*
 * The jiffies a context's TCP reads while recording: the value looked at
 * (and logged) at its last event, so no tick falls between an event and
 * a later read of the same processing step; the replay answers every
 * read of a step with the value at its last event. One slot per CPU for
 * softirq, one for the task running there (BH off or not: the lock
 * hooks run under spin_lock_bh(), the rest of the step may not). A step
 * of a socket not recorded empties the slot; a held value older than
 * DETER_REC_JIF_HOLD (a slot left by a step that ended) is not used.
 */
#define DETER_REC_JIF_HOLD	(HZ / 10)

struct deter_rec_jif {
	struct task_struct *task;	/* NULL: the softirq slot */
	unsigned long jif;
};

static DEFINE_PER_CPU(struct deter_rec_jif, deter_rec_jif_bh);
static DEFINE_PER_CPU(struct deter_rec_jif, deter_rec_jif_task);

static struct deter_rec_jif *deter_rec_jif_slot(struct task_struct **task)
{
	if (!in_task()) {
		*task = NULL;
		return this_cpu_ptr(&deter_rec_jif_bh);
	}
	*task = current;
	return this_cpu_ptr(&deter_rec_jif_task);
}

/* Fill this context's slot with @now, or (!@hold) make it match no context. */
static void deter_rec_jif_store(bool hold, unsigned long now)
{
	struct task_struct *task;
	struct deter_rec_jif *j;

	preempt_disable();
	j = deter_rec_jif_slot(&task);
	j->task = hold ? task : ERR_PTR(-ENOENT);	/* matches no context */
	j->jif = now;
	preempt_enable();
}

VISIBLE_IF_KUNIT void deter_rec_jif_set(unsigned long now)
{
	deter_rec_jif_store(true, now);
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_jif_set);

/* A step of a socket that is not recorded: reads are live again. */
VISIBLE_IF_KUNIT void deter_rec_jif_clear(void)
{
	deter_rec_jif_store(false, 0);
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_jif_clear);

unsigned long deter_rec_jiffies_read(void)
{
	unsigned long now = jiffies;
	struct task_struct *task;
	struct deter_rec_jif *j;

	preempt_disable();
	j = deter_rec_jif_slot(&task);
	if (j->task == task && time_in_range(now, j->jif,
					     j->jif + DETER_REC_JIF_HOLD))
		now = j->jif;
	preempt_enable();
	return now;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_jiffies_read);

/*
 * Jiffies, before an event: logged when it changed since the socket's
 * last event (DETER: record only reads that return a new value). Also
 * checked at every TCP clock read. The owner and the softirq backlogging
 * a segment may look at once: only the one that moves jif_last logs the
 * change. Either way this context reads @now until its next event.
 */
static void deter_rec_jiffies(struct deter_sock *ds)
{
	unsigned long now = jiffies, last = READ_ONCE(ds->jif_last);

	if (!ds->jif_primed)
		now = deter_rec_jiffies_read();	/* a child's stamps' */
	deter_rec_jif_set(now);
	if (!ds->jif_primed) {
		ds->jif_last = now;
		ds->jif_primed = true;
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_JIFFIES, now, 0, 0);
		return;
	}
	if (now == last || cmpxchg(&ds->jif_last, last, now) != last)
		return;
	deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_JIFFIES, now - last, 0, 0);
}

/*
 * What a passive handshake leaves before its child socket exists, the
 * SYN's IP ID and the SYN-ACK clocks, waits here, keyed by namespace and
 * 4-tuple. A full table gives the oldest slot to the new handshake; the
 * child of the evicted one then logs DETER_V_MISSING (its log is
 * incomplete, and replay refuses it) instead of replaying without them.
 */
static struct deter_rec_hs deter_rec_hs[DETER_REC_HS_SLOTS];
static DEFINE_SPINLOCK(deter_rec_hs_lock);

/*
 * The slot of a handshake in @tab, or with @claim a new one for it (free,
 * else the oldest claimed), stamped @now; NULL when it has none. Under
 * deter_rec_hs_lock.
 */
VISIBLE_IF_KUNIT struct deter_rec_hs *
deter_rec_hs_slot(struct deter_rec_hs *tab, u32 netns, __be32 laddr, u16 lport,
		  __be32 raddr, u16 rport, bool claim, unsigned long now)
{
	struct deter_rec_hs *h, *pick, *free = NULL, *oldest = NULL;

	for (h = tab; h < tab + DETER_REC_HS_SLOTS; h++) {
		if (h->lport == lport && h->rport == rport &&
		    h->laddr == laddr && h->raddr == raddr &&
		    h->netns == netns)
			return h;
		if (!h->lport && !h->rport)
			free = free ?: h;
		else if (!oldest || time_before(h->stamp, oldest->stamp))
			oldest = h;
	}
	pick = claim ? free ?: oldest : NULL;
	if (pick) {
		memset(pick, 0, sizeof(*pick));
		pick->netns = netns;
		pick->laddr = laddr;
		pick->raddr = raddr;
		pick->lport = lport;
		pick->rport = rport;
		pick->stamp = now;
	}
	return pick;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_hs_slot);

/**
 * deter_rec_page_frag_refill() - tcp_sendmsg_locked() refills its page
 *	fragment
 * @sk: the socket, owned by the caller
 * @pfrag: the fragment
 *
 * Logs the refills where the fragment starts over (another page, or the
 * same page from offset 0 once every skb let go of it; it depends on
 * when the data was acknowledged and freed) and the socket's first.
 *
 * Return: what sk_page_frag_refill() returned.
 */
bool deter_rec_page_frag_refill(struct sock *sk, struct page_frag *pfrag)
{
	struct deter_sock *ds = deter_rec_get(sk);
	struct page *page = pfrag->page;
	unsigned int off = pfrag->offset, size = pfrag->size;
	bool ok = sk_page_frag_refill(sk, pfrag);

	if (!ds || !ok)
		return ok;
	if (ds->pf_seen && pfrag->page == page && pfrag->offset == off &&
	    pfrag->size == size) {
		ds->pf_same++;
		return ok;
	}
	deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_PAGE_FRAG, ds->pf_same,
		       (u64)get_order(pfrag->size) << 16 | pfrag->offset, 0);
	ds->pf_same = 0;
	ds->pf_seen = true;
	return ok;
}

/*
 * A timing-dependent read that is usually 0 (a test that found false, a
 * backlog that was empty): log only the other ones, each with the run
 * of 0s before it and, for the values that carry one, itself as b.
 * Replay counts the same way.
 */
static void deter_rec_rare(struct deter_sock *ds, u16 what, u32 *run, u64 val)
{
	if (!val) {
		(*run)++;
		return;
	}
	deter_rec_emit(ds, DETER_EV_VALUE, what, *run,
		       deter_value_has_b(what) ? val : 0, 0);
	*run = 0;
}

/*
 * A memory accounting decision the host's other sockets share: log the
 * ones that came out unlike this socket's previous decision of their
 * kind, each with how many decisions of any kind came before it since
 * the previous logged one. 0 B while the host has memory to spare.
 */
static void deter_rec_mem(struct deter_sock *ds, unsigned int kind, bool yes)
{
	if (yes == !!(ds->mem_state & BIT(kind))) {
		ds->mem_run++;
		return;
	}
	ds->mem_state ^= BIT(kind);
	deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MEM, ds->mem_run,
		       kind << 1 | yes, 0);
	ds->mem_run = 0;
}

/*
 * Whether the SYN @skb to listener @sk asks for a Fast Open cookie or has
 * one, as tcp_conn_request() parsed its options for tcp_try_fastopen():
 * a cookie option TCP takes (option 34, or the experimental one with the
 * Fast Open magic; an even length, 0 for a request).
 */
static bool deter_rec_syn_fastopen(const struct sock *sk, const struct sk_buff *skb)
{
	struct tcp_fastopen_cookie foc = { .len = -1 };
	struct tcp_options_received opt;

	tcp_clear_options(&opt);
	tcp_parse_options(sock_net(sk), skb, &opt, 0, &foc);
	return foc.len >= 0;
}

/**
 * deter_rec_value() - TCP used a value it took from the kernel
 * @sk: the socket (the request socket for DETER_VAL_SYNACK_CLOCK, the
 *	listener for a passive ISN)
 * @skb: the SYN, for a passive ISN and TS offset; else NULL
 * @what: which value
 * @val: the value
 *
 * A recorded socket's TCP clock is rounded down to a microsecond: TCP
 * keeps its timestamps in microseconds (tcp_mstamp, RTT samples, RACK,
 * TSval); the nanoseconds below only ever made a paced packet's departure
 * time up to 1 us later, and in the log they were ten bits of noise per
 * read, half of what the clock cost.
 *
 * Return: the value TCP is to use.
 */
u64 deter_rec_value(const struct sock *sk, const struct sk_buff *skb,
		    enum deter_value what, u64 val)
{
	struct deter_rec_hs *h;
	struct deter_sock *ds;
	u32 seq;

	/*
	 * A time-wait socket's answer: the peer logs its TS value where it
	 * arrives (deter_rec_sk_rx()), since this end's log ended.
	 */
	if (!READ_ONCE(deter_rec_armed) || what == DETER_VAL_TW_TSVAL)
		return val;
	/* A request socket has only the common fields: no sk_protocol. */
	if (what == DETER_VAL_SYNACK_CLOCK) {
		spin_lock_bh(&deter_rec_hs_lock);
		h = deter_rec_hs_slot(deter_rec_hs, sock_net(sk)->ns.inum,
				      sk->sk_rcv_saddr, sk->sk_num,
				      sk->sk_daddr, ntohs(sk->sk_dport), false,
				      jiffies);
		if (h && h->n < DETER_REC_SYNACK_MAX)
			h->ns[h->n++] = val;
		spin_unlock_bh(&deter_rec_hs_lock);
		return val;
	}
	if (sk->sk_protocol != IPPROTO_TCP)
		return val;
	if (what == DETER_VAL_ISN && skb && skb->protocol == htons(ETH_P_IP)) {
		/*
		 * A new handshake: its SYN, Fast Open's if it has a cookie
		 * option or data (tcp_fastopen 0x200 takes data without one).
		 */
		bool fastopen = deter_rec_syn_fastopen(sk, skb) ||
				TCP_SKB_CB(skb)->end_seq != TCP_SKB_CB(skb)->seq + 1;

		spin_lock_bh(&deter_rec_hs_lock);
		h = deter_rec_hs_slot(deter_rec_hs, sock_net(sk)->ns.inum,
				      ip_hdr(skb)->daddr,
				      ntohs(tcp_hdr(skb)->dest),
				      ip_hdr(skb)->saddr,
				      ntohs(tcp_hdr(skb)->source), true, jiffies);
		h->n = 0;
		h->have_syn = true;
		h->fastopen = fastopen;
		h->syn_ipid = ntohs(ip_hdr(skb)->id);
		spin_unlock_bh(&deter_rec_hs_lock);
		return val;
	}
	ds = deter_rec_get(sk);
	if (!ds)
		return val;
	switch (what) {
	case DETER_VAL_CLOCK:
		val = deter_floor_us(val);
		deter_rec_jiffies(ds);
		seq = deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_CLOCK,
				     ds->clk_last ? val - ds->clk_last : val,
				     0, 0);
		ds->clk_last = val;
		if (unlikely(deter_debug_clock))
			deter_debug_clock_read("rec", sk, seq,
					       deter_rec_jiffies_read());
		break;
	case DETER_VAL_IP_ID:
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_IP_ID, val, 0, 0);
		break;
	case DETER_VAL_TSQ_FULL:
		deter_rec_rare(ds, DETER_V_TSQ_FULL, &ds->tsq_room, val);
		break;
	case DETER_VAL_AUTOCORK:
		deter_rec_rare(ds, DETER_V_AUTOCORK, &ds->autocork_idle, val);
		break;
	case DETER_VAL_HOST_QUEUED:
		deter_rec_rare(ds, DETER_V_HOST_QUEUED, &ds->hostq_gone, val);
		break;
	case DETER_VAL_MEM_PRESSURE:
	case DETER_VAL_MEM_ABOVE_LOW:
	case DETER_VAL_MEM_SUPPRESS:
	case DETER_VAL_OOM:
		deter_rec_mem(ds, deter_value_mem_kind(what), val);
		break;
	case DETER_VAL_RANDOM:
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_RANDOM, val, 0, 0);
		break;
	/*
	 * The host's unusual answers (VALUE HOST, kind << 32 | answer, never
	 * 0), after the usual ones of either kind since the previous one: 0 B
	 * while the host takes every segment and no wait times out.
	 */
	case DETER_VAL_XMIT:
		deter_rec_rare(ds, DETER_V_HOST, &ds->host_run,
			       (u64)DETER_HOST_XMIT << 32 | (u32)val);
		break;
	case DETER_VAL_WAIT_LEFT:
		deter_rec_rare(ds, DETER_V_HOST, &ds->host_run,
			       val ? 0 : (u64)DETER_HOST_TIMEOUT << 32);
		break;
	case DETER_VAL_NOSPACE:
		/* Where the outcome changes: 0 B while the writer has room. */
		deter_rec_rare(ds, DETER_V_HOST, &ds->host_run,
			       !val == !ds->nospace ? 0 :
			       (u64)DETER_HOST_NOSPACE << 32 | !!val);
		ds->nospace = !!val;
		break;
	case DETER_VAL_SIGNAL:
		/*
		 * Where a signal ended a call, outside the run of usual
		 * answers: how often TCP looks depends on whether a segment
		 * had reached the backlog yet, which the log does not hold.
		 */
		if (val)
			deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_HOST,
				       ds->host_run,
				       (u64)DETER_HOST_SIGNAL << 32, 0);
		break;
	case DETER_VAL_CACHED_CWND_CLAMP:
	case DETER_VAL_CACHED_SSTHRESH:
	case DETER_VAL_CACHED_REORDERING:
	case DETER_VAL_CACHED_RTT:
		/* 0 B while the host has no metrics cached for the peer. */
		deter_rec_rare(ds, DETER_V_HOST, &ds->host_run,
			       (u32)val == deter_value_cached_none(sk, what) ? 0 :
			       (u64)deter_value_cached_kind(what) << 32 | (u32)val);
		break;
	case DETER_VAL_HOST_IDLE:
		/* Logged where the outcome changes: 0 B while it stays. */
		deter_rec_rare(ds, DETER_V_HOST_BUSY, &ds->busy_run,
			       !val != ds->busy);
		ds->busy = !val;
		break;
	case DETER_VAL_BACKLOG_LEN:
		/*
		 * Only the owner can find segments in the backlog; softirq
		 * and timers run TCP only when no one owns the socket.
		 */
		if (sock_owned_by_user_nocheck(sk))
			deter_rec_rare(ds, DETER_V_BACKLOG_LEN, &ds->bl_empty,
				       val);
		break;
	default:	/* ISN, TS offset: in the connection's identity */
		break;
	}
	return val;
}

/* A passive end's handshake values, kept until the child exists. */
static void deter_rec_synack_emit(struct deter_sock *ds,
				  const struct sock *newsk)
{
	struct deter_rec_hs *h, hs = {};
	unsigned int i;

	spin_lock_bh(&deter_rec_hs_lock);
	h = deter_rec_hs_slot(deter_rec_hs, sock_net(newsk)->ns.inum,
			      newsk->sk_rcv_saddr, newsk->sk_num,
			      newsk->sk_daddr, ntohs(newsk->sk_dport), false,
			      jiffies);
	if (h) {
		hs = *h;
		h->lport = 0;
		h->rport = 0;
	}
	spin_unlock_bh(&deter_rec_hs_lock);
	if (!hs.have_syn) {
		/* Evicted, or recording began mid-handshake. */
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING,
			       DETER_MISSING_HANDSHAKE, 0, 0);
	} else {
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_SYN_IPID,
			       hs.syn_ipid, 0, 0);
	}
	for (i = 0; i < hs.n; i++)
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_SYNACK_CLOCK,
			       hs.ns[i], 0, 0);
	if (hs.fastopen)
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING,
			       DETER_MISSING_FASTOPEN, 0, 0);
	/* Its first arrival, which the child's log has no RX event for. */
	if (ds->rx_primed && !ds->child_syn)
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_CHILD_IPID,
			       ds->child_ipid, ds->child_segs, 0);
}

static bool deter_rec_port_match(const struct sock *sk)
{
	u16 sport = ntohs(inet_sk(sk)->inet_sport);
	u16 dport = ntohs(inet_sk(sk)->inet_dport);
	unsigned int i, n = READ_ONCE(deter_rec_nports);

	if (!n)
		return true;
	for (i = 0; i < n; i++)
		if (deter_rec_ports[i] == sport || deter_rec_ports[i] == dport)
			return true;
	return false;
}

/*
 * Decide whether to record a connection that is starting. @ipv4: it runs
 * over IPv4 (an AF_INET6 socket with a v4-mapped peer does too); deter
 * records nothing of IPv6 (its hooks, IP ID series and identity are
 * IPv4's), and counts what it left out rather than log it wrong.
 */
static void deter_rec_select(struct deter_sock *ds, const struct sock *sk,
			     bool ipv4)
{
	if (!READ_ONCE(deter_rec_armed) || !deter_rec_port_match(sk))
		return;
	if (!ipv4) {
		atomic64_inc(&deter_rec_not_ipv4);
		return;
	}
	deter_sampler_init(&ds->sampler, READ_ONCE(deter_rec_threshold_ns));
	WRITE_ONCE(ds->rec, true);
	atomic64_inc(&deter_rec_conns);
	deter_rec_jiffies(ds);
}

/*
 * Where each sysctl (enum deter_sysctl) lives in struct netns_ipv4, or
 * for the host's own (net.core) which variable it is, and the value
 * tcp_sk_init() gives a new namespace, in the kernel's units.
 */
#define DETER_SYSCTL_ALWAYS	S64_MIN	/* logged whatever its value */

struct deter_rec_sysctl {
	const u32 *global;	/* the host's, or NULL: at off in netns_ipv4 */
	u16 off;
	u8 size;
	u8 unit;	/* shown as stored, or DETER_REC_SC_SEC/MS from jiffies */
	bool sgn;
	/*
	 * TCP reads it only until the connection is established, so a
	 * change after cannot matter (deter_rec_settings_check())
	 */
	bool setup;
	s64 def;
};

#define DETER_REC_SC_SEC	1
#define DETER_REC_SC_MS		2

#define DETER_REC_SC(f, d, u, s) {					\
	.off = offsetof(struct netns_ipv4, sysctl_##f),			\
	.size = sizeof_field(struct netns_ipv4, sysctl_##f),		\
	.def = (d), .unit = (u), .sgn = (s) }

#define DETER_REC_SC_SETUP(f, d) {					\
	.off = offsetof(struct netns_ipv4, sysctl_##f),			\
	.size = sizeof_field(struct netns_ipv4, sysctl_##f),		\
	.def = (d), .setup = true }

static const struct deter_rec_sysctl deter_rec_sysctl[DETER_SYSCTL_ROUTE_INITCWND] = {
	[DETER_SYSCTL_TCP_ECN] = DETER_REC_SC_SETUP(tcp_ecn, 2),
	[DETER_SYSCTL_TCP_ECN_FALLBACK] = DETER_REC_SC_SETUP(tcp_ecn_fallback, 1),
	[DETER_SYSCTL_TCP_SACK] = DETER_REC_SC_SETUP(tcp_sack, 1),
	[DETER_SYSCTL_TCP_WINDOW_SCALING] = DETER_REC_SC_SETUP(tcp_window_scaling, 1),
	[DETER_SYSCTL_TCP_TIMESTAMPS] = DETER_REC_SC_SETUP(tcp_timestamps, 1),
	[DETER_SYSCTL_TCP_DSACK] = DETER_REC_SC(tcp_dsack, 1, 0, false),
	[DETER_SYSCTL_TCP_EARLY_RETRANS] = DETER_REC_SC(tcp_early_retrans, 3, 0, false),
	[DETER_SYSCTL_TCP_RECOVERY] = DETER_REC_SC(tcp_recovery, 1, 0, false),
	[DETER_SYSCTL_TCP_REORDERING] = DETER_REC_SC(tcp_reordering, 3, 0, false),
	[DETER_SYSCTL_TCP_MAX_REORDERING] = DETER_REC_SC(tcp_max_reordering, 300, 0, false),
	[DETER_SYSCTL_TCP_FRTO] = DETER_REC_SC(tcp_frto, 2, 0, false),
	[DETER_SYSCTL_TCP_RETRIES1] = DETER_REC_SC(tcp_retries1, 3, 0, false),
	[DETER_SYSCTL_TCP_RETRIES2] = DETER_REC_SC(tcp_retries2, 15, 0, false),
	[DETER_SYSCTL_TCP_ORPHAN_RETRIES] = DETER_REC_SC(tcp_orphan_retries, 0, 0, false),
	[DETER_SYSCTL_TCP_SYN_RETRIES] = DETER_REC_SC_SETUP(tcp_syn_retries, 6),
	[DETER_SYSCTL_TCP_SYNACK_RETRIES] = DETER_REC_SC_SETUP(tcp_synack_retries, 5),
	[DETER_SYSCTL_TCP_SYN_LINEAR_TIMEOUTS] = DETER_REC_SC_SETUP(tcp_syn_linear_timeouts, 4),
	[DETER_SYSCTL_TCP_THIN_LINEAR_TIMEOUTS] =
		DETER_REC_SC(tcp_thin_linear_timeouts, 0, 0, false),
	[DETER_SYSCTL_TCP_SLOW_START_AFTER_IDLE] =
		DETER_REC_SC(tcp_slow_start_after_idle, 1, 0, false),
	[DETER_SYSCTL_TCP_RETRANS_COLLAPSE] = DETER_REC_SC(tcp_retrans_collapse, 1, 0, false),
	[DETER_SYSCTL_TCP_APP_WIN] = DETER_REC_SC(tcp_app_win, 31, 0, false),
	[DETER_SYSCTL_TCP_ADV_WIN_SCALE] = DETER_REC_SC(tcp_adv_win_scale, 1, 0, true),
	[DETER_SYSCTL_TCP_MODERATE_RCVBUF] = DETER_REC_SC(tcp_moderate_rcvbuf, 1, 0, false),
	[DETER_SYSCTL_TCP_TSO_WIN_DIVISOR] = DETER_REC_SC(tcp_tso_win_divisor, 3, 0, false),
	[DETER_SYSCTL_TCP_TSO_RTT_LOG] = DETER_REC_SC(tcp_tso_rtt_log, 9, 0, false),
	[DETER_SYSCTL_TCP_MIN_TSO_SEGS] = DETER_REC_SC(tcp_min_tso_segs, 2, 0, false),
	[DETER_SYSCTL_TCP_AUTOCORKING] = DETER_REC_SC(tcp_autocorking, 1, 0, false),
	[DETER_SYSCTL_TCP_LIMIT_OUTPUT_BYTES] =
		DETER_REC_SC(tcp_limit_output_bytes, 16 * 65536, 0, false),
	[DETER_SYSCTL_TCP_NOTSENT_LOWAT] = DETER_REC_SC(tcp_notsent_lowat, U32_MAX, 0, false),
	[DETER_SYSCTL_TCP_MIN_RTT_WLEN] = DETER_REC_SC(tcp_min_rtt_wlen, 300, 0, false),
	[DETER_SYSCTL_TCP_PACING_SS_RATIO] = DETER_REC_SC(tcp_pacing_ss_ratio, 200, 0, false),
	[DETER_SYSCTL_TCP_PACING_CA_RATIO] = DETER_REC_SC(tcp_pacing_ca_ratio, 120, 0, false),
	[DETER_SYSCTL_TCP_COMP_SACK_DELAY_NS] =
		DETER_REC_SC(tcp_comp_sack_delay_ns, 1000000, 0, false),
	[DETER_SYSCTL_TCP_COMP_SACK_SLACK_NS] =
		DETER_REC_SC(tcp_comp_sack_slack_ns, 100000, 0, false),
	[DETER_SYSCTL_TCP_COMP_SACK_NR] = DETER_REC_SC(tcp_comp_sack_nr, 44, 0, false),
	[DETER_SYSCTL_TCP_BACKLOG_ACK_DEFER] = DETER_REC_SC(tcp_backlog_ack_defer, 1, 0, false),
	[DETER_SYSCTL_TCP_PINGPONG_THRESH] = DETER_REC_SC(tcp_pingpong_thresh, 1, 0, false),
	[DETER_SYSCTL_TCP_RTO_MIN_US] = DETER_REC_SC(tcp_rto_min_us, 200000, 0, false),
	[DETER_SYSCTL_TCP_MTU_PROBING] = DETER_REC_SC(tcp_mtu_probing, 0, 0, false),
	[DETER_SYSCTL_TCP_BASE_MSS] = DETER_REC_SC(tcp_base_mss, 1024, 0, false),
	[DETER_SYSCTL_TCP_MIN_SND_MSS] = DETER_REC_SC(tcp_min_snd_mss, 48, 0, false),
	[DETER_SYSCTL_TCP_PROBE_THRESHOLD] = DETER_REC_SC(tcp_probe_threshold, 8, 0, false),
	[DETER_SYSCTL_TCP_PROBE_INTERVAL] = DETER_REC_SC(tcp_probe_interval, 600, 0, false),
	[DETER_SYSCTL_TCP_MTU_PROBE_FLOOR] = DETER_REC_SC(tcp_mtu_probe_floor, 48, 0, false),
	[DETER_SYSCTL_TCP_KEEPALIVE_TIME] =
		DETER_REC_SC(tcp_keepalive_time, TCP_KEEPALIVE_TIME, DETER_REC_SC_SEC, false),
	[DETER_SYSCTL_TCP_KEEPALIVE_PROBES] = DETER_REC_SC(tcp_keepalive_probes, 9, 0, false),
	[DETER_SYSCTL_TCP_KEEPALIVE_INTVL] =
		DETER_REC_SC(tcp_keepalive_intvl, TCP_KEEPALIVE_INTVL, DETER_REC_SC_SEC, false),
	[DETER_SYSCTL_TCP_FIN_TIMEOUT] =
		DETER_REC_SC(tcp_fin_timeout, TCP_FIN_TIMEOUT, DETER_REC_SC_SEC, false),
	[DETER_SYSCTL_TCP_STDURG] = DETER_REC_SC(tcp_stdurg, 0, 0, false),
	[DETER_SYSCTL_TCP_RFC1337] = DETER_REC_SC(tcp_rfc1337, 0, 0, false),
	[DETER_SYSCTL_TCP_WORKAROUND_SIGNED_WINDOWS] =
		DETER_REC_SC(tcp_workaround_signed_windows, 0, 0, false),
	[DETER_SYSCTL_TCP_SHRINK_WINDOW] = DETER_REC_SC(tcp_shrink_window, 0, 0, false),
	[DETER_SYSCTL_TCP_CHALLENGE_ACK_LIMIT] =
		DETER_REC_SC(tcp_challenge_ack_limit, INT_MAX, 0, false),
	[DETER_SYSCTL_TCP_INVALID_RATELIMIT] =
		DETER_REC_SC(tcp_invalid_ratelimit, HZ / 2, DETER_REC_SC_MS, false),
	[DETER_SYSCTL_TCP_NOMETRICS_SAVE] = DETER_REC_SC(tcp_nometrics_save, 0, 0, false),
	[DETER_SYSCTL_TCP_NO_SSTHRESH_METRICS_SAVE] =
		DETER_REC_SC(tcp_no_ssthresh_metrics_save, 1, 0, false),
	[DETER_SYSCTL_TCP_FASTOPEN] = DETER_REC_SC_SETUP(tcp_fastopen, 1),
	[DETER_SYSCTL_TCP_PLB_ENABLED] = DETER_REC_SC(tcp_plb_enabled, 0, 0, false),
	[DETER_SYSCTL_TCP_RMEM0] = DETER_REC_SC(tcp_rmem[0], DETER_SYSCTL_ALWAYS, 0, false),
	[DETER_SYSCTL_TCP_RMEM1] = DETER_REC_SC_SETUP(tcp_rmem[1], DETER_SYSCTL_ALWAYS),
	[DETER_SYSCTL_TCP_RMEM2] = DETER_REC_SC(tcp_rmem[2], DETER_SYSCTL_ALWAYS, 0, false),
	[DETER_SYSCTL_TCP_WMEM0] = DETER_REC_SC(tcp_wmem[0], DETER_SYSCTL_ALWAYS, 0, false),
	[DETER_SYSCTL_TCP_WMEM1] = DETER_REC_SC_SETUP(tcp_wmem[1], DETER_SYSCTL_ALWAYS),
	[DETER_SYSCTL_TCP_WMEM2] = DETER_REC_SC(tcp_wmem[2], DETER_SYSCTL_ALWAYS, 0, false),
	/*
	 * The window scale TCP offers is for the largest of the buffer,
	 * tcp_rmem[2] and rmem_max (tcp_select_initial_window()). Global,
	 * and a host's default need not be the kernel's: always logged.
	 */
	[DETER_SYSCTL_CORE_RMEM_MAX] = { .global = &sysctl_rmem_max, .size = 4,
					 .setup = true, .def = DETER_SYSCTL_ALWAYS },
};

#undef DETER_REC_SC
#undef DETER_REC_SC_SETUP

/* Adds @v to the digest @sum of the settings a connection started with. */
static u64 deter_rec_sum(u64 sum, u64 v)
{
	sum = (sum ^ v) * GOLDEN_RATIO_64;
	return sum ^ sum >> 29;
}

/* Sysctl @c's value, in the kernel's units; @base: the namespace's. */
static s64 deter_rec_sysctl_get(const struct deter_rec_sysctl *c,
				const void *base)
{
	const void *p = c->global ?: base + c->off;

	switch (c->size) {
	case 1:
		return READ_ONCE(*(const u8 *)p);
	case 4:
		return c->sgn ? (s64)READ_ONCE(*(const s32 *)p) :
				(s64)READ_ONCE(*(const u32 *)p);
	default:
		return READ_ONCE(*(const unsigned long *)p);
	}
}

/*
 * The namespace's TCP sysctls that differ from a new namespace's (and
 * tcp_rmem, tcp_wmem, and the host's rmem_max), as CONFIG SYSCTL events,
 * in the units the sysctl shows, when @ds. Return: a digest of those TCP
 * reads once established.
 */
static u64 deter_rec_sysctls(struct deter_sock *ds, const struct sock *sk)
{
	const void *base = &sock_net(sk)->ipv4;
	const struct deter_rec_sysctl *c;
	u64 sum = 0;
	u32 id;
	s64 v;

	for (id = 0; id < ARRAY_SIZE(deter_rec_sysctl); id++) {
		c = &deter_rec_sysctl[id];
		v = deter_rec_sysctl_get(c, base);
		if (!c->setup)
			sum = deter_rec_sum(sum, v);
		if (!ds || (c->def != DETER_SYSCTL_ALWAYS && v == c->def))
			continue;
		if (c->unit == DETER_REC_SC_SEC)
			v = div_s64(v, HZ);
		else if (c->unit == DETER_REC_SC_MS)
			v = jiffies_to_msecs(v);
		deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_SYSCTL,
			       (u64)id << 32 | (u32)v, 0, 0);
	}
	return sum;
}

/*
 * The metrics of @sk's route that TCP reads, as CONFIG SYSCTL ROUTE_*
 * events when @ds, where the route sets them (TCP reads them at the
 * start: initial windows, MSS, cached metrics; initcwnd again after an
 * idle period, rto_min at every RTT sample). Those TCP takes only locked,
 * only when locked. Return: a digest of those it reads once established,
 * never 0, or 0 when @sk has no route (TCP dropped it, to look it up
 * again at its next send).
 */
static u64 deter_rec_route(struct deter_sock *ds, struct sock *sk)
{
	/* established: TCP reads it after the start too */
	static const struct {
		u8 id, rtax;
		bool locked, established;
	} m[] = {
		{ DETER_SYSCTL_ROUTE_INITCWND, RTAX_INITCWND, false, true },
		{ DETER_SYSCTL_ROUTE_INITRWND, RTAX_INITRWND, false, false },
		{ DETER_SYSCTL_ROUTE_WINDOW, RTAX_WINDOW, false, false },
		{ DETER_SYSCTL_ROUTE_ADVMSS, RTAX_ADVMSS, false, false },
		{ DETER_SYSCTL_ROUTE_RTO_MIN, RTAX_RTO_MIN, true, true },
		{ DETER_SYSCTL_ROUTE_CWND, RTAX_CWND, true, false },
		{ DETER_SYSCTL_ROUTE_SSTHRESH, RTAX_SSTHRESH, true, false },
		{ DETER_SYSCTL_ROUTE_REORDERING, RTAX_REORDERING, true, false },
	};
	struct dst_entry *dst = sk_dst_get(sk);
	unsigned int i;
	u64 sum = 0;
	u32 v;

	if (!dst)
		return 0;
	for (i = 0; i < ARRAY_SIZE(m); i++) {
		v = dst_metric_raw(dst, m[i].rtax);
		if (!v || (m[i].locked && !dst_metric_locked(dst, m[i].rtax)))
			continue;
		if (m[i].established)
			sum = deter_rec_sum(sum, (u64)m[i].id << 32 | v);
		if (ds)
			deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_SYSCTL,
				       (u64)m[i].id << 32 | v, 0, 0);
	}
	dst_release(dst);
	return sum | 1;
}

/*
 * Congestion-control module parameters (enum deter_sysctl from
 * DETER_SYSCTL_CUBIC_FAST_CONVERGENCE on): global, and static to their
 * modules, so deter record reads them from sysfs and writes them here
 * (control "param ID VALUE"); until it does, 6.12's defaults.
 */
static const u32 deter_rec_param_def[DETER_PARAMS] = DETER_PARAM_DEFAULTS;

static u32 deter_rec_param[DETER_PARAMS] __read_mostly = DETER_PARAM_DEFAULTS;

/* "ID VALUE": set parameter ID (enum deter_sysctl) to VALUE, an int or uint. */
static int deter_rec_param_set(char *p)
{
	char *tok = strsep(&p, " ");
	unsigned int id;
	long long v;

	if (!tok || kstrtouint(tok, 0, &id) || !p || kstrtoll(p, 0, &v) ||
	    id < DETER_PARAM_FIRST || id >= DETER_SYSCTL_MAX ||
	    v < S32_MIN || v > U32_MAX)
		return -EINVAL;
	WRITE_ONCE(deter_rec_param[id - DETER_PARAM_FIRST], (u32)v);
	return 0;
}

/* Each congestion control's parameters, enum deter_sysctl first..last. */
static const struct {
	const char *cc;
	u8 first, last;
} deter_rec_cc_params[] = {
	{ "cubic", DETER_SYSCTL_CUBIC_FAST_CONVERGENCE,
	  DETER_SYSCTL_CUBIC_HYSTART_ACK_DELTA_US },
	{ "dctcp", DETER_SYSCTL_DCTCP_SHIFT_G, DETER_SYSCTL_DCTCP_ALPHA_ON_INIT },
	{ "bic", DETER_SYSCTL_BIC_FAST_CONVERGENCE, DETER_SYSCTL_BIC_SMOOTH_PART },
	{ "htcp", DETER_SYSCTL_HTCP_USE_RTT_SCALING,
	  DETER_SYSCTL_HTCP_USE_BANDWIDTH_SWITCH },
	{ "vegas", DETER_SYSCTL_VEGAS_ALPHA, DETER_SYSCTL_VEGAS_GAMMA },
	{ "hybla", DETER_SYSCTL_HYBLA_RTT0, DETER_SYSCTL_HYBLA_RTT0 },
	{ "nv", DETER_SYSCTL_NV_PAD, DETER_SYSCTL_NV_MIN_CWND },
	{ "cdg", DETER_SYSCTL_CDG_WINDOW, DETER_SYSCTL_CDG_USE_TOLERANCE },
};

/*
 * The parameters not at their defaults, as CONFIG SYSCTL events when
 * @ds. Return: a digest of those of @sk's congestion control.
 */
static u64 deter_rec_params(struct deter_sock *ds, const struct sock *sk)
{
	const char *cc = inet_csk(sk)->icsk_ca_ops->name;
	unsigned int i, first = 0, last = 0;
	u64 sum = 0;
	u32 v;

	for (i = 0; i < ARRAY_SIZE(deter_rec_cc_params); i++) {
		if (!strcmp(cc, deter_rec_cc_params[i].cc)) {
			first = deter_rec_cc_params[i].first - DETER_PARAM_FIRST;
			last = deter_rec_cc_params[i].last - DETER_PARAM_FIRST + 1;
			break;
		}
	}
	for (i = ds ? 0 : first; i < (ds ? DETER_PARAMS : last); i++) {
		v = READ_ONCE(deter_rec_param[i]);
		if (i >= first && i < last)
			sum = deter_rec_sum(sum, v);
		if (ds && v != deter_rec_param_def[i])
			deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_SYSCTL,
				       (u64)(DETER_PARAM_FIRST + i) << 32 | v,
				       0, 0);
	}
	return sum;
}

/*
 * The settings TCP reads that are not the socket's own (its namespace's
 * sysctls, the host's rmem_max, its route's metrics, the congestion
 * controls' module parameters), as CONFIG SYSCTL events, and digests of
 * those it reads once established, to be compared with them later
 * (deter_rec_settings_check()).
 */
static void deter_rec_settings(struct deter_sock *ds, struct sock *sk)
{
	ds->cfg[DETER_CFG_SYSCTL] = deter_rec_sysctls(ds, sk);
	ds->param_sum = deter_rec_params(ds, sk);
	ds->param_cc = inet_csk(sk)->icsk_ca_ops;
	ds->route_sum = deter_rec_route(ds, sk);
	ds->settings_next = jiffies + DETER_REC_SETTINGS_EVERY;
}

/*
 * Did a setting deter_rec_settings() logged change since? Then what the
 * connection did since its last look depended on one not logged where
 * TCP read it: say so (VALUE MISSING SETTINGS: the log has every event,
 * but not when TCP first read the new value), then log them all again,
 * for the reader to name what changed. At checkpoints, at least
 * DETER_REC_SETTINGS_EVERY apart, and at the end (@force). A change and
 * its undoing between two looks go unseen.
 */
static void deter_rec_settings_check(struct deter_sock *ds, struct sock *sk,
				     bool force)
{
	u64 route, params;

	if (!ds->conn_sent ||
	    (!force && time_before(jiffies, ds->settings_next)))
		return;
	ds->settings_next = jiffies + DETER_REC_SETTINGS_EVERY;
	/* No route (TCP looks it up again at its next send): next time. */
	route = deter_rec_route(NULL, sk);
	if (!route)
		return;
	/* A first route, another congestion control (logged): from here. */
	if (!ds->route_sum)
		ds->route_sum = route;
	params = deter_rec_params(NULL, sk);
	if (ds->param_cc != inet_csk(sk)->icsk_ca_ops) {
		ds->param_cc = inet_csk(sk)->icsk_ca_ops;
		ds->param_sum = params;
	}
	if (deter_rec_sysctls(NULL, sk) == ds->cfg[DETER_CFG_SYSCTL] &&
	    params == ds->param_sum && route == ds->route_sum)
		return;
	deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING,
		       DETER_MISSING_SETTINGS, 0, 0);
	deter_rec_settings(ds, sk);
}

static void deter_rec_conn(struct deter_sock *ds, struct sock *sk,
			   bool active)
{
	const struct inet_sock *inet = inet_sk(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 flags = deter_conn_negotiated(tp);
	unsigned long irqflags;

	if (ds->conn_sent)
		return;
	ds->conn_sent = true;
	deter_conn_hash(ds);
	if (active)
		flags |= DETER_CONN_ACTIVE;
	/* After the events numbered before it, as deter_rec_state_ev(). */
	spin_lock_irqsave(&ds->ev_lock, irqflags);
	__deter_rec_ev_flush(ds);
	trace_deter_conn(ds->conn, atomic_inc_return(&ds->seq),
			 inet->inet_saddr, inet->inet_daddr, inet->inet_sport,
			 inet->inet_dport, sock_net(sk)->ns.inum,
			 tp->snd_nxt - 1, tp->rcv_nxt - 1,
			 (u16)atomic_read(&inet->inet_id), flags,
			 tp->mss_cache,
			 tp->rx_opt.snd_wscale << 4 | tp->rx_opt.rcv_wscale,
			 tp->tsoffset, ktime_get_real_ns(), ktime_get_ns(),
			 inet_csk(sk)->icsk_ca_ops->name);
	spin_unlock_irqrestore(&ds->ev_lock, irqflags);
	deter_rec_settings(ds, sk);
	/*
	 * Its SYN asked for a Fast Open cookie or had one (the peer's log
	 * says so from the SYN: deter_rec_synack_emit()).
	 */
	if (active && (tp->syn_fastopen || tp->syn_data))
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING,
			       DETER_MISSING_FASTOPEN, 0, 0);
}

/* The offloads of the device @sk's route leaves by, DETER_OFFLOAD_*. */
static u64 deter_rec_offload(const struct sock *sk)
{
	const struct dst_entry *dst;
	netdev_features_t f = 0;
	u64 mtu = 0;

	rcu_read_lock();
	dst = __sk_dst_get((struct sock *)sk);
	if (dst && dst_dev_rcu(dst)) {
		f = READ_ONCE(dst_dev_rcu(dst)->features);
		mtu = dst_mtu(dst) & 0xffff;
	}
	rcu_read_unlock();
	if (!dst)
		return 0;
	return DETER_OFFLOAD_KNOWN | mtu << 32 |
	       (f & NETIF_F_TSO ? DETER_OFFLOAD_TSO : 0) |
	       (f & NETIF_F_GSO ? DETER_OFFLOAD_GSO : 0) |
	       (f & NETIF_F_GRO ? DETER_OFFLOAD_GRO : 0);
}

/* SO_KEEPALIVE and TCP_KEEP*, DETER_KA_PACK()ed; seconds. */
static u64 deter_rec_keepalive(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return DETER_KA_PACK(sock_flag(sk, SOCK_KEEPOPEN),
			     READ_ONCE(tp->keepalive_probes),
			     READ_ONCE(tp->keepalive_intvl) / HZ,
			     READ_ONCE(tp->keepalive_time) / HZ);
}

/* SO_LINGER: on | seconds << 1. */
static u64 deter_rec_linger(const struct sock *sk)
{
	u64 secs = READ_ONCE(sk->sk_lingertime) / HZ;

	return sock_flag(sk, SOCK_LINGER) | min_t(u64, secs, U32_MAX) << 1;
}

/*
 * SO_RCVTIMEO/SO_SNDTIMEO as DETER_TCPOPT_RCVTIMEO has it: 0 for none,
 * else 1 + the timeout in us (1: calls do not wait at all), at most
 * DETER_TCPOPT_VAL_MASK.
 */
static u64 deter_rec_timeo(long timeo)
{
	const u64 max = (DETER_TCPOPT_VAL_MASK - 1) / USEC_PER_SEC * HZ;

	if (timeo == MAX_SCHEDULE_TIMEOUT)
		return 0;
	if (timeo <= 0)
		return 1;
	if ((u64)timeo >= max)
		return DETER_TCPOPT_VAL_MASK;
	return 1 + mul_u64_u32_div(timeo, USEC_PER_SEC, HZ);
}

/* A congestion control's name as DETER_CFG_CC has it. */
static u64 deter_rec_cc(const char *name)
{
	u64 v = 0;
	int i;

	for (i = 0; i < DETER_CC_BYTES && name[i]; i++)
		v |= (u64)(u8)name[i] << (8 * i);
	return v;
}

/* Record configuration item @i if it is not @v any more. */
static void deter_rec_cfg(struct deter_sock *ds, enum deter_cfg i, u64 v)
{
	if (likely(ds->cfg[i] == v))
		return;
	ds->cfg[i] = v;
	deter_rec_emit(ds, DETER_EV_CONFIG, i, v, 0, 0);
}

/* The same for TCP option @i (DETER_CFG_TCP). */
static void deter_rec_tcpopt(struct deter_sock *ds, enum deter_tcpopt i, u64 v)
{
	if (likely(ds->tcpopt[i] == v))
		return;
	ds->tcpopt[i] = v;
	deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_TCP, DETER_TCPOPT_PACK(i, v),
		       0, 0);
}

/* Calls reached @sk past deter's hooks: the log is incomplete from here on. */
static void deter_rec_unseen(struct deter_sock *ds)
{
	if (ds->unseen_calls)
		return;
	ds->unseen_calls = true;
	deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING, DETER_MISSING_CALLS,
		       0, 0);
}

/*
 * Whether the application's calls on @sk go through a layer above TCP
 * that calls TCP past deter's hooks: a ULP (kTLS, MPTCP's subflows,
 * espintcp) or a BPF sockmap, which replace sk_prot (tcpv6_prot has
 * TCP's own recvmsg and sendmsg, as tcp_prot does).
 */
static bool deter_rec_other_layer(const struct sock *sk)
{
	const struct proto *prot = READ_ONCE(sk->sk_prot);

	return READ_ONCE(inet_csk(sk)->icsk_ulp_ops) ||
	       prot->recvmsg != tcp_prot.recvmsg ||
	       prot->sendmsg != tcp_prot.sendmsg;
}

/*
 * Before a read call, shutdown or close, with no read under way: bytes
 * read since the last read call returned were read past deter's hooks
 * (TCP_ZEROCOPY_RECEIVE, a kernel reader's tcp_read_sock(), a sockmap's
 * tcp_read_skb()). tcp_check_urg() steps over the urgent byte at the
 * read point on its own.
 */
static void deter_rec_reads_seen(struct deter_sock *ds, const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 moved = READ_ONCE(tp->copied_seq) - ds->rd_end;

	if (!ds->rd_known || ds->rd_open || !moved)
		return;
	if (moved == 1 && tp->urg_seq == ds->rd_end) {
		ds->rd_end++;
		return;
	}
	deter_rec_unseen(ds);
}

/*
 * Record socket configuration that changed since the last socket call:
 * what setsockopt() sets and TCP reads, not what TCP tunes itself
 * (inet->tos's ECN bits, the buffers' autotuning is replayed anyway).
 * Items in enum order (SYSCTL: the namespace's, logged at the start),
 * then TCP options; one compare each, as it runs at every socket call.
 */
static void deter_rec_config(struct deter_sock *ds, const struct sock *sk)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	const struct inet_sock *inet = inet_sk(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	int ttl = READ_ONCE(inet->uc_ttl);
	int linger2 = READ_ONCE(tp->linger2);

	BUILD_BUG_ON(ARRAY_SIZE(ds->cfg) != DETER_CFG_MAX);
	BUILD_BUG_ON(DETER_CFG_MAX > 16);

	deter_rec_cfg(ds, DETER_CFG_SNDBUF, READ_ONCE(sk->sk_sndbuf));
	deter_rec_cfg(ds, DETER_CFG_RCVBUF, READ_ONCE(sk->sk_rcvbuf));
	deter_rec_cfg(ds, DETER_CFG_NODELAY, tp->nonagle);
	deter_rec_cfg(ds, DETER_CFG_USER_MSS, tp->rx_opt.user_mss);
	deter_rec_cfg(ds, DETER_CFG_OFFLOAD, deter_rec_offload(sk));
	deter_rec_cfg(ds, DETER_CFG_USERLOCKS,
		      (sk->sk_userlocks & SOCK_SNDBUF_LOCK ? DETER_LOCK_SNDBUF : 0) |
		      (sk->sk_userlocks & SOCK_RCVBUF_LOCK ? DETER_LOCK_RCVBUF : 0));
	deter_rec_cfg(ds, DETER_CFG_TOS, READ_ONCE(inet->tos) & ~INET_ECN_MASK);
	deter_rec_cfg(ds, DETER_CFG_TTL, ttl < 0 ? 0 : ttl);
	deter_rec_cfg(ds, DETER_CFG_KEEPALIVE, deter_rec_keepalive(sk));
	deter_rec_cfg(ds, DETER_CFG_USER_TIMEOUT, READ_ONCE(icsk->icsk_user_timeout));
	deter_rec_cfg(ds, DETER_CFG_NOTSENT_LOWAT, READ_ONCE(tp->notsent_lowat));
	deter_rec_cfg(ds, DETER_CFG_RCVLOWAT, READ_ONCE(sk->sk_rcvlowat));
	deter_rec_cfg(ds, DETER_CFG_LINGER, deter_rec_linger(sk));
	/*
	 * The application's choice only, by a name it can ask for: dctcp
	 * without ECN falls back to an unregistered "dctcp-reno" (key 0).
	 */
	if (icsk->icsk_ca_setsockopt && icsk->icsk_ca_ops && icsk->icsk_ca_ops->key)
		deter_rec_cfg(ds, DETER_CFG_CC, deter_rec_cc(icsk->icsk_ca_ops->name));

	deter_rec_tcpopt(ds, DETER_TCPOPT_THIN_LTO, tp->thin_lto);
	deter_rec_tcpopt(ds, DETER_TCPOPT_SYNCNT, READ_ONCE(icsk->icsk_syn_retries));
	deter_rec_tcpopt(ds, DETER_TCPOPT_LINGER2,
			 (u32)(linger2 < 0 ? -1 : linger2 / HZ));
	deter_rec_tcpopt(ds, DETER_TCPOPT_TX_DELAY, READ_ONCE(tp->tcp_tx_delay));
	deter_rec_tcpopt(ds, DETER_TCPOPT_MAX_PACING_RATE,
			 min_t(u64, READ_ONCE(sk->sk_max_pacing_rate),
			       DETER_TCPOPT_RATE_MAX));
	deter_rec_tcpopt(ds, DETER_TCPOPT_PRIORITY, READ_ONCE(sk->sk_priority));
	deter_rec_tcpopt(ds, DETER_TCPOPT_MARK, READ_ONCE(sk->sk_mark));
	deter_rec_tcpopt(ds, DETER_TCPOPT_RCVTIMEO,
			 deter_rec_timeo(READ_ONCE(sk->sk_rcvtimeo)));
	deter_rec_tcpopt(ds, DETER_TCPOPT_SNDTIMEO,
			 deter_rec_timeo(READ_ONCE(sk->sk_sndtimeo)));

	if (unlikely(!ds->unseen_calls && deter_rec_other_layer(sk)))
		deter_rec_unseen(ds);
}

/*
 * A timer handler about to run finds its timer re-armed to a later time
 * (the owner moved it while the timer waited for the lock) and only arms
 * it again: tcp_write_timer_handler(), tcp_delack_timer_handler(). They
 * compare with jiffies the replay cannot reproduce, so the log says.
 */
static bool deter_rec_not_due(const struct sock *sk, enum deter_site site)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);

	if (site == DETER_SITE_LOCK_WRITE_TIMER)
		return icsk->icsk_pending &&
		       time_after(icsk->icsk_timeout, jiffies);
	if (site == DETER_SITE_LOCK_DELACK_TIMER)
		return !tcp_sk(sk)->compressed_ack &&
		       (icsk->icsk_ack.pending & ICSK_ACK_TIMER) &&
		       time_after(icsk->icsk_ack.timeout, jiffies);
	return false;
}

/*
 * The handlers tcp_release_cb() runs for the owner, in its order, by the
 * sk_tsq_flags bit their timer, tasklet or ICMP error set (the SACK
 * compression hrtimer sets the delayed-ACK timer's). ACK_DEFERRED the
 * owner sets itself.
 */
static const struct {
	u8 bit;
	u8 lock;
} deter_rec_deferred[] = {
	{ TCP_TSQ_DEFERRED, DETER_LOCK_TSQ },
	{ TCP_WRITE_TIMER_DEFERRED, DETER_LOCK_WRITE_TIMER },
	{ TCP_DELACK_TIMER_DEFERRED, DETER_LOCK_DELACK_TIMER },
	{ TCP_MTU_REDUCED_DEFERRED, DETER_LOCK_MTU_REDUCED },
};

/*
 * The owner is about to run the handlers deferred to it (tcp_release_cb(),
 * spinlock held: no bit can be set until it has taken them). Each is
 * logged here, where it runs: when its timer fired decides only which of
 * the owner's calls to tcp_release_cb() found it, which this places.
 */
static void deter_rec_sk_deferred(struct deter_sock *ds, struct sock *sk)
{
	unsigned long flags = READ_ONCE(sk->sk_tsq_flags);
	bool first = true;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(deter_rec_deferred); i++) {
		if (!(flags & BIT(deter_rec_deferred[i].bit)))
			continue;
		if (first)
			deter_rec_jiffies(ds);
		first = false;
		deter_rec_emit(ds, DETER_EV_LOCK, deter_rec_deferred[i].lock,
			       DETER_LOCK_F_DEFERRED, 0, 0);
	}
}

void deter_rec_sk_lock(struct sock *sk, enum deter_site site)
{
	struct deter_sock *ds = deter_rec_get(sk);
	u32 seq;
	u64 a;

	if (!ds) {
		deter_rec_jif_clear();
		return;
	}
	if (WARN_ON_ONCE(site >= DETER_SITE_MAX))
		return;
	if (site == DETER_SITE_LOCK_DEFERRED) {
		deter_rec_sk_deferred(ds, sk);
		return;
	}
	/*
	 * A timer or tasklet that finds the socket owned only sets a bit
	 * (the keepalive timer only re-arms): logged where the owner runs
	 * the handler, deter_rec_sk_deferred().
	 */
	if (site != DETER_SITE_LOCK_APP && site != DETER_SITE_LOCK_BACKLOG &&
	    sock_owned_by_user(sk))
		return;
	deter_rec_jiffies(ds);
	if (site == DETER_SITE_LOCK_APP)
		ds->bl_checks = 0;
	/* A backlog batch is logged with the owner's check that took it. */
	if (site == DETER_SITE_LOCK_BACKLOG)
		a = ds->bl_checks;
	else
		a = deter_rec_not_due(sk, site) ? DETER_LOCK_F_NOT_DUE : 0;
	seq = deter_rec_emit(ds, DETER_EV_LOCK, deter_rec_lock_abi[site],
			     a, 0, 0);
	if (site == DETER_SITE_LOCK_APP)
		deter_rec_config(ds, sk);
	deter_rec_checkpoint(ds, sk, seq);
}

/*
 * The owner of @sk is about to look at its backlog (release_sock() or
 * deter_sk_backlog_check()). Counted per ownership, so a replay can tell
 * at which of its checks the owner found each batch.
 */
void deter_rec_backlog_check(struct sock *sk)
{
	struct deter_sock *ds = deter_rec_get(sk);

	if (ds)
		ds->bl_checks++;
}

/**
 * deter_rec_tsval() - the TS value of a received segment
 * @th: its TCP header, options included, in linear data
 * @tsval: set to the TS value
 *
 * Walks the options as tcp_parse_options() does, stopping at a malformed
 * one. The segment comes from the network: nothing is read past the
 * header's doff.
 *
 * Return: true if @th has a timestamp option.
 */
VISIBLE_IF_KUNIT bool deter_rec_tsval(const struct tcphdr *th, u32 *tsval)
{
	const u8 *p = (const u8 *)(th + 1), *end = (const u8 *)th + th->doff * 4;

	while (p < end) {
		if (*p == TCPOPT_EOL)
			break;
		if (*p == TCPOPT_NOP) {
			p++;
			continue;
		}
		if (end - p < 2 || p[1] < 2 || p[1] > end - p)
			break;
		if (*p == TCPOPT_TIMESTAMP && p[1] == TCPOLEN_TIMESTAMP) {
			*tsval = get_unaligned_be32(p + 2);
			return true;
		}
		p += p[1];
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_tsval);

/*
 * A segment the peer host's control socket sent for a socket that no
 * longer holds the connection: its time-wait socket's ACK, or a reset.
 * Such a segment has IP ID 0 (ip_send_unicast_reply()), no SYN and no
 * data, and does not come where the peer's IP ID series is (a segment of
 * the series whose ID happens to be 0 does, unless one before it was
 * lost or it came late).
 */
static bool deter_rec_rx_ctl(const struct deter_sock *ds,
			     const struct sk_buff *skb, const struct tcphdr *th,
			     u16 id, u64 idx)
{
	return !id && idx != ds->rx_next && skb->len == th->doff * 4;
}

void deter_rec_sk_rx(struct sock *sk, const struct sk_buff *skb)
{
	struct deter_sock *ds = deter_rec_get(sk);
	const struct tcphdr *th;
	const struct iphdr *iph;
	u64 idx = 0, segs;
	u32 flags, seq, tsval;

	if (!ds) {
		deter_rec_jif_clear();
		return;
	}
	if (skb->protocol != htons(ETH_P_IP))
		return;
	deter_rec_jiffies(ds);
	iph = ip_hdr(skb);
	th = (const struct tcphdr *)skb->data;
	flags = iph->tos & INET_ECN_MASK;
	if (sock_owned_by_user(sk))
		flags |= DETER_RX_OWNED;
	if (th->syn) {
		seq = deter_rec_emit(ds, DETER_EV_RX, 0, 0,
				     flags | DETER_RX_SYN, 0);
		if (!(flags & DETER_RX_OWNED))
			deter_rec_checkpoint(ds, sk, seq);
		return;
	}

	segs = deter_conn_rx_segs(skb);
	if (!ds->rx_primed) {
		idx = ntohs(iph->id);
		ds->rx_next = idx;
		ds->rx_primed = true;
	} else {
		idx = deter_ipid_extend(ds->rx_ref, ntohs(iph->id));
		if (deter_rec_rx_ctl(ds, skb, th, ntohs(iph->id), idx)) {
			/* Not in the series: logged where the series is. */
			seq = deter_rec_emit(ds, DETER_EV_RX, 0, ds->rx_next,
					     flags | DETER_RX_CTL,
					     deter_rec_tsval(th, &tsval) ?
					     (u64)tsval + 1 : 0);
			goto out;
		}
	}
	ds->rx_ref = idx;
	seq = deter_rec_emit(ds, DETER_EV_RX, 0, idx, flags, segs);

	switch (deter_ipid_classify(ds->rx_next, idx)) {
	case DETER_IPID_GAP:
		deter_rec_emit(ds, DETER_EV_NET, DETER_NET_GAP, ds->rx_next,
			       idx - ds->rx_next, 0);
		fallthrough;
	case DETER_IPID_NEXT:
		ds->rx_next = idx + segs;
		break;
	case DETER_IPID_LATE:
		deter_rec_emit(ds, DETER_EV_NET, DETER_NET_LATE, idx, segs, 0);
		break;
	}
	if (INET_ECN_is_ce(iph->tos))
		deter_rec_emit(ds, DETER_EV_NET, DETER_NET_CE, idx, segs, 0);
out:
	if (!th->window)
		ds->rx_zero_wnd++;
	/* Not while a process owns the socket: it is changing its state. */
	if (!(flags & DETER_RX_OWNED))
		deter_rec_checkpoint(ds, sk, seq);
}

/* A call that reads the receive queue through deter's hooks. */
static bool deter_rec_is_read(enum deter_call call)
{
	return call == DETER_CALL_RECVMSG || call == DETER_CALL_SPLICE_READ;
}

void deter_rec_sk_call(struct sock *sk, enum deter_call call, u64 arg,
		       u32 flags)
{
	struct deter_sock *ds = deter_rec_get(sk);

	if (!ds || WARN_ON_ONCE(call >= DETER_CALL_MAX))
		return;
	if (deter_rec_is_read(call) || call == DETER_CALL_SHUTDOWN ||
	    call == DETER_CALL_CLOSE)
		deter_rec_reads_seen(ds, sk);
	if (deter_rec_is_read(call))
		ds->rd_open++;
	deter_rec_emit(ds, DETER_EV_CALL, deter_rec_call_abi[call], arg,
		       (u64)flags << 32 | (u32)task_pid_nr(current), 0);
}

void deter_rec_sk_call_done(struct sock *sk, enum deter_call call, s64 ret,
			    u64 pages)
{
	struct deter_sock *ds = deter_rec_get(sk);
	u32 seq;

	if (!ds || WARN_ON_ONCE(call >= DETER_CALL_MAX))
		return;
	/* The last read under way returned (or one deter did not see start). */
	if (deter_rec_is_read(call) && (!ds->rd_open || !--ds->rd_open))
		ds->rd_end = READ_ONCE(tcp_sk(sk)->copied_seq);
	seq = deter_rec_emit(ds, DETER_EV_CALL_DONE, deter_rec_call_abi[call],
			     (u64)ret, pages, 0);
	/* A read of the error queue does not own the socket: no state. */
	if (call != DETER_CALL_RECV_ERRQUEUE)
		deter_rec_checkpoint(ds, sk, seq);
}

/**
 * deter_rec_sk_icmp() - an ICMP error reached a recorded socket
 * @sk: the socket, its spinlock held (it may be owned)
 * @skb: the ICMP message; its data is the IP header it quotes
 * @info: the next-hop MTU of a fragmentation-needed error, else 0
 */
void deter_rec_sk_icmp(struct sock *sk, const struct sk_buff *skb, u32 info)
{
	struct deter_sock *ds = deter_rec_get(sk);
	const struct icmphdr *ih = icmp_hdr(skb);
	const struct iphdr *iph = (const struct iphdr *)skb->data;
	const struct tcphdr *th;
	u32 quoted;

	if (!ds) {
		deter_rec_jif_clear();
		return;
	}
	deter_rec_jiffies(ds);
	/* tcp_v4_err() read the quoted header's first 8 bytes: they are there. */
	th = (const struct tcphdr *)(skb->data + (iph->ihl << 2));
	quoted = ntohl(th->seq) - tcp_sk(sk)->snd_una;
	deter_rec_emit(ds, DETER_EV_NET, DETER_NET_ICMP,
		       (sock_owned_by_user(sk) ? DETER_ICMP_F_OWNED : 0) |
		       (u64)ih->type << 8 | ih->code, (u64)info << 32 | quoted,
		       0);
}

/**
 * deter_rec_clone() - a passive connection's child socket was created
 * @newsk: the child
 * @skb: the ACK that completed the handshake
 *
 * The peer's next IP ID follows that ACK's.
 */
void deter_rec_clone(struct sock *newsk, const struct sk_buff *skb)
{
	struct deter_sock *ds = deter_conn_get(newsk);
	unsigned long now;

	if (!ds)
		return;
	ds->child = true;
	/*
	 * tcp_create_openreq_child() stamped the child with the jiffies
	 * this context read, held or live: its log starts from that value.
	 */
	now = jiffies;
	deter_rec_jif_set(now - (u32)((u32)now - tcp_sk(newsk)->lsndtime));
	deter_rec_select(ds, newsk, skb->protocol == htons(ETH_P_IP));
	if (skb->protocol == htons(ETH_P_IP)) {
		ds->rx_ref = ntohs(ip_hdr(skb)->id);
		ds->child_ipid = ds->rx_ref;
		/* A GRO packet: the IDs of all its segments. */
		ds->child_segs = deter_conn_rx_segs(skb);
		ds->rx_next = ds->rx_ref + ds->child_segs;
		ds->rx_primed = true;
		/* TCP Fast Open: a SYN created it; SYNs are not arrivals. */
		ds->child_syn = tcp_hdr(skb)->syn;
	}
}

/**
 * deter_rec_close() - a recorded socket is being destroyed
 * @ds: its state
 * @sk: the socket
 *
 * Emits the last send-time sample and the end-of-connection summary.
 */
void deter_rec_close(struct deter_sock *ds, struct sock *sk)
{
	struct deter_sample smp;
	bool flushed;

	if (!READ_ONCE(ds->rec))
		return;
	if (ds->child && !ds->established) {
		/*
		 * Another CPU's child for the same request won the race to
		 * the established hash (inet_ehash_nolisten()), and this
		 * one never ran: tell the recorder to forget it.
		 */
		deter_rec_state_ev(ds, sk, DETER_STATE_DISCARD, 0);
		WRITE_ONCE(ds->rec, false);
		return;
	}
	/*
	 * Recording stopped: the hooks have emitted nothing since
	 * (deter_rec_get()), so the log may lack events before this close.
	 * No summary: the recorder writes it not closed, never complete.
	 */
	if (!READ_ONCE(deter_rec_armed)) {
		WRITE_ONCE(ds->rec, false);
		return;
	}
	deter_rec_conn(ds, sk, false);
	spin_lock_bh(&ds->tx_lock);
	flushed = deter_sampler_flush(&ds->sampler, &smp);
	spin_unlock_bh(&ds->tx_lock);
	if (flushed)
		deter_rec_emit(ds, DETER_EV_SAMPLE, 0, smp.idx, smp.ns,
			       smp.gap_q10);
	deter_rec_settings_check(ds, sk, true);
	deter_rec_state_ev(ds, sk, DETER_STATE_SUMMARY, ds->rx_zero_wnd);
	WRITE_ONCE(ds->rec, false);
}

/**
 * deter_rec_lost() - tell the recorder a socket could not be tracked
 * @sk: the socket
 * @reason: enum deter_rec_lost_reason
 */
void deter_rec_lost(const struct sock *sk, u32 reason)
{
	if (READ_ONCE(deter_rec_armed))
		trace_deter_lost(0, reason);
}

/*
 * The connection a departing packet belongs to: its socket, or, when a
 * qdisc orphaned it (netem does while it holds packets), its 4-tuple in
 * the device's namespace, so a forwarding hop never matches.
 */
static struct deter_sock *deter_rec_tx_conn(const struct sk_buff *skb,
					    const struct net_device *dev)
{
	const struct tcphdr *th;
	const struct iphdr *iph;
	struct deter_sock *ds;

	if (skb->sk) {
		ds = deter_rec_get(skb->sk);
		if (ds && !ds->hashed)
			deter_conn_hash(ds);
		return ds;
	}
	if (!READ_ONCE(deter_rec_armed) || !skb_transport_header_was_set(skb))
		return NULL;
	iph = ip_hdr(skb);
	if (iph->protocol != IPPROTO_TCP)
		return NULL;
	th = tcp_hdr(skb);
	ds = deter_conn_lookup(dev_net(dev), iph->saddr, iph->daddr, th->source,
			       th->dest);
	if (ds && READ_ONCE(ds->rec)) {
		atomic64_inc(&deter_rec_tx_orphan);
		return ds;
	}
	return NULL;
}

/* net_dev_start_xmit: a packet is handed to the device. */
static void deter_rec_xmit(void *data, const struct sk_buff *skb,
			   const struct net_device *dev)
{
	struct deter_sample smp;
	struct deter_sock *ds;
	u64 idx, now;
	bool out;

	if (skb->protocol != htons(ETH_P_IP))
		return;
	rcu_read_lock();
	ds = deter_rec_tx_conn(skb, dev);
	if (!ds)
		goto out_unlock;
	atomic64_inc(&deter_rec_tx_pkts);
	now = ktime_get_ns();
	spin_lock(&ds->tx_lock);
	idx = ntohs(ip_hdr(skb)->id);
	if (ds->tx_primed)
		idx = deter_ipid_extend(ds->tx_ref, idx);
	ds->tx_ref = idx;
	ds->tx_primed = true;
	out = deter_sampler_add(&ds->sampler, idx, now, &smp);
	spin_unlock(&ds->tx_lock);
	if (out)
		deter_rec_emit(ds, DETER_EV_SAMPLE, 0, smp.idx, smp.ns,
			       smp.gap_q10);
out_unlock:
	rcu_read_unlock();
}

/* A connecting socket's peer is IPv4: AF_INET, or v4-mapped AF_INET6. */
static bool deter_rec_ipv4(const struct sock *sk)
{
	if (sk->sk_family == AF_INET)
		return true;
#if IS_ENABLED(CONFIG_IPV6)
	return ipv6_addr_v4mapped(&sk->sk_v6_daddr);
#else
	return false;
#endif
}

/* inet_sock_set_state: connections start recording here. */
static void deter_rec_state(void *data, const struct sock *csk, int oldstate,
			    int newstate)
{
	struct sock *sk = (struct sock *)csk;
	struct deter_sock *ds = deter_conn_get(sk);

	if (!ds)
		return;
	if (newstate == TCP_ESTABLISHED) {
		ds->established = true;
		if (deter_replay_active())
			deter_replay_established(sk);
	}
	if (oldstate == TCP_CLOSE && newstate == TCP_SYN_SENT) {
		deter_rec_select(ds, sk, deter_rec_ipv4(sk));
	} else if (newstate == TCP_ESTABLISHED && READ_ONCE(ds->rec)) {
		/* Only the child that won the handshake gets here. */
		if (ds->child)
			deter_rec_synack_emit(ds, sk);
		ds->rd_end = READ_ONCE(tcp_sk(sk)->copied_seq);
		ds->rd_known = true;
		deter_rec_conn(ds, sk, oldstate == TCP_SYN_SENT);
	}
}

static void deter_rec_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "net_dev_start_xmit"))
		deter_rec_tp_xmit = tp;
	else if (!strcmp(tp->name, "inet_sock_set_state"))
		deter_rec_tp_state = tp;
}

/*
 * control: "record [threshold_ns [port...]]" arms recording of new
 * connections; "replay" arms replay of the scripts loaded into
 * deter/replay; "stop" disarms both (and drops the scripts); "param ID
 * VALUE" sets a congestion-control module parameter deter_rec_params()
 * logs. Reading shows the state.
 */
static ssize_t deter_rec_ctl_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	unsigned int th = DETER_SAMPLE_THRESHOLD_NS, n = 0, port;
	char buf[256], *p, *tok;
	ssize_t ret = len;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	p = strim(buf);
	tok = strsep(&p, " ");

	mutex_lock(&deter_rec_ctl_mutex);
	if (!strcmp(tok, "stop")) {
		WRITE_ONCE(deter_rec_armed, false);
		deter_replay_arm(false);
		/* Open connections' batches, for the recorder's last poll. */
		deter_conn_for_each(deter_rec_stop_flush);
		goto out;
	}
	if (!strcmp(tok, "param")) {
		ret = deter_rec_param_set(p) ?: len;
		goto out;
	}
	if (!strcmp(tok, "replay")) {
		if (READ_ONCE(deter_rec_armed))
			ret = -EBUSY;
		else
			ret = deter_replay_arm(true) ?: len;
		goto out;
	}
	if (deter_replay_active()) {
		ret = -EBUSY;
		goto out;
	}
	if (strcmp(tok, "record")) {
		ret = -EINVAL;
		goto out;
	}
	tok = strsep(&p, " ");
	if (tok && *tok && kstrtouint(tok, 0, &th)) {
		ret = -EINVAL;
		goto out;
	}
	WRITE_ONCE(deter_rec_armed, false);
	while ((tok = strsep(&p, " "))) {
		if (!*tok)
			continue;
		if (n == DETER_REC_PORTS_MAX || kstrtouint(tok, 0, &port) ||
		    !port || port > 65535) {
			ret = -EINVAL;
			goto out;
		}
		deter_rec_ports[n++] = port;
	}
	WRITE_ONCE(deter_rec_nports, n);
	WRITE_ONCE(deter_rec_threshold_ns, th);
	/* Ports and threshold are visible before the armed flag. */
	smp_store_release(&deter_rec_armed, true);
out:
	mutex_unlock(&deter_rec_ctl_mutex);
	return ret;
}

static int deter_rec_ctl_show(struct seq_file *m, void *v)
{
	unsigned int i;

	seq_printf(m, "%s threshold_ns=%u ports=",
		   READ_ONCE(deter_rec_armed) ? "recording" : "stopped",
		   READ_ONCE(deter_rec_threshold_ns));
	for (i = 0; i < READ_ONCE(deter_rec_nports); i++)
		seq_printf(m, "%s%u", i ? "," : "", deter_rec_ports[i]);
	seq_puts(m, "\n");
	return 0;
}

static int deter_rec_ctl_open(struct inode *inode, struct file *file)
{
	return single_open(file, deter_rec_ctl_show, NULL);
}

static const struct file_operations deter_rec_ctl_fops = {
	.owner = THIS_MODULE,
	.open = deter_rec_ctl_open,
	.read = seq_read,
	.write = deter_rec_ctl_write,
	.llseek = seq_lseek,
	.release = single_release,
};

void deter_rec_stats_show(struct seq_file *m)
{
	u64 events = 0;
	int cpu;

	seq_printf(m, "connections_recorded %lld\n",
		   (long long)atomic64_read(&deter_rec_conns));
	seq_printf(m, "connections_not_ipv4 %lld\n",
		   (long long)atomic64_read(&deter_rec_not_ipv4));
	for_each_possible_cpu(cpu)
		events += per_cpu(deter_rec_events, cpu);
	seq_printf(m, "events_emitted %llu\n", events);
	seq_printf(m, "tx_packets_sampled %lld\n",
		   (long long)atomic64_read(&deter_rec_tx_pkts));
	seq_printf(m, "tx_packets_orphaned %lld\n",
		   (long long)atomic64_read(&deter_rec_tx_orphan));
}

/**
 * deter_rec_init() - attach the probes and create deter/control
 * @dir: deter's debugfs directory
 *
 * Return: 0, or -ENOENT when a tracepoint is missing, or the error of
 * registering a probe.
 */
int deter_rec_init(struct dentry *dir)
{
	int err;

	for_each_kernel_tracepoint(deter_rec_find_tp, NULL);
	if (!deter_rec_tp_xmit || !deter_rec_tp_state) {
		pr_err("tracepoints net_dev_start_xmit/inet_sock_set_state not found\n");
		return -ENOENT;
	}
	err = tracepoint_probe_register(deter_rec_tp_xmit, deter_rec_xmit, NULL);
	if (err)
		return err;
	err = tracepoint_probe_register(deter_rec_tp_state, deter_rec_state, NULL);
	if (err)
		goto err_xmit;
	debugfs_create_file("control", 0600, dir, NULL, &deter_rec_ctl_fops);
	return 0;

err_xmit:
	tracepoint_probe_unregister(deter_rec_tp_xmit, deter_rec_xmit, NULL);
	tracepoint_synchronize_unregister();
	return err;
}

/**
 * deter_rec_exit() - detach the probes; returns once none is running
 */
void deter_rec_exit(void)
{
	WRITE_ONCE(deter_rec_armed, false);
	tracepoint_probe_unregister(deter_rec_tp_state, deter_rec_state, NULL);
	tracepoint_probe_unregister(deter_rec_tp_xmit, deter_rec_xmit, NULL);
	tracepoint_synchronize_unregister();
}
