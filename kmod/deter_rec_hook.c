// SPDX-License-Identifier: GPL-2.0
/*
 * Recording's hooks: turn what the TCP hooks see into deter's events.
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
 *   tcp_v4_err               --> NET(ICMP)
 *   tcp_sendmsg/recvmsg/...  --> CALL(size, flags, tid), CALL_DONE(ret)
 *   socket calls             --> CONFIG(field, value)     deter_rec_settings.c
 *   kernel reads             --> VALUE(what, ...)         deter_rec_value.c
 *   net_dev_start_xmit       --> SAMPLE(index, ns, gap)   Algorithm 1
 *   ESTABLISHED              --> deter_conn: 4-tuple, ISNs, IP ID, options
 *   every 64th event, close  --> deter_state: checkpoint / summary
 *   close                    --> NET(TX_END): the next IP ID it had
 *
 * Network actions are inferred at the receiver from IP IDs: a connected
 * 6.12 socket numbers its packets from a per-socket counter advanced by
 * each skb's segment count, so an ID above the expected one opens a gap
 * (drop, or reordering if the missing IDs arrive LATE) and CE marks come
 * from the IP header. SYNs are left out of the series: a SYN-ACK carries
 * ID 0. The recorder folds GAP and LATE into drops and reorderings.
 *
 * The series' edges no later arrival shows: a passive end counts the
 * peer's packets lost between its SYN and its first arrival
 * (deter_rec_synack_emit()); an active end cannot know the passive
 * end's first ID, nor either end the peer's last before its socket
 * closed, so each end logs where its own series ended (TX_END) and the
 * pair of logs counts the rest (log/rec_edge.c).
 *
 * A connection is selected when it starts (SYN_SENT, or its passive
 * child's creation) and its log opens with its identity once it is
 * established; a child that lost the race to the established hash is
 * discarded at close. A timer or tasklet that finds the socket owned
 * only sets a bit: its handler is logged where the owner runs it, in
 * tcp_release_cb().
 *
 * Nothing here sleeps or allocates; the cost while disarmed is one
 * test of deter_rec_armed per hook.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_rec_hook.h"

#include <kunit/visibility.h>
#include <linux/icmp.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/tracepoint.h>
#include <linux/unaligned.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_ipid.h"
#include "deter_rec_ctl.h"
#include "deter_rec_emit.h"
#include "deter_rec_settings.h"
#include "deter_rec_value.h"

static struct tracepoint *deter_rec_tp_xmit;	/* net_dev_start_xmit */

static const u8 deter_rec_call_abi[DETER_CALL_MAX] = {
	[DETER_CALL_SENDMSG] = DETER_ABI_CALL_SENDMSG,
	[DETER_CALL_RECVMSG] = DETER_ABI_CALL_RECVMSG,
	[DETER_CALL_SHUTDOWN] = DETER_ABI_CALL_SHUTDOWN,
	[DETER_CALL_CLOSE] = DETER_ABI_CALL_CLOSE,
	[DETER_CALL_SETSOCKOPT] = DETER_ABI_CALL_SETSOCKOPT,
	[DETER_CALL_SPLICE_READ] = DETER_ABI_CALL_SPLICE_READ,
	[DETER_CALL_RECV_ERRQUEUE] = DETER_ABI_CALL_RECV_ERRQUEUE,
};

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
 * The connection's identity, its settings, and whether its SYN asked for
 * a Fast Open cookie or had one (the peer's log says so from the SYN:
 * deter_rec_synack_emit()). Once, at ESTABLISHED or at close.
 */
static void deter_rec_conn(struct deter_sock *ds, struct sock *sk,
			   bool active)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 flags = deter_conn_negotiated(tp);

	if (ds->conn_sent)
		return;
	ds->conn_sent = true;
	deter_conn_hash(ds);
	if (active)
		flags |= DETER_CONN_ACTIVE;
	flags |= (u32)inet_csk(sk)->icsk_ack.pingpong << DETER_CONN_PINGPONG_SHIFT;
	deter_rec_conn_ev(ds, sk, flags);
	deter_rec_settings(ds, sk);
	if (active && (tp->syn_fastopen || tp->syn_data))
		deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING,
			       DETER_MISSING_FASTOPEN, 0, 0);
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
	seq = deter_rec_emit(ds, DETER_EV_LOCK, deter_conn_site_lock[site],
			     a, 0, 0);
	if (site == DETER_SITE_LOCK_APP) {
		deter_rec_jif_step_begin();
		deter_rec_config(ds, sk);
	}
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

/*
 * The owner of @sk is about to release it: its last backlog check, and
 * the end of the step whose jiffies deter_rec_jif_step_begin() held. The
 * handlers release_sock() still runs log events of their own.
 */
