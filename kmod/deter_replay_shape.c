// SPDX-License-Identifier: GPL-2.0
/*
 * Replay's rebuilt arrivals (DETER_NET_SHAPE, deter_shape.c).
 *
 * When a script logs its arrivals' shapes, its receiver gets each logged
 * arrival as the original's driver and GRO built it, whatever the
 * replay's network delivered:
 *
 *   the first of e's segments              --> taken: e's frames start
 *   the next of e's segments               --> taken
 *   e's segments all here                  --> rebuilt in e's shape,
 *                                              held; re-enters
 *                                              tcp_v4_rcv() when due
 *   any other                              --> diverge
 *
 * The replay corrector segments GSO packets for such a script (without
 * NFQA_CFG_F_GSO) and delivers the segments in the original's arrival
 * order, dropping and CE-marking each as the original's network did, so
 * an arrival's segments come one after the other. The shape in force at
 * RX e is the last NET SHAPE before it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_shape.h"

#include <kunit/visibility.h>
#include <linux/kernel.h>
#include <linux/skbuff.h>
#include <net/ip.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_replay_caller.h"
#include "deter_replay_seq.h"
#include "deter_shape.h"

/* Segments one arrival may hold: GRO's 64 KB in frames of 256 B. */
#define DETER_RPL_MAX_FRAMES	256

/*
 * The RX event, within the look-ahead, of the arrival that holds
 * segment @idx, or U32_MAX. Under rpl->lock.
 */
static u32 deter_rpl_rx_cover(const struct deter_rpl *rpl, u64 idx)
{
	const struct deter_replay_ev *e;
	u32 i;

	for (i = rpl->ctx; (e = deter_rpl_at(rpl, i)) &&
	     i - rpl->ctx < DETER_RPL_LOOKAHEAD; i++)
		if (e->type == DETER_EV_RX &&
		    !(e->b & (DETER_RX_SYN | DETER_RX_CTL)) &&
		    idx >= e->a && idx - e->a < max_t(u64, e->c, 1))
			return i;
	return U32_MAX;
}

/* The NET SHAPE in force at RX event @j, or NULL. Under rpl->lock. */
static const struct deter_replay_ev *
deter_rpl_shape_at(const struct deter_rpl *rpl, u32 j)
{
	u32 i;

	for (i = j; i-- > rpl->ctx;)
		if (deter_rpl_is_shape(&rpl->ev[i]))
			return &rpl->ev[i];
	return rpl->shape_ev ? &rpl->ev[rpl->shape_ev - 1] : NULL;
}

