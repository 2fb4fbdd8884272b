// SPDX-License-Identifier: GPL-2.0
/*
 * Recording's values: what TCP read from the kernel, logged so that the
 * replay reads the same (DETER §3.2, "record only reads that return a
 * new value").
 *
 * Each DETER_VAL_* a hook hands deter_rec_value() is logged as a VALUE
 * event in the cheapest form that still lets replay reproduce it:
 *
 *   CLOCK, JIFFIES          delta from the socket's last logged value
 *   IP_ID, RANDOM           as read
 *   TSQ_FULL, AUTOCORK,     only the unusual outcomes, each with the run
 *   HOST_QUEUED, BACKLOG,   of usual ones before it (0 B while TCP keeps
 *   XMIT, WAIT_LEFT, ...    finding the usual answer)
 *   MEM_*, HOST_IDLE        only where the outcome changes
 *   ISN, TS offset          in the connection's identity (deter_rec_emit.c)
 *
 * A passive end's handshake runs before its socket exists: the SYN's IP
 * ID and the SYN-ACKs' clocks wait in a table keyed by namespace and
 * 4-tuple (deter_rec_hs_slot()) until the child is established, then go
 * into its log (deter_rec_synack_emit()).
 *
 * Jiffies are held per context: what a context read at its last event
 * is what it reads until its next one (deter_rec_jiffies_read()), so no
 * tick falls inside one processing step; the replay answers every read
 * of a step with the value logged at its event. A task holds them for as
 * long as it owns a recorded socket (up to DETER_REC_JIF_STEP), however
 * long its host kept it from running.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_rec_value.h"

#include <kunit/visibility.h>
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_debug.h"
#include "deter_ipid.h"
#include "deter_rec_ctl.h"
#include "deter_rec_emit.h"

/*
 * The jiffies a context's TCP reads while recording: the value looked at
 * (and logged) at its last event, so no tick falls between an event and
 * a later read of the same processing step; the replay answers every
 * read of a step with the value at its last event. One slot per CPU for
 * softirq, one for the task running there (BH off or not: the lock
 * hooks run under spin_lock_bh(), the rest of the step may not). A step
 * of a socket not recorded empties the slot; a held value older than
 * DETER_REC_JIF_HOLD (a slot left by a step that ended) is not used.
 *
 * Except in a task that owns a recorded socket: from its app lock turn
 * (deter_rec_jif_step_begin()) to its release_sock() (..._end()) it
 * reads the held value for up to DETER_REC_JIF_STEP. A host that stops
 * the task's CPU mid-step (a vCPU its host preempted, in the middle of
 * tcp_write_xmit()) would otherwise have TCP arm a deadline on a tick no
 * event logged, which the replay, reading the logged one, cannot match:
 * the loss probe comes due at another of the owner's turns.
 */
#define DETER_REC_JIF_HOLD	(HZ / 10)
/*
 * A vCPU its busy host preempts stalls a step for hundreds of ms; 2 s covers
 * such stalls with room, and bounds how stale a slot can be that a task
 * which migrated mid-step left on the CPU it started on (its release
 * ends the step on the CPU it ran on last): only a read without a lock
 * hook (TCP_INFO's lock_sock_fast()) could see it.
 */
#define DETER_REC_JIF_STEP	(2 * HZ)

struct deter_rec_jif {
	struct task_struct *task;	/* NULL: the softirq slot */
	unsigned long jif;
	bool step;	/* task owns a recorded socket: hold up to _STEP */
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
	if (!hold || j->task != task)
		j->step = false;
	j->task = hold ? task : ERR_PTR(-ENOENT);	/* matches no context */
	j->jif = now;
	preempt_enable();
}

/* Mark this task's slot as held while it owns the socket (@on) or not. */
static void deter_rec_jif_step(bool on)
{
	struct task_struct *task;
	struct deter_rec_jif *j;

	if (!in_task())
		return;
	preempt_disable();
	j = deter_rec_jif_slot(&task);
	if (j->task == task)
		j->step = on;
	preempt_enable();
}

/* The task took a recorded socket at its app lock turn, slot just set. */
void deter_rec_jif_step_begin(void)
{
	deter_rec_jif_step(true);
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_jif_step_begin);

