// SPDX-License-Identifier: GPL-2.0
/*
 * Replay's sequencer: which event of a script comes next, and whether
 * what the replayed socket does is it (DETER §3.1, §4 "Replay").
 *
 * A script is the log of one connection end: a header, its events in
 * sequence order, and the values of its checkpoints. Three cursors walk
 * the events, each over the events of its own kind:
 *
 *   ctx   the next context event: LOCK(who), RX(segment), NET ICMP.
 *         Contexts take the socket in this order; passing the VALUE
 *         JIFFIES events before ctx sets the jiffies TCP reads, and the
 *         checkpoint right after the event just taken is compared with
 *         the socket's state (deter_rpl_ctx_skip()).
 *   clk   the next VALUE CLOCK, for the next TCP clock read.
 *   call  the next CALL / CALL_DONE, checked against the application.
 *
 * plus one cursor per kind of rare value (deter_replay_value.c). Events
 * carry where they ran: an event with RX_OWNED, ICMP_F_OWNED, a deferred
 * LOCK or a BACKLOG batch happened while a process owned the socket, and
 * is taken by the owner (or the softirq that backlogs for it):
 *
 *   owned(e) = RX:   e->b & RX_OWNED
 *              ICMP: e->a & ICMP_F_OWNED
 *              LOCK: who != APP && (deferred || who == BACKLOG)
 *
 * A batch is numbered with the owner's backlog check that found it, so
 * a segment due while the socket is owned may go in only at that check
 * (deter_rpl_batch_due()).
 *
 * The first difference stops the script ("diverged", with the event and
 * what was expected and found); its hooks then let TCP run freely.
 *
 * Scripts come from userspace and are hostile input: deter_rpl_validate()
 * checks a script's sizes, order and every index an event holds before
 * anything is allocated or read by them, so that a cursor never leaves
 * the event array and a checkpoint never leaves the states.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_seq.h"

#include <kunit/visibility.h>
#include <linux/ip.h>
#include <linux/string.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "deter_conn.h"
#include "deter_debug.h"
#include "deter_ipid.h"

const char *const deter_rpl_lock_names[DETER_LOCK_MAX] = {
	[DETER_LOCK_APP] = "app lock",
	[DETER_LOCK_WRITE_TIMER] = "write timer",
	[DETER_LOCK_DELACK_TIMER] = "delayed-ACK timer",
	[DETER_LOCK_KEEPALIVE_TIMER] = "keepalive timer",
	[DETER_LOCK_COMP_ACK_TIMER] = "compressed-ACK timer",
	[DETER_LOCK_TSQ] = "TSQ",
	[DETER_LOCK_BACKLOG] = "backlog batch",
	[DETER_LOCK_MTU_REDUCED] = "PMTU update",
};

/**
 * deter_rpl_validate() - check a script before it is loaded
 * @buf: the script as written to deter/replay
 * @len: its length in bytes
 *
 * Its header (magic, version, size), its counts against each other and
 * @len, and every event: sequence numbers rising, a known type, a LOCK's
 * site and a STATE's index in range.
 *
 * Return: 0, or -EINVAL.
 */
