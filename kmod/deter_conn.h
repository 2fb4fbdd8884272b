/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's per-socket state: struct deter_sock, created for
 * every TCP socket while deter.ko is loaded and freed when the socket is
 * destroyed or the module unloads.
 *
 * Locking: the receive-side and recording fields are used only under the
 * socket lock (the hooks that touch them hold it); the transmit-side
 * sampler has tx_lock, because packets reach the device from contexts
 * that do not hold the socket lock (qdisc dequeue). The state is freed
 * with RCU: the transmit probe may still look at it while the socket is
 * destroyed.
 */
#ifndef _DETER_CONN_H
#define _DETER_CONN_H

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <net/deter.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_sample.h"
#include "deter_shape.h"

struct deter_rpl;
struct net;
struct seq_file;
struct sk_buff;
struct sock;

/* A memory accounting value (DETER_VAL_MEM_*, DETER_VAL_OOM) as the log's kind. */
static inline unsigned int deter_value_mem_kind(enum deter_value what)
{
	switch (what) {
	case DETER_VAL_MEM_PRESSURE:
		return DETER_MEM_PRESSURE;
	case DETER_VAL_MEM_ABOVE_LOW:
		return DETER_MEM_ABOVE_LOW;
	case DETER_VAL_MEM_SUPPRESS:
		return DETER_MEM_SUPPRESS;
	default:
		return DETER_MEM_OOM;
	}
}

/* A value the metrics cache gives (DETER_VAL_CACHED_*) as the log's kind. */
static inline unsigned int deter_value_cached_kind(enum deter_value what)
{
	BUILD_BUG_ON(DETER_VAL_CACHED_RTT - DETER_VAL_CACHED_CWND_CLAMP !=
		     DETER_HOST_CACHED_RTT - DETER_HOST_CACHED_CWND_CLAMP);
	return DETER_HOST_CACHED_CWND_CLAMP + (what - DETER_VAL_CACHED_CWND_CLAMP);
}

/* What tcp_init_metrics() gives @sk of a value when the cache holds none. */
static inline u32 deter_value_cached_none(const struct sock *sk,
					  enum deter_value what)
{
	switch (what) {
	case DETER_VAL_CACHED_CWND_CLAMP:
		return ~0U;
	case DETER_VAL_CACHED_SSTHRESH:
		return TCP_INFINITE_SSTHRESH;
	case DETER_VAL_CACHED_REORDERING:
		return READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_reordering);
	default:
		return 0;
	}
}

/*
 * One event waiting in its connection's batch of DETER_EV_BATCH (the
 * tracepoint and the ring buffer cost per record, not per byte); fields
 * as deter_abi.h has them.
 */
struct deter_rec_ev {
	u64 a, b, c;
	u32 seq;
	u16 type, sub;
};

struct deter_sock {
	struct list_head node;		/* on deter_conn_list */
	struct hlist_node hnode;	/* in deter_conn_hash, by 4-tuple */
	bool hashed;			/* hnode is in the table */
	struct sock *sk;		/* held (sock_hold) while listed */
	u64 conn;			/* connection id, unique per boot */
	atomic_t seq;			/* per-socket event sequence */
	bool rec;			/* this connection is being recorded */
	bool conn_sent;			/* its identity was emitted */
	bool child;			/* a passive open's child socket */
	bool established;		/* it reached TCP_ESTABLISHED */

	/* receive side, under the socket lock */
	bool rx_primed;			/* rx_next is known */
	u64 rx_ref;			/* last extended IP ID seen */
	u16 child_ipid;			/* the segment that created a child */
	u16 child_segs;			/* its segments (GRO) */
	bool child_syn;			/* it was a SYN (TCP Fast Open) */
	bool child_shape;		/* it had payload: rx_shape is its shape */
	bool child_rto;			/* its SYN-ACK timer expired first */
	u64 rx_next;			/* IP ID index expected next */
	u32 rx_zero_wnd;		/* segments advertising a zero window */
	u64 rx_shape[3];		/* the last NET SHAPE logged: a, b, c */
	struct deter_shape_tails rx_tail; /* recent arrivals' last fragments */

	/* owner only: times it looked at its backlog, this ownership */
	u32 bl_checks;
	/*
	 * Under the socket lock: checks of a usually-false test that found
	 * it false, in a row (TSQ full, autocork, segment still queued).
	 */
	u32 tsq_room;
	u32 autocork_idle;
	u32 hostq_gone;
	/*
	 * Under the socket lock: the host's usual answers (a segment taken,
	 * a wait that did not time out) since its last unusual one.
	 */
	u32 host_run;
	/*
	 * Under the socket lock: memory accounting decisions (enum
	 * deter_abi_mem) since the last one that changed, and each kind's
	 * current outcome, a bit per kind (record and replay).
	 */
	u32 mem_run;
	u8 mem_state;
	/* under the socket lock: app-limited host-queue checks, as above */
	u32 busy_run;
	bool busy;
	/* under the socket lock: SOCK_NOSPACE at tcp_check_space()'s last look */
	bool nospace;
	/* owner only: its backlog reads that found it empty, in a row */
	u32 bl_empty;
	/* owner only: page-fragment refills that kept going, in a row */
	u32 pf_same;
	/* the fragment is where this socket's last logged refill left it */
	bool pf_seen;
	/* owner only: where the last send left the fragment (compared only) */
	const struct page *pf_page;
	u32 pf_off, pf_size;
	bool unseen_calls;		/* MISSING CALLS was logged */
	/* under the socket lock: a locked socket call reached deter */
	bool called;
	bool connect_waited;		/* connect()'s first wait was seen */
	/* owner only: read calls under way; copied_seq after the last */
	bool rd_known;
	u16 rd_open;
	u32 rd_end;
	/*
	 * Owner only: the spliced send under way (deter_conn_send_pages()),
	 * from its start to its CALL_DONE: its bvecs as it began, their
	 * layout (DETER_SPLICE_*); and where the last spliced send's bytes
	 * stopped, a page (compared, never used) and the offset after them.
	 * And what any send under way puts on the error queue (DETER_SEND_*).
	 */
	u64 sp_send;
	/* owner only: DETER_VAL_PIPE_ROOM, for the splice read it starts */
	u32 pipe_room;
	const struct bio_vec *sp_bvec;
	unsigned long sp_nr;
	size_t sp_skip;
	u64 sp_layout;
	const struct page *sp_page;
	u32 sp_end;