void deter_rec_release(struct sock *sk)
{
	deter_rec_jif_step_end();
	deter_rec_backlog_check(sk);
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

/*
 * Take the shape of arrival @skb as the last one logged. Return: whether
 * it differs from the one before (struct deter_shape).
 */
static bool deter_rec_shape_take(struct deter_sock *ds,
				 const struct sk_buff *skb)
{
	struct deter_shape s;
	u64 a, b, c;

	deter_shape_of(skb, &ds->rx_tail, &s);
	deter_shape_pack(&s, &a, &b, &c);
	if (a == ds->rx_shape[0] && b == ds->rx_shape[1] && c == ds->rx_shape[2])
		return false;
	ds->rx_shape[0] = a;
	ds->rx_shape[1] = b;
	ds->rx_shape[2] = c;
	return true;
}

/* Log the shape of the arrival whose RX comes next, unless it is the last. */
static void deter_rec_shape(struct deter_sock *ds, const struct sk_buff *skb)
{
	if (deter_rec_shape_take(ds, skb))
		deter_rec_emit(ds, DETER_EV_NET, DETER_NET_SHAPE, ds->rx_shape[0],
			       ds->rx_shape[1], ds->rx_shape[2]);
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
		/* A SYN-ACK's TS value tells the replay which ones came. */
		seq = deter_rec_emit(ds, DETER_EV_RX, 0, 0,
				     flags | DETER_RX_SYN,
				     deter_rec_tsval(th, &tsval) ?
				     (u64)tsval + 1 : 0);
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
	deter_rec_shape(ds, skb);
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
	if (call != DETER_CALL_RECV_ERRQUEUE)
		ds->called = true;
	if (deter_rec_is_read(call) || call == DETER_CALL_SHUTDOWN ||
	    call == DETER_CALL_CLOSE)
		deter_rec_reads_seen(ds, sk);
	if (deter_rec_is_read(call))
		ds->rd_open++;
	if (call == DETER_CALL_SENDMSG)
		deter_rec_page_frag_send(ds, sk, false);
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
	if (call == DETER_CALL_SENDMSG)
		deter_rec_page_frag_send(ds, sk, true);
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
	/* tcp_create_openreq_child() counted the request's timeouts. */
	ds->child_rto = tcp_sk(newsk)->total_rto;
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
		/*
		 * A data segment (the handshake's ACK was lost): the child
		 * queues it as it came, so its shape is logged with it
		 * (deter_rec_synack_emit()), for a replay to rebuild.
		 */
		ds->child_shape = !ds->child_syn &&
				  skb->len > tcp_hdrlen(skb) &&
				  deter_rec_shape_take(ds, skb);
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
	/*
	 * Where its IP ID series ended: the socket sends nothing more (a
	 * time-wait socket's answers come from the host's control socket),
	 * so the peer's log can tell its last packets that never came.
	 */
	deter_rec_emit(ds, DETER_EV_NET, DETER_NET_TX_END,
		       (u16)atomic_read(&inet_sk(sk)->inet_id), 0, 0);
	deter_rec_state_ev(ds, sk, DETER_STATE_SUMMARY, ds->rx_zero_wnd);
	WRITE_ONCE(ds->rec, false);
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

/**
 * deter_rec_state() - a tracked socket changed state (inet_sock_set_state)
 * @ds: its state
 * @sk: the socket
 * @oldstate: the TCP state it left
 * @newstate: the one it entered
 *
 * Active connections are selected here, at SYN_SENT; a recorded one's
 * log opens with its identity at ESTABLISHED.
 */
void deter_rec_state(struct deter_sock *ds, struct sock *sk, int oldstate,
		     int newstate)
{
	if (newstate == TCP_ESTABLISHED)
		ds->established = true;
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
}

/**
 * deter_rec_init() - attach the transmit probe
 *
 * Return: 0, or -ENOENT when its tracepoint is missing, or the error of
 * registering it.
 */
int deter_rec_init(void)
{
	for_each_kernel_tracepoint(deter_rec_find_tp, NULL);
	if (!deter_rec_tp_xmit) {
		pr_err("tracepoint net_dev_start_xmit not found\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(deter_rec_tp_xmit, deter_rec_xmit,
					 NULL);
}

/**
 * deter_rec_exit() - disarm and detach the probe; returns once none is
 *	running
 */
void deter_rec_exit(void)
{
	deter_rec_disarm();
	tracepoint_probe_unregister(deter_rec_tp_xmit, deter_rec_xmit, NULL);
	tracepoint_synchronize_unregister();
}
