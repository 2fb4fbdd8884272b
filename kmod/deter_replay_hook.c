// SPDX-License-Identifier: GPL-2.0
/*
 * Replay's hooks: make a replayed socket's contexts take it in the
 * logged order, and check what they do against the log.
 *
 * Each context that reaches a replayed socket meets the sequencer's
 * next context event (deter_replay_seq.c) and either is it, waits for
 * it, or diverges:
 *
 *   app lock_sock()      its turn (LOCK APP next)  --> take it
 *                        else                      --> sleep until it
 *                                                      is, 10 s at most
 *   real timer, tasklet                            --> skip; the handler
 *                                                      caller runs it
 *   handler caller's                               --> take the turn;
 *   timer                                              due or NOT_DUE as
 *                                                      logged
 *   arriving segment     its turn (RX next)        --> into TCP
 *                        later in the log          --> held, up to
 *                                                      DETER_RPL_MAX_HELD
 *                        regrouped (GRO, GSO)      --> rebuilt as
 *                                                      logged when the
 *                                                      log has shapes
 *                                                      (deter_replay_
 *                                                      shape.c), else
 *                                                      diverge
 *   owner's backlog      a batch due at this check --> its segments,
 *   check                                              in logged order
 *   socket call          next CALL / CALL_DONE     --> compare
 *
 * An application that sleeps in sk_wait_event() is woken where the log
 * has it take the lock next (deter_rpl_app_wake()), whatever woke it in
 * the original. The handshake is checked against the log's identity at
 * ESTABLISHED, and the summary at close.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_hook.h"

#include <linux/ip.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/wait.h>
#include <net/inet_connection_sock.h>
#include <net/ip.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_debug.h"
#include "deter_replay_caller.h"
#include "deter_replay_ctl.h"
#include "deter_replay_ctx.h"
#include "deter_replay_gone.h"
#include "deter_replay_seq.h"
#include "deter_replay_shape.h"

/*
 * Of those, control segments the log has not (held till the end): the
 * peer host's resets, one for each segment this end sent after the
 * peer's socket was gone, a window's worth of frames at most.
 */
#define DETER_RPL_MAX_UNLOGGED	(DETER_RPL_MAX_HELD / 2)
/* A context waits this long for its turn before the replay gives up. */
#define DETER_RPL_APP_WAIT	(10 * HZ)

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
	who = deter_conn_site_lock[site];
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
				  deter_rpl_seq(rpl, e), want, deter_rpl_lock_names[who]);
		deter_rpl_kick(rpl, 0);
	}
	spin_unlock(&rpl->lock);
	if (site == DETER_SITE_LOCK_APP) {
		deter_rpl_set_cpu(rpl);
		deter_rpl_task_set(rpl);
	}
	return true;
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
 * Is every context event left in the log the owner's segments and
 * batches? The socket then ends within this ownership. Under rpl->lock.
 */
static bool deter_rpl_owned_to_end(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *e;
	u32 i;

	for (i = rpl->ctx; (e = deter_rpl_at(rpl, i)); i++)
		if (deter_rpl_is_ctx(e) && !deter_rpl_is_owned(e))
			return false;
	return true;
}

/*
 * The socket died while its owner held it, with segments of its backlog
 * left in the log: TCP drops those unanswered once the socket is closed.
 * Drop the ones held, and those still to come when they come
 * (rpl->dead_from, deter_rpl_gone_in()). Return: false if any other
 * context event is left. Under rpl->lock.
 */
static bool deter_rpl_drop_dead_backlog(struct deter_rpl *rpl)
{
	const struct deter_replay_ev *e;
	struct sk_buff *skb;
	u32 i;

	if (!deter_rpl_owned_to_end(rpl))
		return false;
	for (i = rpl->ctx; (e = deter_rpl_at(rpl, i)); i++) {
		if (e->type != DETER_EV_RX)
			continue;
		skb = deter_rpl_held_find(rpl, e);
		if (skb) {
			__skb_unlink(skb, &rpl->held);
			kfree_skb(skb);
		}
	}
	rpl->dead_from = rpl->ctx;
	return true;
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
			deter_rpl_reinject(sk, skb, true);	/* deter_replay_sk_rx() takes it */
			continue;
		}
		deter_rpl_kick(rpl, 0);
		/*
		 * __tcp_close() empties the backlog with BHs off: no sleep
		 * there. A segment not yet come misses its batch, and the
		 * replay diverges where that shows.
		 */
		if (softirq_count())
			return;
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
				  deter_rpl_seq(rpl, deter_rpl_at(rpl, rpl->ctx)), want);
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