int deter_rpl_validate(const void *buf, size_t len)
{
	const struct deter_replay_hdr *h = buf;
	const struct deter_replay_ev *ev, *e;
	size_t evlen, stlen;
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
	ev = buf + sizeof(*h);
	for (i = 0; i < h->nevents; i++) {
		e = &ev[i];
		if ((i && e->seq <= ev[i - 1].seq) || !e->type ||
		    e->type > DETER_EV_LAST ||
		    (e->type == DETER_EV_STATE && e->a >= h->nstates) ||
		    (e->type == DETER_EV_LOCK && e->sub >= DETER_LOCK_MAX))
			return -EINVAL;
		if (deter_rpl_is_shape(e)) {
			struct deter_shape shape;

			if (deter_shape_unpack(e->a, e->b, e->c, &shape))
				return -EINVAL;
		}
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_validate);

/*
 * Divergences so far, all scripts: each numbers its own, so that of two
 * ends that diverged, the one whose difference came first (and made the
 * other's) can be told.
 */
static atomic_t deter_rpl_diverged = ATOMIC_INIT(0);

/**
 * deter_rpl_diverge() - stop a running script at a difference
 * @rpl: the script; under rpl->lock
 * @fmt: what was expected and found, printf-style
 *
 * The message goes to deter/replay and the kernel log; a script that is
 * not running is left as it is.
 */
void deter_rpl_diverge(struct deter_rpl *rpl, const char *fmt, ...)
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

/* What event @e (NULL: the end) is, in words, for a divergence. */
void deter_rpl_describe(const struct deter_replay_ev *e, char *buf,
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
void deter_rpl_check(struct deter_rpl *rpl, const struct deter_replay_ev *e)
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
void deter_rpl_jiffies_to(struct deter_rpl *rpl, u32 i)
{
	const struct deter_replay_ev *e;

	for (; rpl->jif < i && (e = deter_rpl_at(rpl, rpl->jif)); rpl->jif++)
		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_JIFFIES)
			rpl->jiffies += e->a;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_jiffies_to);

/*
 * Move rpl->ctx from @i to the next context event and, when @taken is
 * the event just consumed, check the checkpoint taken right after it.
 * Under rpl->lock.
 */
void deter_rpl_ctx_skip(struct deter_rpl *rpl, u32 i,
			const struct deter_replay_ev *taken)
{
	const struct deter_replay_ev *e;

	for (; (e = deter_rpl_at(rpl, i)) && !deter_rpl_is_ctx(e); i++) {
		if (deter_rpl_is_shape(e))
			rpl->shape_ev = i + 1;
		if (taken && e->type == DETER_EV_STATE && !e->sub &&
		    e->seq == taken->seq + 1)
			deter_rpl_check(rpl, e);
	}
	rpl->ctx = i;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_ctx_skip);

/*
 * The context event at rpl->ctx was taken: move to the next one (the
 * caller then kicks the handler caller, deter_rpl_ctx_next()). Under
 * rpl->lock, in the context that took the lock.
 */
void deter_rpl_ctx_advance(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *taken = &rpl->ev[rpl->ctx];

	/* A softirq's backlogged segment: the owner applies them. */
	if (!deter_rpl_is_owned(taken) || taken->type == DETER_EV_LOCK)
		deter_rpl_jiffies_to(rpl, rpl->ctx);
	if (!deter_rpl_is_owned(taken))
		rpl->ctx_seq = taken->seq;
	deter_rpl_ctx_skip(rpl, rpl->ctx + 1, taken);
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_ctx_advance);

/* The next VALUE @what at or after *cursor (but signals). Under rpl->lock. */
const struct deter_replay_ev *deter_rpl_next_value(struct deter_rpl *rpl,
						   u32 *cursor, u16 what)
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
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_next_value);

static void deter_rpl_rare_init(struct deter_rpl *rpl,
				struct deter_rpl_rare *r, u16 what)
{
	r->cursor = 0;
	r->ev = deter_rpl_next_value(rpl, &r->cursor, what);
}

/* Bind @sk to @rpl: from now on it is replayed. */
void deter_rpl_bind(struct deter_rpl *rpl, struct sock *sk)
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
	/*
	 * Delayed-ACK (pingpong) mode as the original started with: a child
	 * has the replay listener's, which no TCP_QUICKACK 0 set; no data
	 * has moved yet.
	 */
	inet_csk(sk)->icsk_ack.pingpong = DETER_CONN_PINGPONG(rpl->hdr.flags);
	/* The log starts with the jiffies at the connection's start. */
	e = deter_rpl_at(rpl, 0);
	if (e && e->type == DETER_EV_VALUE && e->sub == DETER_V_JIFFIES)
		deter_rpl_jiffies_to(rpl, 1);
	deter_rpl_ctx_skip(rpl, 0, NULL);
	WRITE_ONCE(ds->rpl, rpl);
	WRITE_ONCE(rpl->state, DETER_RPL_RUNNING);
}

/* The sk_tsq_flags bit of a handler deferred to the owner, or -1. */
int deter_rpl_deferred_bit(u8 who)
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

bool deter_rpl_is_deferred(const struct deter_replay_ev *e)
{
	return e && e->type == DETER_EV_LOCK &&
	       (e->a & DETER_LOCK_F_DEFERRED) &&
	       deter_rpl_deferred_bit(e->sub) >= 0;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_is_deferred);

/*
 * The backlog batch the log has next in this ownership, if only owned
 * context events (backlogged segments, deferred handlers) come before
 * it. Under rpl->lock.
 */
const struct deter_replay_ev *deter_rpl_next_batch(struct deter_rpl *rpl)
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
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_next_batch);

/*
 * Does the owner take its next batch at the check it is at? The log
 * numbers each batch with the owner's check, within its ownership, that
 * found it (DETER_LOCK_BACKLOG). Under rpl->lock.
 */
bool deter_rpl_batch_due(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *b = deter_rpl_next_batch(rpl);

	return rpl->state == DETER_RPL_RUNNING && b &&
	       b->a == rpl->ds->bl_checks;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_batch_due);

