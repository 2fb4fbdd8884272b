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
	/* Its cb is its first segment's, whose IPCB is back in place. */
	skb->mark = DETER_RPL_SHAPED_MARK;
	__skb_queue_tail(&rpl->held, skb);
	return true;
}

/* Rebuild the arrival of RX event @j from rpl->frames, and hold it. */
static void deter_rpl_shape_done(struct deter_rpl *rpl, u32 j,
				 const struct deter_shape *want, u64 idx)
{
	struct deter_shape have;
	const char *why, *what;
	struct sk_buff *skb;
	u32 vh, vw;

	skb = deter_shape_build(&rpl->frames, want, rpl->frames_segs,
				&rpl->pages, &why);
	rpl->frames_segs = 0;
	if (!skb) {
		/* TCP gets them as they came when the replay ends. */
		skb_queue_splice_tail_init(&rpl->frames, &rpl->held);
		deter_rpl_shape_diverge(rpl, j, idx,
					"its arrival cannot be rebuilt: %s", why);
		return;
	}
	__skb_queue_purge_reason(&rpl->frames, SKB_CONSUMED);
	deter_shape_of(skb, &rpl->tail, &have);
	what = deter_shape_diff(&have, want, &vh, &vw);
	if (what) {
		deter_rpl_shape_diverge(rpl, j, idx,
					"its arrival was rebuilt with %s %u, logged %u",
					what, vh, vw);
		kfree_skb(skb);
		return;
	}
	deter_rpl_shape_hold(rpl, skb, j);
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
	if (!skb_dst_force(skb)) {	/* it outlives this RCU section */
		deter_rpl_shape_diverge(rpl, j, idx, "no route to hold it with");
		return true;
	}
	/* It may re-enter tcp_v4_rcv() as it is (deter_rpl_let_go()). */
	memmove(IPCB(skb), &TCP_SKB_CB(skb)->header.h4,
		sizeof(struct inet_skb_parm));
	__skb_queue_tail(&rpl->frames, skb);
	/*
	 * The IP ID series is where the log has it, as it will be when the
	 * arrival reaches TCP: a segment the log has not that comes before
	 * then is past the series, not before it.
	 */
	rpl->ds->rx_ref = idx;
	rpl->ds->rx_primed = true;
	*taken = true;
	rpl->frames_segs += n;
	rpl->frames_next += n;
	if (rpl->frames_segs == segs) {
		deter_rpl_shape_done(rpl, j, &want, idx);
		deter_rpl_kick(rpl, 0);
	}
	return true;
}
