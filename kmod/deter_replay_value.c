// SPDX-License-Identifier: GPL-2.0
/*
 * Replay's value reader: hand TCP the values the original read.
 *
 * For each value the recording logged (deter_rec_value.c) the replay
 * keeps a cursor of its own and answers every read of that kind with the
 * next one logged, in the form it was logged:
 *
 *   CLOCK             rpl->clock += next CLOCK delta; it must not be
 *                     logged before the last context event taken
 *   JIFFIES           the sum of the JIFFIES deltas before the context
 *                     cursor (deter_rpl_jiffies_to()), per context
 *   IP_ID, RANDOM,    the next one logged; ISN and TS offset from the
 *   SYNACK_CLOCK      script's header
 *   rare outcomes     usual (0) until the run logged before the next
 *   (TSQ_FULL, ...)   unusual one is used up, then that one:
 *                       yes = next.a == run; run = yes ? 0 : run + 1
 *   changes (MEM_*,   as the last change logged, flipped where the log
 *   HOST_IDLE)        has the next
 *   HOST answers      the original's, whatever the replay host says
 *
 * A read beyond the log's end, or a run longer than the log's, diverges
 * the replay. Values of a handshake (ISN, TS offset, SYN-ACK clock, a
 * time-wait's TS value) are looked up by 4-tuple before any socket is
 * bound; binding an active end happens at its ISN read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_value.h"

#include <kunit/visibility.h>

#include <linux/gfp.h>
#include <linux/ip.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_debug.h"
#include "deter_replay_ctl.h"
#include "deter_replay_ctx.h"
#include "deter_replay_seq.h"

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
				       "rpl-a" : "rpl-b", rpl->sk, deter_rpl_seq(rpl, e),
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
		r->seq = e->seq;
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
	[DETER_HOST_CONNECT_WAIT] = "connect()'s wait",
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
	deter_rpl_diverge(rpl, "event %u: %s logged where the replay has %s (last ran: event %u)",
			  r->seq, names[(*b >> shift) % nkinds], names[kind],
			  rpl->ctx_seq);
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
 * connect()'s first wait for the handshake, with *@val the time left: the
 * log has it as DETER_HOST_CONNECT_WAIT, or DETER_HOST_TIMEOUT where it
 * timed out; a connect() that did not wait in the original has neither.
 */
static bool deter_rpl_connect_wait(struct deter_rpl *rpl, u64 *val)
{
	u64 b = 0;

	if (!deter_rpl_rare(rpl, &rpl->host, DETER_V_HOST, &rpl->ds->host_run, &b)) {
		spin_lock_bh(&rpl->lock);
		deter_rpl_diverge(rpl, "connect() waited where the original's did not");
		spin_unlock_bh(&rpl->lock);
	} else if (b >> 32 == DETER_HOST_TIMEOUT) {
		*val = 0;
	} else if (b >> 32 != DETER_HOST_CONNECT_WAIT) {
		spin_lock_bh(&rpl->lock);
		deter_rpl_diverge(rpl, "%s logged where the replay has connect()'s wait",
				  deter_rpl_host_names[(b >> 32) % DETER_HOST_MAX]);
		spin_unlock_bh(&rpl->lock);
	} else if (!*val) {
		*val = MAX_SCHEDULE_TIMEOUT;
	}
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
 * signal ends the call here if it is the call's (after its CALL), the
 * owner took every lock turn before it (the waits the call made first),
 * and the host gave every answer logged before it, as many usual ones
 * since the last unusual one as the signal has in its first field. One
 * lock turn can hold several checks (a send that found no room, then
 * room after its wait, then none again after copying): the host's
 * answers in between tell them apart. The checks that found none are
 * not logged, since how many a recv() makes depends on whether a
 * segment was in the backlog yet; a call that returned before it
 * looked again returned what the log says, or the replay diverged
 * there.
 */
bool deter_rpl_signal(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *e;
	bool yes = false, turns;
	u32 i, run;

	spin_lock_bh(&rpl->lock);
	for (e = deter_rpl_at(rpl, rpl->sig); e; e = deter_rpl_at(rpl, ++rpl->sig))
		if (rpl->sig >= rpl->call && deter_rpl_is_signal(e))
			break;
	if (e && (!rpl->host.ev || rpl->host.ev->seq > e->seq)) {
		for (i = rpl->ctx; i < rpl->sig; i++)
			if (rpl->ev[i].type == DETER_EV_LOCK)
				break;
		turns = i >= rpl->sig;
		run = rpl->ds->host_run;
		yes = turns && run == e->a;
		if (yes)
			rpl->sig++;
		else if (turns && run > e->a)
			deter_rpl_diverge(rpl, "event %u: signal after %llu host answers, not %u",
					  e->seq, e->a, run);
	}
	spin_unlock_bh(&rpl->lock);
	return yes;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_signal);

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
		/* Named by the restart the log has next, and where this one was. */
		spin_lock_bh(&rpl->lock);
		deter_rpl_diverge(rpl,
				  "event %u: page fragment: a new page where the original kept going (refill %u since the last restart, at offset %u of %u)",
				  rpl->pf.ev ? rpl->pf.ev->seq : 0, rpl->ds->pf_same, off,
				  size);
		spin_unlock_bh(&rpl->lock);
	}
	return true;
}