/* The task releases a socket: back to DETER_REC_JIF_HOLD. */
void deter_rec_jif_step_end(void)
{
	deter_rec_jif_step(false);
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_jif_step_end);

void deter_rec_jif_set(unsigned long now)
{
	deter_rec_jif_store(true, now);
}
EXPORT_SYMBOL_IF_KUNIT(deter_rec_jif_set);

/* A step of a socket that is not recorded: reads are live again. */
void deter_rec_jif_clear(void)
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
	if (j->task == task &&
	    time_in_range(now, j->jif, j->jif + (j->step ? DETER_REC_JIF_STEP :
						 DETER_REC_JIF_HOLD)))
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
void deter_rec_jiffies(struct deter_sock *ds)
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

/*
 * The slot of request socket @req's handshake, if it saw the SYN; NULL
 * else. Under deter_rec_hs_lock.
 */
static struct deter_rec_hs *deter_rec_hs_of_req(const struct sock *req)
{
	struct deter_rec_hs *h;

	h = deter_rec_hs_slot(deter_rec_hs, sock_net(req)->ns.inum,
			      req->sk_rcv_saddr, req->sk_num, req->sk_daddr,
			      ntohs(req->sk_dport), false, jiffies);
	return h && h->have_syn ? h : NULL;
}

/*
 * A request socket's SYN-ACK timer expired (DETER_VAL_REQ_TIMER): kept
 * with the peer's segments counted so far, where the replay runs it.
 */
static void deter_rec_req_timer(const struct sock *req)
{
	struct deter_rec_hs *h;

	spin_lock_bh(&deter_rec_hs_lock);
	h = deter_rec_hs_of_req(req);
	if (h) {
		if (h->ntimer < DETER_REC_SYNACK_MAX)
			h->timer_at[h->ntimer++] = h->nreq;
		else
			h->ntimer = U8_MAX;
	}
	spin_unlock_bh(&deter_rec_hs_lock);
}

/**
 * deter_rec_page_frag_refill() - tcp_sendmsg_locked() refills its page
 *	fragment
 * @sk: the socket, owned by the caller
 * @pfrag: the fragment
 *
 * Logs the refills where the fragment starts over (another page, or the
 * same page from offset 0 once every skb let go of it; it depends on
 * when the data was acknowledged and freed), the socket's first, and the
 * first after something else moved the fragment (deter_rec_page_frag_send()).
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

/**
 * deter_rec_page_frag_send() - a send on a recorded socket starts or returns
 * @ds: the socket's state
 * @sk: the socket, owned by the caller
 * @done: whether the send returns
 *
 * The fragment a send copies into is usually the task's (sk_page_frag()),
 * which every socket the task writes to shares: between two of this
 * socket's sends, the task's other writes (an event loop's other
 * connections) move it on, and a refill that then keeps going does so
 * from where they left it, which a replay of this socket alone cannot
 * know. A send returning notes where the fragment is; the next one
 * starting finds it elsewhere if something moved it, and then the next
 * refill is logged wherever it lands, as the socket's first is.
 */
void deter_rec_page_frag_send(struct deter_sock *ds, struct sock *sk, bool done)
{
	const struct page_frag *pfrag = sk_page_frag(sk);

	if (done) {
		ds->pf_page = pfrag->page;
		ds->pf_off = pfrag->offset;
		ds->pf_size = pfrag->size;
	} else if (pfrag->page != ds->pf_page || pfrag->offset != ds->pf_off ||
		   pfrag->size != ds->pf_size) {
		ds->pf_seen = false;
	}
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
 * TSval); the nanoseconds below only make a paced packet's departure
 * time up to 1 us later, and in the log they would be ten bits of noise
 * per read, half of what the clock costs.
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
	if (what == DETER_VAL_REQ_TIMER) {
		deter_rec_req_timer(sk);
		return val;
	}
	if (what == DETER_VAL_SYNACK_CLOCK) {
		spin_lock_bh(&deter_rec_hs_lock);
		h = deter_rec_hs_of_req(sk);
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
		h->nagain = 0;
		h->nreq = 0;
		h->ntimer = 0;
		h->have_syn = true;
		h->fastopen = fastopen;
		h->syn_ipid = ntohs(ip_hdr(skb)->id);
		spin_unlock_bh(&deter_rec_hs_lock);
		return val;
	}
	ds = deter_rec_get(sk);
	if (!ds)
		return val;
	/* Frames: here, deter_op_value(), __deter_value(). */
	if (unlikely(deter_debug_clock) && deter_debug_is_host(what))
		deter_debug_host("rec", sk, what, ds->host_run, val,
				 atomic_read(&ds->seq), 4);
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
		if (deter_conn_connect_wait(ds)) {
			deter_rec_rare(ds, DETER_V_HOST, &ds->host_run,
				       (u64)(val ? DETER_HOST_CONNECT_WAIT :
					     DETER_HOST_TIMEOUT) << 32);
			break;
		}
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