/*
 * A segment that found @sk before the socket died and was unhashed, but
 * its lock only after: TCP would drop it unanswered. In the original the
 * peer's segments did not queue up behind the one its socket died of:
 * this one's lookup came later, found no socket and drew the host's
 * reset. So it goes through the lookup again when the replay lets go
 * (deter_rpl_let_go()). In softirq, under RCU, holding @sk's spinlock.
 */
static bool deter_rpl_rx_dead(struct sock *sk, struct sk_buff *skb,
			      bool *taken)
{
	struct deter_rpl *rpl;

	if (sk->sk_state != TCP_CLOSE || !sock_flag(sk, SOCK_DEAD) ||
	    !READ_ONCE(deter_rpl_armed) || skb->protocol != htons(ETH_P_IP))
		return false;
	rpl = deter_rpl_find_sk(sk);
	if (!rpl || READ_ONCE(rpl->sk) != sk)
		return false;
	spin_lock(&rpl->lock);
	/* One of the dead socket's backlog: TCP drops it unanswered. */
	if (rpl->state == DETER_RPL_RUNNING ||
	    deter_rpl_gone_dead(rpl, ntohs(ip_hdr(skb)->id), deter_rpl_skb_ctl(skb)) ||
	    skb_queue_len(&rpl->held) >= DETER_RPL_MAX_HELD ||
	    !skb_dst_force(skb)) {
		spin_unlock(&rpl->lock);
		return false;
	}
	memmove(IPCB(skb), &TCP_SKB_CB(skb)->header.h4,
		sizeof(struct inet_skb_parm));
	__skb_queue_tail(&rpl->held, skb);
	*taken = true;
	deter_rpl_kick(rpl, 0);
	spin_unlock(&rpl->lock);
	return true;
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

bool deter_replay_sk_rx(struct sock *sk, struct sk_buff *skb, bool *taken)
{
	struct deter_rpl *rpl = deter_rpl_get(sk);
	const struct deter_replay_ev *e;
	struct deter_sock *ds;
	bool syn, ctl, owned, logged;
	u64 idx;
	u32 i;

	*taken = false;
	if (!rpl)
		return deter_rpl_rx_dead(sk, skb, taken);
	if (skb->protocol != htons(ETH_P_IP))
		return true;
	/*
	 * In the original the segment came from another host, so its data
	 * was its own; here veth hands over a clone of the sender's skb.
	 * Unshare it as a forwarding hop's skb_cow() does, so that its
	 * truesize, tailroom and whether TCP may steal its head (receive
	 * buffer charge, coalescing, scaling_ratio) come out as they did.
	 * Over lo (both ends on one host, then as now) the receiver got the
	 * sender's clone itself: left as it is. (tcp_v4_rcv() has cleared
	 * skb->dev; skb_iif says where it came in.)
	 */
	if (skb_cloned(skb) && skb->skb_iif != LOOPBACK_IFINDEX &&
	    pskb_expand_head(skb, 0, 0, GFP_ATOMIC)) {
		spin_lock(&rpl->lock);
		deter_rpl_diverge(rpl, "no memory to unshare a received segment");
		deter_rpl_kick(rpl, 0);
		spin_unlock(&rpl->lock);
		return true;
	}
	deter_rpl_set_cpu(rpl);
	ds = rpl->ds;
	syn = ((const struct tcphdr *)skb->data)->syn;
	ctl = deter_rpl_skb_ctl(skb);
	idx = deter_rpl_rx_idx(ds, skb);
	owned = sock_owned_by_user(sk);

	spin_lock(&rpl->lock);
	if (rpl->ended) {	/* held segments let go, and any later */
		spin_unlock(&rpl->lock);
		return true;
	}
	/* Over lo the original's arrivals were the sender's skbs too. */
	if (rpl->shaped && !syn && !ctl && skb->skb_iif != LOOPBACK_IFINDEX &&
	    deter_rpl_shape_rx(rpl, skb, idx, taken)) {
		spin_unlock(&rpl->lock);
		return true;
	}
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
		if (skb->mark == DETER_RPL_SHAPED_MARK)
			skb->mark = 0;
		deter_rpl_ctx_next(rpl);
		spin_unlock(&rpl->lock);
		return true;
	}
	/* Due later (or due now, but the owner is not the one logged). */
	i = deter_rpl_rx_find(rpl, syn, ctl, idx);
	/*
	 * A segment past every one the log has came, in the original, after
	 * the socket's log ended: to the time-wait socket that took over
	 * (a FIN answering ours), or to none. So did a control segment the
	 * log has not (IP ID 0: the peer host's reset for a socket gone,
	 * which a slower replay of this end can see before its own end).
	 * Either goes there when the replay ends (deter_rpl_work()).
	 */
	logged = i < rpl->hdr.nevents;
	if (logged && deter_rpl_segs_differ(rpl, &rpl->ev[i], skb, idx)) {
		spin_unlock(&rpl->lock);
		return true;
	}
	if (!logged && (syn || (!ctl && (!ds->rx_primed || idx <= rpl->rx_last)))) {
		char want[48];

		deter_rpl_describe(e, want, sizeof(want));
		deter_rpl_diverge(rpl, "event %u: expected %s, found %ssegment ipid %llu",
				  deter_rpl_seq(rpl, e), want, syn ? "SYN " : "",
				  idx & 0xffff);
	} else if (skb_queue_len(&rpl->held) >= DETER_RPL_MAX_HELD) {
		deter_rpl_diverge(rpl, "event %u: more than %u segments held",
				  deter_rpl_seq(rpl, e), DETER_RPL_MAX_HELD);
	} else if (!logged && ctl && rpl->held_unlogged >= DETER_RPL_MAX_UNLOGGED) {
		deter_rpl_diverge(rpl, "event %u: over %u unlogged control segments held",
				  deter_rpl_seq(rpl, e), DETER_RPL_MAX_UNLOGGED);
	} else if (!skb_dst_force(skb)) {	/* it outlives this RCU section */
		deter_rpl_diverge(rpl, "event %u: no route to hold segment ipid %llu with",
				  deter_rpl_seq(rpl, e), idx & 0xffff);
	} else {
		/* Re-entered into tcp_v4_rcv() later: restore its IPCB. */
		memmove(IPCB(skb), &TCP_SKB_CB(skb)->header.h4,
			sizeof(struct inet_skb_parm));
		__skb_queue_tail(&rpl->held, skb);
		rpl->held_unlogged += !logged && ctl;
		*taken = true;
		deter_rpl_kick(rpl, i == rpl->ctx ? 1 : 0);
		spin_unlock(&rpl->lock);
		return true;
	}
	deter_rpl_kick(rpl, 0);
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
	rpl->ds->called = true;
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

		/* The replay's generator gives its pipe the logged room. */
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

		/* They decide where TCP merges and splits the bytes. */
		deter_rpl_pages(e->b, want, sizeof(want));
		deter_rpl_pages(pages, found, sizeof(found));
		deter_rpl_diverge(rpl, "event %u: a spliced send's pages expected %s, found %s",
				  e->seq, want, found);
	} else if ((e->b ^ pages) & DETER_SEND_ERRQ) {
		/* Zerocopy and timestamps: the replay makes neither. */
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

/*
 * The passive end's first arrival, @skb, which its log has no RX event
 * for (VALUE CHILD_IPID): as many segments as the original's, checked
 * like every later arrival in deter_replay_sk_rx(). Under rpl->lock.
 */
static bool deter_rpl_child_check(struct deter_rpl *rpl,
				  const struct sock *newsk,
				  const struct sk_buff *skb)
{
	const struct deter_replay_ev *e;
	u32 i = deter_rpl_child_ev(rpl), segs = deter_conn_rx_segs(skb);

	if (skb->protocol != htons(ETH_P_IP) || i == U32_MAX)
		return false;
	e = &rpl->ev[i];
	if (rpl->child_why[0]) {
		deter_rpl_diverge(rpl, "event %u: %s", e->seq, rpl->child_why);
		return true;
	}
	if (tcp_sk(newsk)->total_rto != deter_rpl_req_timeouts_logged(rpl)) {
		deter_rpl_diverge(rpl, "event %u: the request socket timed out %u times, logged %u",
				  e->seq, tcp_sk(newsk)->total_rto,
				  deter_rpl_req_timeouts_logged(rpl));
		return true;
	}
	if (segs == max_t(u64, e->b, 1))
		return false;
	deter_rpl_diverge(rpl, DETER_RPL_SEGS_FMT, e->seq,
			  (u64)ntohs(ip_hdr(skb)->id), segs, max_t(u64, e->b, 1),
			  deter_rpl_regrouped);
	return true;
}

/*
 * What reqsk_timer_handler() does when a request socket @sk times out
 * and sends its SYN-ACK again, here where the log has it: the timer
 * itself does nothing while its script waits (DETER_VAL_REQ_TIMER).
 */
static void deter_rpl_req_timeout(struct sock *sk)
{
	struct request_sock *req = inet_reqsk(sk);
	struct sock *lsk = req->rsk_listener;

	/* Another CPU made the child, or dropped the request: no timeout. */
	if (sk_unhashed(sk) || inet_sk_state_load(lsk) != TCP_LISTEN)
		return;
	req->rsk_ops->syn_ack_timeout(req);
	inet_rtx_syn_ack(lsk, req);
	if (req->num_timeout++ == 0)
		atomic_dec(&inet_csk(lsk)->icsk_accept_queue.young);
	/* Only a timer still pending holds the request: never arm one anew. */
	mod_timer_pending(&req->rsk_timer,
			  jiffies + reqsk_timeout(req, TCP_RTO_MAX));
}

/**
 * deter_replay_req_rx() - a segment reached a request socket
 * @sk: the request socket (TCP_NEW_SYN_RECV), unlocked; in softirq,
 *	under RCU
 * @skb: the segment, its IPCB intact
 *
 * The request socket's timeouts the log has before this segment run
 * first. The segments that will create a replayed passive end are made
 * its first arrival as the original's driver built it, when its log has
 * that arrival's shape (deter_rpl_shape_child()), and go on at once.
 *
 * Return: true if the replay took @skb.
 */
bool deter_replay_req_rx(struct sock *sk, struct sk_buff *skb)
{
	struct sk_buff_head out;
	struct deter_rpl *rpl;
	struct sk_buff *f;
	bool taken = false;
	u32 due;

	if (!READ_ONCE(deter_rpl_armed) || skb->protocol != htons(ETH_P_IP) ||
	    skb->mark == DETER_RPL_SHAPED_MARK)
		return false;
	/* Addresses are the listener's, as for the child: matched by ports. */
	rpl = deter_rpl_find_child(sk->sk_num, ntohs(sk->sk_dport));
	if (!rpl)
		return false;
	__skb_queue_head_init(&out);
	spin_lock(&rpl->lock);
	if (rpl->ended || rpl->child_why[0]) {
		/* Over, or its first arrival failed: segments go on as they are. */
		spin_unlock(&rpl->lock);
		return false;
	}
	due = deter_rpl_req_timeouts_due(rpl, U32_MAX);
	rpl->req_rx++;
	spin_unlock(&rpl->lock);
	while (due--)
		deter_rpl_req_timeout(sk);
	spin_lock(&rpl->lock);
	/* Over lo the original's arrivals were the sender's skbs too. */
	if (rpl->shaped && skb->skb_iif != LOOPBACK_IFINDEX)
		taken = deter_rpl_shape_child(rpl, skb, &out);
	spin_unlock(&rpl->lock);
	while ((f = __skb_dequeue(&out)))
		deter_rpl_reinject(sk, f, false);
	return taken;
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
	bool diverged, bound;
	u32 now;

	if (!READ_ONCE(deter_rpl_armed))
		return;
	/* Addresses are still the listener's: matched by ports. */
	rpl = deter_rpl_find_child(newsk->sk_num, ntohs(newsk->sk_dport));
	if (!rpl)
		return;
	spin_lock_bh(&rpl->lock);
	deter_rpl_bind(rpl, newsk);
	bound = rpl->sk == newsk;
	diverged = skb && bound && deter_rpl_child_check(rpl, newsk, skb);
	now = rpl->jiffies;
	spin_unlock_bh(&rpl->lock);
	if (diverged)
		deter_rpl_kick(rpl, 0);
	/*
	 * This context goes on with the child (tcp_child_process():
	 * tcp_init_transfer() stamps it with jiffies); it answers for the
	 * child's script, not for whichever this CPU ran last.
	 */
	if (bound)
		deter_rpl_set_cpu(rpl);
	tp->lsndtime = now;
	tp->rcv_tstamp = now;
	tp->snd_cwnd_stamp = now;
	icsk->icsk_ack.lrcvtime = now;
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
		if (e && sock_owned_by_user_nocheck(sk) &&
		    deter_rpl_drop_dead_backlog(rpl))
			e = NULL;
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
