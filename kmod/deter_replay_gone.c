// SPDX-License-Identifier: GPL-2.0
/*
 * Replay: segments for a replayed socket that TCP's lookup no longer finds.
 *
 * A socket that closes (an abort in close(), a reset it received) is
 * unhashed there and then. In the original, segments the peer had sent
 * before still reached it: found by a lookup that came first, they waited
 * for its lock, or sat in its backlog while its owner closed it. The
 * replay's arrivals come at their own pace, and one that comes after the
 * unhash would find no socket here and draw the host's reset. So on a
 * host that replays, a netfilter hook at LOCAL_IN, after the corrector,
 * looks at each TCP segment for a replayed end whose socket is closed:
 *
 *   replay running, segment in the log  -> held (NF_STOLEN); re-entered
 *                                           into TCP to the socket when
 *                                           due, as any held segment
 *   replay over, segment of the backlog  -> dropped: TCP dropped it
 *     the socket died with (dead_from)       unanswered
 *   otherwise                            -> on to TCP
 *
 * The hooks are registered in every network namespace once a replay is
 * loaded (a recording host never has them) and stay until the module
 * goes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_replay_gone.h"

#include <linux/ip.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_replay_caller.h"
#include "deter_replay_ctl.h"
#include "deter_replay_seq.h"

static DEFINE_MUTEX(deter_rpl_gone_mutex);
static bool deter_rpl_gone_on;

/**
 * deter_rpl_gone_dead() - was this segment in a dead socket's backlog?
 * @rpl: the script, its socket dead with segments left (rpl->dead_from)
 * @id: the segment's IP ID
 * @ctl: the peer's control socket sent it (deter_rpl_skb_ctl())
 *
 * Under rpl->lock.
 *
 * Return: whether the log has it among those left.
 */
bool deter_rpl_gone_dead(struct deter_rpl *rpl, u16 id, bool ctl)
{
	const struct deter_replay_ev *e;
	u32 i;

	if (!rpl->dead_from)
		return false;
	for (i = rpl->dead_from; (e = deter_rpl_at(rpl, i)) &&
	     i - rpl->dead_from < DETER_RPL_LOOKAHEAD; i++)
		if (e->type == DETER_EV_RX && !(e->b & DETER_RX_SYN) &&
		    (ctl ? e->b & DETER_RX_CTL :
		     !(e->b & DETER_RX_CTL) && (u16)e->a == id))
			return true;
	return false;
}

static unsigned int deter_rpl_gone_in(void *priv, struct sk_buff *skb,
				      const struct nf_hook_state *state)
{
	unsigned int verdict = NF_ACCEPT;
	const struct iphdr *iph;
	const struct tcphdr *th;
	struct deter_rpl *rpl;
	struct tcphdr _th;
	struct sock *sk;
	bool ctl;

	if (!READ_ONCE(deter_rpl_armed))
		return NF_ACCEPT;
	iph = ip_hdr(skb);
	if (iph->protocol != IPPROTO_TCP || ip_is_fragment(iph))
		return NF_ACCEPT;
	th = skb_header_pointer(skb, ip_hdrlen(skb), sizeof(_th), &_th);
	if (!th || th->syn)
		return NF_ACCEPT;
	rpl = deter_rpl_find(ntohl(iph->daddr), ntohs(th->dest),
			     ntohl(iph->saddr), ntohs(th->source));
	if (!rpl)
		return NF_ACCEPT;
	sk = READ_ONCE(rpl->sk);
	/* tcp_set_state() unhashes a closing socket before it says so. */
	if (!sk || !net_eq(sock_net(sk), state->net) ||
	    (READ_ONCE(sk->sk_state) != TCP_CLOSE && !sk_unhashed(sk)))
		return NF_ACCEPT;
	/* Held segments are read as TCP's (deter_rpl_held_find()). */
	if (!pskb_may_pull(skb, ip_hdrlen(skb) + sizeof(struct tcphdr)))
		return NF_ACCEPT;
	iph = ip_hdr(skb);
	ctl = deter_rpl_skb_ctl(skb);

	spin_lock_bh(&rpl->lock);
	if (rpl->state != DETER_RPL_RUNNING || !rpl->ds) {
		if (deter_rpl_gone_dead(rpl, ntohs(iph->id), ctl))
			verdict = NF_DROP;
	} else if (!rpl->ended &&
		   deter_rpl_rx_find(rpl, false, ctl, deter_rpl_rx_idx(rpl->ds, skb)) <
		   rpl->hdr.nevents) {
		if (skb_queue_len(&rpl->held) >= DETER_RPL_MAX_HELD) {
			deter_rpl_diverge(rpl, "more than %u segments held",
					  DETER_RPL_MAX_HELD);
			deter_rpl_kick(rpl, 0);
		} else if (skb_dst_force(skb)) {
			/*
			 * As tcp_v4_rcv() would hold it: no socket early
			 * demux found, no conntrack, no device (re-entry
			 * finds it by skb_iif); the IP header pulled as by
			 * ip_local_deliver_finish().
			 */
			skb_orphan(skb);
			nf_reset_ct(skb);
			skb->dev = NULL;
			skb_clear_delivery_time(skb);
			__skb_pull(skb, skb_network_header_len(skb));
			__skb_queue_tail(&rpl->held, skb);
			deter_rpl_kick(rpl, 0);
			verdict = NF_STOLEN;
		}
	}
	spin_unlock_bh(&rpl->lock);
	return verdict;
}

static const struct nf_hook_ops deter_rpl_gone_ops = {
	.hook		= deter_rpl_gone_in,
	.pf		= NFPROTO_IPV4,
	.hooknum	= NF_INET_LOCAL_IN,
	.priority	= NF_IP_PRI_LAST,
};

static int __net_init deter_rpl_gone_net_init(struct net *net)
{
	return nf_register_net_hook(net, &deter_rpl_gone_ops);
}

static void __net_exit deter_rpl_gone_net_exit(struct net *net)
{
	nf_unregister_net_hook(net, &deter_rpl_gone_ops);
}

static struct pernet_operations deter_rpl_gone_net_ops = {
	.init = deter_rpl_gone_net_init,
	.exit = deter_rpl_gone_net_exit,
};

/**
 * deter_rpl_gone_start() - hook LOCAL_IN in every network namespace
 *
 * Once; process context.
 *
 * Return: 0 or a negative errno.
 */
int deter_rpl_gone_start(void)
{
	int err = 0;

	mutex_lock(&deter_rpl_gone_mutex);
	if (!deter_rpl_gone_on) {
		err = register_pernet_subsys(&deter_rpl_gone_net_ops);
		deter_rpl_gone_on = !err;
	}
	mutex_unlock(&deter_rpl_gone_mutex);
	return err;
}

/**
 * deter_rpl_gone_exit() - remove the hooks, if there are any
 */
void deter_rpl_gone_exit(void)
{
	mutex_lock(&deter_rpl_gone_mutex);
	if (deter_rpl_gone_on)
		unregister_pernet_subsys(&deter_rpl_gone_net_ops);
	deter_rpl_gone_on = false;
	mutex_unlock(&deter_rpl_gone_mutex);
}