/**
 * deter_rec_req_rx() - a segment reached a request socket
 * @req: the request socket (TCP_NEW_SYN_RECV); softirq
 * @skb: the segment, data at its TCP header
 *
 * Counted with the handshake, for where its timeouts came among them
 * (deter_rec_req_timer()). A SYN the peer sent again took an IP ID of
 * its series before the child's first arrival: kept, so that the
 * packets lost in between can be told from it (deter_ipid_head_gap()).
 */
void deter_rec_req_rx(const struct sock *req, const struct sk_buff *skb)
{
	struct deter_rec_hs *h;

	if (!READ_ONCE(deter_rec_armed) || skb->protocol != htons(ETH_P_IP))
		return;
	spin_lock_bh(&deter_rec_hs_lock);
	h = deter_rec_hs_of_req(req);
	if (h) {
		if (h->nreq < U8_MAX)
			h->nreq++;
		/* A SYN sent again; an ACK is the child's, or one not taken. */
		if (((const struct tcphdr *)skb->data)->syn) {
			if (h->nagain < DETER_IPID_SYN_AGAIN)
				h->syn_again[h->nagain++] = ntohs(ip_hdr(skb)->id);
			else
				h->nagain = U8_MAX;
		}
	}
	spin_unlock_bh(&deter_rec_hs_lock);
}

/* A passive end's handshake values, kept until the child exists. */
void deter_rec_synack_emit(struct deter_sock *ds, const struct sock *newsk)
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
	/* Where its request socket's timeouts came, if it had any. */
	if (hs.have_syn && hs.ntimer <= DETER_REC_SYNACK_MAX)
		for (i = 0; i < hs.ntimer; i++)
			deter_rec_emit(ds, DETER_EV_NET, DETER_NET_SYNACK_TIMER,
				       hs.timer_at[i], 0, 0);
	if (ds->child_rto && (!hs.have_syn || !hs.ntimer ||
			      hs.ntimer > DETER_REC_SYNACK_MAX))
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING,
			       DETER_MISSING_SYNACK_TIMER, 0, 0);
	/*
	 * The peer's packets after its SYN that never came: the first ones
	 * of its series, which no later arrival shows missing. The peer's
	 * log pairs with this one for the rest.
	 */
	if (ds->rx_primed && !ds->child_syn && hs.have_syn &&
	    hs.nagain <= DETER_IPID_SYN_AGAIN) {
		struct deter_ipid_run gaps[DETER_IPID_SYN_AGAIN + 1];
		unsigned int n = deter_ipid_head_gap(hs.syn_ipid, hs.syn_again,
						     hs.nagain, ds->child_ipid,
						     gaps);

		for (i = 0; i < n; i++)
			deter_rec_emit(ds, DETER_EV_NET, DETER_NET_GAP,
				       gaps[i].start, gaps[i].count, 0);
	}
	/*
	 * Its first arrival, which the child's log has no RX event for, and
	 * that arrival's shape if it carried data.
	 */
	if (ds->child_shape)
		deter_rec_emit(ds, DETER_EV_NET, DETER_NET_SHAPE, ds->rx_shape[0],
			       ds->rx_shape[1], ds->rx_shape[2]);
	if (ds->rx_primed && !ds->child_syn)
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_CHILD_IPID,
			       ds->child_ipid, ds->child_segs, 0);
}
