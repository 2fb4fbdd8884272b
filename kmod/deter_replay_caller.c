// SPDX-License-Identifier: GPL-2.0
/*
 * Replay's handler caller: run what the log has next when no real
 * context will.
 *
 * While a socket is replayed its real timers and TSQ tasklet do not run
 * their handlers (deter_replay_sk_lock() skips them), segments that come
 * before their turn are held, and ICMP errors are not let through. One
 * work item per script looks at the context event the sequencer has
 * next and makes it happen, in process context:
 *
 *   LOCK timer (due)   --> the timer's own function, marked as ours
 *                          (deter_rpl_firing), BH off
 *   LOCK TSQ           --> lock_sock(), set TSQ_DEFERRED, release_sock()
 *   RX                 --> the held segment, back into tcp_v4_rcv()
 *   NET ICMP           --> a built ICMP error into tcp_v4_err()
 *   LOCK APP           --> wake the application sleeping for its turn
 *   owned events       --> left to the owner (deter_replay_hook.c)
 *
 * and loops, at most 256 events a run, until the next event is not its
 * to make: then whoever moves the cursor kicks it again
 * (deter_rpl_ctx_next()). While the owner it needs is busy it polls
 * once a jiffy; it never spins. When a script ends or diverges it lets
 * every held segment go into TCP and wakes everyone waiting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_caller.h"

#include <linux/icmp.h>
#include <linux/ip.h>
#include <linux/skbuff.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/ip.h>
#include <net/protocol.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "deter_replay_ctx.h"
#include "deter_replay_seq.h"

static struct workqueue_struct *deter_rpl_wq;

/**
 * deter_rpl_kick() - kick the handler caller and wake apps waiting for
 *	their turn
 * @rpl: the script
 * @delay: in jiffies
 */
void deter_rpl_kick(struct deter_rpl *rpl, unsigned long delay)
{
	wake_up_all(&rpl->wq);
	mod_delayed_work(deter_rpl_wq, &rpl->work, delay);
}

/**
 * deter_rpl_ctx_next() - the context event at rpl->ctx was taken
 * @rpl: the script; under rpl->lock, in the context that took the lock
 *
 * Moves the cursor to the next one and kicks the handler caller.
 */
void deter_rpl_ctx_next(struct deter_rpl *rpl)
{
	deter_rpl_ctx_advance(rpl);
	deter_rpl_kick(rpl, 0);
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
void deter_rpl_app_wake(struct deter_rpl *rpl, struct sock *sk,
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

/*
 * Re-enter a held segment into TCP: to @sk when it is due there (@to_sk),
 * else to whichever socket the lookup finds. A due segment goes to @sk as
 * early demux hands one over, whether or not @sk is still hashed: a
 * segment the original backlogged just before close() unhashed the
 * socket is due there even when it came later here.
 */
void deter_rpl_reinject(struct sock *sk, struct sk_buff *skb, bool to_sk)
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
	if (to_sk) {
		sock_hold(sk);
		skb->sk = sk;
		skb->destructor = sock_edemux;
	}
	local_bh_disable();
	ipprot->handler(skb);
	local_bh_enable();
	rcu_read_unlock();
}

/*
 * The replay is over: what is held goes to whichever socket the lookup
 * finds, and from now on every arrival goes to TCP (deter_replay_sk_rx()),
 * not back onto the queue. Process context, not holding rpl->lock.
 */
void deter_rpl_let_go(struct deter_rpl *rpl)
{
	struct sk_buff *skb;

	spin_lock_bh(&rpl->lock);
	rpl->ended = true;
	while ((skb = __skb_dequeue(&rpl->held)) ||
	       (skb = __skb_dequeue(&rpl->frames))) {
		spin_unlock_bh(&rpl->lock);
		if (rpl->sk)
			deter_rpl_reinject(rpl->sk, skb, false);
		else
			kfree_skb(skb);
		spin_lock_bh(&rpl->lock);
	}
	spin_unlock_bh(&rpl->lock);
}

/* The handler caller: make the script's next context events happen. */
void deter_rpl_work(struct work_struct *work)
{
	struct deter_rpl *rpl = container_of(to_delayed_work(work),
					     struct deter_rpl, work);
	const struct deter_replay_ev *e;
	struct sk_buff *found;
	struct sock *sk;
	bool owned, want_owned, ready, woken;
	int rounds;

	for (rounds = 0; rounds < 256; rounds++) {
		spin_lock_bh(&rpl->lock);
		sk = rpl->sk;
		e = deter_rpl_at(rpl, rpl->ctx);
		if (rpl->state == DETER_RPL_RUNNING && !e && rpl->ds) {
			/*
			 * The log is over, the socket not yet destroyed: what
			 * is held came, in the original, after its log ended
			 * at its destruction (deter_replay_close()), so it
			 * stays held till then.
			 */
			spin_unlock_bh(&rpl->lock);
			wake_up_all(&rpl->wq);
			return;
		}
		if (rpl->state != DETER_RPL_RUNNING || !rpl->ds) {
			/*
			 * Let anything held go: the replay is over. What
			 * comes from now on, these included, goes to TCP
			 * (deter_replay_sk_rx()), not back onto the queue.
			 */
			spin_unlock_bh(&rpl->lock);
			deter_rpl_let_go(rpl);
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
			deter_rpl_reinject(sk, found, true);
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

/**
 * deter_rpl_caller_init() - create the handler caller's workqueue
 *
 * Ordered: one script's work never runs beside itself.
 *
 * Return: 0, or -ENOMEM.
 */
int deter_rpl_caller_init(void)
{
	deter_rpl_wq = alloc_ordered_workqueue("deter_replay", 0);
	return deter_rpl_wq ? 0 : -ENOMEM;
}

/**
 * deter_rpl_caller_exit() - destroy it, once every script's work is
 *	cancelled
 */
void deter_rpl_caller_exit(void)
{
	destroy_workqueue(deter_rpl_wq);
}