/**
 * deter_replay_value() - TCP reads a value from the kernel
 * @sk: the socket (the request socket for DETER_VAL_SYNACK_CLOCK, the
 *	time-wait socket for DETER_VAL_TW_TSVAL, the listener for a
 *	passive ISN)
 * @skb: the SYN, for a passive ISN and TS offset; else NULL
 * @what: which value
 * @val: the value read; set to the logged one
 *
 * Return: whether @val was answered from a log.
 */
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
	    what != DETER_VAL_REQ_TIMER && sk->sk_protocol != IPPROTO_TCP)
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
			rpl = NULL;	/* its replay has not started */
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
	case DETER_VAL_REQ_TIMER:
		/*
		 * @sk is a request socket whose timer expired, in softirq:
		 * it runs if the log has a timeout due here, which it
		 * counts as run; a timeout due before one of the peer's
		 * segments runs ahead of it (deter_replay_req_rx()).
		 */
		rpl = deter_rpl_find_sk(sk);
		if (!rpl || !READ_ONCE(rpl->armed) ||
		    READ_ONCE(rpl->state) != DETER_RPL_LOADED)
			return false;
		spin_lock_bh(&rpl->lock);
		*val = deter_rpl_req_timeouts_due(rpl, 1);
		spin_unlock_bh(&rpl->lock);
		return true;
	case DETER_VAL_SYNACK_CLOCK:
		/* @sk is the request socket; it may be in softirq. */
		rpl = deter_rpl_find_sk(sk);
		if (!rpl || !READ_ONCE(rpl->armed))
			return false;
		spin_lock_bh(&rpl->lock);
		e = deter_rpl_next_value(rpl, &rpl->synack,
					 DETER_V_SYNACK_CLOCK);
		if (e)
			*val = e->a;
		spin_unlock_bh(&rpl->lock);
		return !!e;
	default:
		break;
	}

	/* The rest are the bound socket's own. */
	rpl = deter_rpl_get(sk);
	if (!rpl)
		return false;
	/* Frames: here, deter_op_value_replay(), deter_op_value(), __deter_value(). */
	if (unlikely(deter_debug_clock) && deter_debug_is_host(what))
		deter_debug_host("rpl", sk, what, rpl->ds->host_run, *val,
				 rpl->ctx_seq, 5);
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
		if (deter_conn_connect_wait(rpl->ds))
			return deter_rpl_connect_wait(rpl, val);
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

/**
 * deter_replay_jiffies() - TCP reads jiffies
 * @now: set to the jiffies of the script this context works for
 *
 * Return: whether this context works for a running script.
 */
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
		rpl = deter_rpl_cpu_get();
	if (!rpl || READ_ONCE(rpl->state) != DETER_RPL_RUNNING || !rpl->sk)
		return false;
	*now = READ_ONCE(rpl->jiffies);
	return true;
}