	/*
	 * Configuration last recorded, under the socket lock: by enum
	 * deter_cfg, SYSCTL's a digest of the namespace's sysctls TCP reads
	 * once established; digests of its route's metrics (0: no route
	 * then) and of the parameters of param_cc, its congestion control
	 * then; when to look for changes in them again (jiffies).
	 */
	u64 cfg[DETER_CFG_MAX];
	u64 route_sum;
	u64 param_sum;
	const void *param_cc;
	unsigned long settings_next;
	u64 tcpopt[DETER_TCPOPT_MAX];	/* CFG_TCP's, by enum deter_tcpopt */

	/* kernel values last recorded */
	bool jif_primed;		/* jif_last is set */
	unsigned long jif_last;		/* jiffies at the last event */
	u64 clk_last;			/* last TCP clock value, ns */

	struct deter_rpl *rpl;		/* replay script, when replayed */

	/* events recorded, not yet emitted: any context, under ev_lock */
	spinlock_t ev_lock;
	u32 ev_n;
	struct deter_rec_ev ev[DETER_EV_BATCH];

	/* transmit side: send-time sampling */
	spinlock_t tx_lock;		/* protects the fields below */
	bool tx_primed;			/* tx_ref is known */
	u64 tx_ref;			/* last extended IP ID sent */
	struct deter_sampler sampler;	/* Algorithm 1 state */

	struct rcu_head rcu;
};

/*
 * Whether a wait that ends now (DETER_VAL_WAIT_LEFT) is an active end's
 * connect() waiting for the handshake for the first time: no socket call
 * came before it. Record and replay both ask, at the same points.
 */
static inline bool deter_conn_connect_wait(struct deter_sock *ds)
{
	if (ds->child || ds->called || ds->connect_waited)
		return false;
	ds->connect_waited = true;
	return true;
}

/* The lock kind (DETER_LOCK_*) a lock site logs and replays as. */
extern const u8 deter_conn_site_lock[DETER_SITE_MAX];

int deter_conn_sk_init(struct sock *sk);
int deter_conn_sk_clone(struct sock *newsk);
void deter_conn_sk_destroy(struct sock *sk);

static inline bool deter_conn_is_tcp(const struct sock *sk)
{
	return sk_fullsock(sk) && sk->sk_protocol == IPPROTO_TCP &&
	       sk->sk_type == SOCK_STREAM;
}

/**
 * deter_conn_get() - deter's state of a socket
 * @sk: any socket
 *
 * Inline: every hook asks (about 70 times per request in the RPC
 * benchmark, both ends).
 *
 * Return: the state if @sk is a TCP socket deter tracks, else NULL.
 */
static inline struct deter_sock *deter_conn_get(const struct sock *sk)
{
	if (!deter_conn_is_tcp(sk))
		return NULL;
	return READ_ONCE(tcp_sk(sk)->deter);
}

/*
 * The segments an arrival holds, as RX logs them: a GRO'd skb's count, a
 * GSO packet forwarded whole its sender's, else 1.
 */
static inline u32 deter_conn_rx_segs(const struct sk_buff *skb)
{
	return max_t(u16, skb_shinfo(skb)->gso_segs, 1);
}

/* What the handshake negotiated, as DETER_CONN_* bits. */
static inline u32 deter_conn_negotiated(const struct tcp_sock *tp)
{
	return (tp->rx_opt.tstamp_ok ? DETER_CONN_TS : 0) |
	       (tp->rx_opt.sack_ok ? DETER_CONN_SACK : 0) |
	       (tp->ecn_flags & TCP_ECN_OK ? DETER_CONN_ECN : 0) |
	       (tp->rx_opt.wscale_ok ? DETER_CONN_WSCALE : 0);
}

u64 deter_conn_send_errq(const struct sock *sk, const struct msghdr *msg);
void deter_conn_send_pages(struct deter_sock *ds, const struct msghdr *msg,
			   u64 send);
u64 deter_conn_send_pages_done(struct deter_sock *ds, s64 ret);
u32 deter_conn_splice_read_flags(struct deter_sock *ds, const struct sock *sk,
				 u32 flags);

void deter_conn_hash(struct deter_sock *ds);
struct deter_sock *deter_conn_lookup(const struct net *net, __be32 saddr,
				     __be32 daddr, __be16 sport, __be16 dport);
void deter_conn_for_each(void (*fn)(struct deter_sock *ds));
void deter_conn_init(void);
void deter_conn_exit(void);

void deter_conn_stats_show(struct seq_file *m);

#endif /* _DETER_CONN_H */