/* Diverge at RX event @j over segment @idx. Under rpl->lock. */
static __printf(4, 5) void deter_rpl_shape_diverge(struct deter_rpl *rpl,
						   u32 j, u64 idx,
						   const char *fmt, ...)
{
	char why[sizeof(rpl->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	deter_rpl_diverge(rpl, "event %u: segment ipid %llu: %s",
			  rpl->ev[j].seq, idx & 0xffff, why);
	deter_rpl_kick(rpl, 0);
}

/*
 * Hold @skb, the arrival of RX event @j rebuilt, until it is due.
 * Return: false if the hold is full (the replay diverged).
 */
static bool deter_rpl_shape_hold(struct deter_rpl *rpl, struct sk_buff *skb,
				 u32 j)
{
	if (skb_queue_len(&rpl->held) >= DETER_RPL_MAX_HELD) {
		deter_rpl_diverge(rpl, "event %u: more than %u segments held",
				  rpl->ev[j].seq, DETER_RPL_MAX_HELD);
		kfree_skb(skb);
		return false;
	}
	__skb_queue_tail(&rpl->held, skb);
	return true;
}

/*
 * Rebuild rpl->frames, an arrival's segments, in shape @want. Return:
 * the arrival, marked as made; with @why empty, or saying how it differs
 * from @want. NULL if it cannot be rebuilt (@why says why): the segments
 * stay on rpl->frames. Under rpl->lock.
 */
static struct sk_buff *deter_rpl_shape_make(struct deter_rpl *rpl,
					    const struct deter_shape *want,
					    char *why, size_t len)
{
	struct deter_shape have;
	struct sk_buff *skb;
	const char *what;
	u32 vh, vw;

	why[0] = '\0';
	skb = deter_shape_build(&rpl->frames, want, rpl->frames_segs,
				&rpl->pages, &what);
	rpl->frames_segs = 0;
	if (!skb) {
		snprintf(why, len, "its arrival cannot be rebuilt: %s", what);
		return NULL;
	}
	__skb_queue_purge_reason(&rpl->frames, SKB_CONSUMED);
	deter_shape_of(skb, &rpl->tail, &have);
	what = deter_shape_diff(&have, want, &vh, &vw);
	if (what)
		snprintf(why, len, "its arrival was rebuilt with %s %u, logged %u",
			 what, vh, vw);
	/* Its cb is its first segment's, whose IPCB is back in place. */
	skb->mark = DETER_RPL_SHAPED_MARK;
	return skb;
}

/* Rebuild the arrival of RX event @j from rpl->frames, and hold it. */
static void deter_rpl_shape_done(struct deter_rpl *rpl, u32 j,
				 const struct deter_shape *want, u64 idx)
{
	char why[DETER_RPL_WHY_LEN];
	struct sk_buff *skb;

	skb = deter_rpl_shape_make(rpl, want, why, sizeof(why));
	if (!skb) {
		/* TCP gets them as they came when the replay ends. */
		skb_queue_splice_tail_init(&rpl->frames, &rpl->held);
		deter_rpl_shape_diverge(rpl, j, idx, "%s", why);
		return;
	}
	if (why[0]) {
		deter_rpl_shape_diverge(rpl, j, idx, "%s", why);
		kfree_skb(skb);
		return;
	}
	deter_rpl_shape_hold(rpl, skb, j);
}

/*
 * Take @skb, a segment of the arrival being rebuilt, onto rpl->frames,
 * where it may outlive this RCU section and re-enter tcp_v4_rcv() as it
 * is (deter_rpl_let_go()). Return: false if it has no route to keep.
 */
static bool deter_rpl_shape_take(struct deter_rpl *rpl, struct sk_buff *skb,
				 bool filled)
{
	if (!skb_dst_force(skb))
		return false;
	/* tcp_v4_fill_cb() moved the IPCB of a segment for a full socket. */
	if (filled)
		memmove(IPCB(skb), &TCP_SKB_CB(skb)->header.h4,
			sizeof(struct inet_skb_parm));
	__skb_queue_tail(&rpl->frames, skb);
	rpl->frames_segs += deter_conn_rx_segs(skb);
	rpl->frames_next += deter_conn_rx_segs(skb);
	return true;
}

/**
 * deter_rpl_shape_rx() - make an arriving segment the arrival it was
 * @rpl: the script of the socket it came to; under rpl->lock
 * @skb: the segment, not a SYN or an unnumbered control segment
 * @idx: its index
 * @taken: set to true if the replay took @skb
 *
 * Return: true if the hook is done with @skb: taken, or the replay
 * diverged (then TCP takes it as it is); false if it goes on as the
 * arrival it is.
 */
bool deter_rpl_shape_rx(struct deter_rpl *rpl, struct sk_buff *skb, u64 idx,
			bool *taken)
{
	const struct deter_replay_ev *e, *se;
	struct deter_shape want;
	u32 j, n = deter_conn_rx_segs(skb);
	u64 segs;

	if (skb->mark == DETER_RPL_SHAPED_MARK)
		return false;
	j = deter_rpl_rx_cover(rpl, idx);
	se = j == U32_MAX ? NULL : deter_rpl_shape_at(rpl, j);
	if (!se)
		return false;	/* not logged: the sequencer says what it is */
	e = &rpl->ev[j];
	segs = max_t(u64, e->c, 1);
	deter_shape_unpack(se->a, se->b, se->c, &want);	/* validated */
	if (skb_queue_empty(&rpl->frames)) {
		if (idx != e->a) {
			deter_rpl_shape_diverge(rpl, j, idx,
						"came before the first of its arrival, ipid %llu",
						e->a & 0xffff);
			return true;
		}
		rpl->frames_ev = j;
		rpl->frames_next = idx;
	} else if (j != rpl->frames_ev || idx != rpl->frames_next) {
		deter_rpl_shape_diverge(rpl, j, idx,
					"came while the arrival of ipid %llu waited for ipid %llu",
					rpl->ev[rpl->frames_ev].a & 0xffff,
					rpl->frames_next & 0xffff);
		return true;
	}
	if (rpl->frames_segs + n > segs || segs > DETER_RPL_MAX_FRAMES) {
		deter_rpl_shape_diverge(rpl, j, idx,
					"%u segments go beyond the %llu of its arrival",
					rpl->frames_segs + n, segs);
		return true;
	}
	if (!deter_rpl_shape_take(rpl, skb, true)) {
		deter_rpl_shape_diverge(rpl, j, idx, "no route to hold it with");
		return true;
	}
	/*
	 * The IP ID series is where the log has it, as it will be when the
	 * arrival reaches TCP: a segment the log has not that comes before
	 * then is past the series, not before it.
	 */
	rpl->ds->rx_ref = idx;
	rpl->ds->rx_primed = true;
	*taken = true;
	if (rpl->frames_segs == segs) {
		deter_rpl_shape_done(rpl, j, &want, idx);
		deter_rpl_kick(rpl, 0);
	}
	return true;
}

/*
 * The replay could not make the passive end's first arrival: its
 * segments go on as they came (to @out), and the replay diverges when the
 * end is created (deter_replay_clone()). Under rpl->lock.
 */
static __printf(3, 4) void deter_rpl_shape_child_fail(struct deter_rpl *rpl,
						      struct sk_buff_head *out,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rpl->child_why, sizeof(rpl->child_why), fmt, ap);
	va_end(ap);
	skb_queue_splice_tail_init(&rpl->frames, out);
	rpl->frames_segs = 0;
}

/**
 * deter_rpl_shape_child() - make the segments that create a passive end
 *	the arrival they were
 * @rpl: the script of the end they create, not bound yet; under rpl->lock
 * @skb: a segment that reached the end's request socket; its IPCB intact
 * @out: segments the caller re-enters into tcp_v4_rcv(), unlocked, in
 *	order: the rebuilt arrival, or segments that go on as they came
 *
 * The end's first arrival has no RX event but VALUE CHILD_IPID, and the
 * shape logged right before that is its own when it carried data (the
 * handshake's ACK was lost: deter_rec_synack_emit()). Its segments are
 * taken as they come; the arrival they make is due at once, being what
 * creates the end, and the end checks its segments (deter_replay_clone()).
 *
 * Return: true if the replay took @skb.
 */
bool deter_rpl_shape_child(struct deter_rpl *rpl, struct sk_buff *skb,
			   struct sk_buff_head *out)
{
	const struct deter_replay_ev *e;
	char why[DETER_RPL_WHY_LEN];
	struct deter_shape want;
	struct sk_buff *made;
	u32 j = deter_rpl_child_ev(rpl);
	u16 id = ntohs(ip_hdr(skb)->id);
	u64 segs;

	if (skb->mark == DETER_RPL_SHAPED_MARK || rpl->child_why[0] ||
	    j == U32_MAX || !j ||
	    !deter_rpl_is_shape(&rpl->ev[j - 1]) ||
	    ((const struct tcphdr *)skb->data)->syn)
		return false;
	e = &rpl->ev[j];
	segs = max_t(u64, e->b, 1);
	if (skb_queue_empty(&rpl->frames)) {
		if (id != (u16)e->a)
			return false;	/* not its first: the end says */
		rpl->frames_ev = j;
		rpl->frames_next = e->a;
	} else if (id != (u16)rpl->frames_next) {
		deter_rpl_shape_child_fail(rpl, out,
					   "segment ipid %u came while its first arrival, ipid %llu, waited for ipid %u",
					   id, e->a & 0xffff,
					   (u16)rpl->frames_next);
		return false;
	}
	if (rpl->frames_segs + deter_conn_rx_segs(skb) > segs ||
	    segs > DETER_RPL_MAX_FRAMES) {
		deter_rpl_shape_child_fail(rpl, out,
					   "its first arrival, ipid %llu, got %u segments, logged %llu",
					   e->a & 0xffff,
					   rpl->frames_segs + deter_conn_rx_segs(skb),
					   segs);
		return false;
	}
	if (!deter_rpl_shape_take(rpl, skb, false)) {
		deter_rpl_shape_child_fail(rpl, out,
					   "no route to hold its first arrival with");
		return false;
	}
	if (rpl->frames_segs < segs)
		return true;
	deter_shape_unpack(rpl->ev[j - 1].a, rpl->ev[j - 1].b,
			   rpl->ev[j - 1].c, &want);	/* validated */
	made = deter_rpl_shape_make(rpl, &want, why, sizeof(why));
	if (!made || why[0])
		deter_rpl_shape_child_fail(rpl, out, "its first arrival, ipid %llu: %s",
					   e->a & 0xffff, why);
	if (made)
		__skb_queue_tail(out, made);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(deter_rpl_shape_child);