/* The held segment RX event @e logs, if it is here. Under rpl->lock. */
struct sk_buff *deter_rpl_held_find(struct deter_rpl *rpl,
				    const struct deter_replay_ev *e)
{
	struct sk_buff *skb;

	skb_queue_walk(&rpl->held, skb)
		if (deter_rpl_rx_match(e, tcp_hdr(skb)->syn,
				       deter_rpl_skb_ctl(skb),
				       deter_rpl_rx_idx(rpl->ds, skb)))
			return skb;
	return NULL;
}

/*
 * Is @skb a control segment the peer's host sent outside the IP ID
 * series (RX CTL: IP ID 0, no payload)? A data segment with IP ID 0 is
 * one of the series, where it wraps, as recording counts it.
 */
bool deter_rpl_skb_ctl(const struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	const struct tcphdr *th = tcp_hdr(skb);

	return !th->syn && !iph->id &&
	       ntohs(iph->tot_len) <= iph->ihl * 4 + th->doff * 4;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_skb_ctl);

/* The index TCP's IP ID series gives @skb, without moving the series. */
u64 deter_rpl_rx_idx(const struct deter_sock *ds, const struct sk_buff *skb)
{
	u16 id = ntohs(ip_hdr(skb)->id);

	return ds->rx_primed ? deter_ipid_extend(ds->rx_ref, id) : id;
}

/*
 * Is segment @idx (@syn: a SYN; @ctl: deter_rpl_skb_ctl()) the one RX @e
 * logs? A segment the peer's time-wait socket sent (RX CTL) is not in
 * the IP ID series: any control segment is.
 */
bool deter_rpl_rx_match(const struct deter_replay_ev *e, bool syn, bool ctl,
			u64 idx)
{
	if (e->type != DETER_EV_RX || !!(e->b & DETER_RX_SYN) != syn)
		return false;
	if (e->b & DETER_RX_CTL)
		return ctl;
	return syn || e->a == idx;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_rx_match);

/*
 * The RX event within the lookahead that logs segment @idx (@syn, @ctl as
 * for deter_rpl_rx_match()), or hdr.nevents. Under rpl->lock.
 */
u32 deter_rpl_rx_find(const struct deter_rpl *rpl, bool syn, bool ctl, u64 idx)
{
	u32 i;

	for (i = rpl->ctx; i < rpl->hdr.nevents &&
	     i - rpl->ctx < DETER_RPL_LOOKAHEAD; i++)
		if (deter_rpl_rx_match(&rpl->ev[i], syn, ctl, idx))
			return i;
	return rpl->hdr.nevents;
}

/*
 * The VALUE CHILD_IPID event, a passive end's first arrival, within the
 * lookahead from the script's start, or U32_MAX.
 */
u32 deter_rpl_child_ev(const struct deter_rpl *rpl)
{
	const struct deter_replay_ev *e;
	u32 i;

	for (i = 0; i < rpl->hdr.nevents && i < DETER_RPL_LOOKAHEAD; i++) {
		e = &rpl->ev[i];
		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_CHILD_IPID)
			return i;
	}
	return U32_MAX;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_child_ev);

/* The request socket's timeouts the log has (NET SYNACK_TIMER). */
u32 deter_rpl_req_timeouts_logged(const struct deter_rpl *rpl)
{
	u32 i, n = 0;

	for (i = 0; i < rpl->hdr.nevents && i < DETER_RPL_LOOKAHEAD; i++)
		n += rpl->ev[i].type == DETER_EV_NET &&
		     rpl->ev[i].sub == DETER_NET_SYNACK_TIMER;
	return n;
}

/**
 * deter_rpl_req_timeouts_due() - take the request socket's timeouts due
 * @rpl: the script of the passive end being made; under rpl->lock
 * @max: how many to take at most
 *
 * A timeout the log has (NET SYNACK_TIMER) after a of the peer's
 * segments had reached the request socket is due once that many have
 * here (rpl->req_rx), and before the next one is handed on.
 *
 * Return: how many were due (at most @max), now counted as run.
 */
u32 deter_rpl_req_timeouts_due(struct deter_rpl *rpl, u32 max)
{
	const struct deter_replay_ev *e;
	u32 i, n = 0, due = 0;

	for (i = 0; i < rpl->hdr.nevents && i < DETER_RPL_LOOKAHEAD &&
	     due < max; i++) {
		e = &rpl->ev[i];
		if (e->type != DETER_EV_NET || e->sub != DETER_NET_SYNACK_TIMER)
			continue;
		if (n++ >= rpl->req_timeouts && e->a <= rpl->req_rx)
			due++;
	}
	rpl->req_timeouts += due;
	return due;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_req_timeouts_due);
