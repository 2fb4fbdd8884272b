// SPDX-License-Identifier: GPL-2.0
/*
 * Per-socket state for deter.
 *
 * Every TCP socket passes through three hooks: creation by socket(2)
 * (sk_init), creation of an accepted child by the handshake (sk_clone)
 * and destruction (sk_destroy). deter attaches a struct deter_sock at
 * creation, keeps it on a list holding a reference to the socket, and
 * detaches it at destruction, after recording and replay had their last
 * word on it (deter_main.c calls them first):
 *
 *   sk_init/sk_clone --> alloc (GFP_ATOMIC), sock_hold, list_add
 *   sk_destroy       --> list_del, sock_put, kfree_rcu
 *   module unload    --> the same for every socket still listed
 *
 * The reference only delays freeing the struct sock until deter lets go;
 * it never keeps a connection alive. An allocation failure leaves the
 * socket untracked, counted in stats; the caller tells the recorder
 * (deter_lost): never a connection recorded in part without notice.
 *
 *   created + cloned - destroyed - detached == sockets listed
 *
 * Recorded connections are also hashed by (netns, 4-tuple): a qdisc that
 * holds packets (netem) may orphan them, and the transmit probe then
 * finds their connection from the headers (deter_conn_lookup()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_conn.h"

#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/bvec.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/net_tstamp.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/deter.h>
#include <net/inet_sock.h>
#include <net/sock.h>

const u8 deter_conn_site_lock[DETER_SITE_MAX] = {
	[DETER_SITE_LOCK_APP] = DETER_LOCK_APP,
	[DETER_SITE_LOCK_WRITE_TIMER] = DETER_LOCK_WRITE_TIMER,
	[DETER_SITE_LOCK_DELACK_TIMER] = DETER_LOCK_DELACK_TIMER,
	[DETER_SITE_LOCK_KEEPALIVE_TIMER] = DETER_LOCK_KEEPALIVE_TIMER,
	[DETER_SITE_LOCK_COMP_ACK_TIMER] = DETER_LOCK_COMP_ACK_TIMER,
	[DETER_SITE_LOCK_TSQ] = DETER_LOCK_TSQ,
	[DETER_SITE_LOCK_BACKLOG] = DETER_LOCK_BACKLOG,
};

/* Buckets of the 4-tuple hash: recorded connections are few per host. */
#define DETER_CONN_HASH_BITS 10

static LIST_HEAD(deter_conn_list);
static DEFINE_HASHTABLE(deter_conn_hash_tbl, DETER_CONN_HASH_BITS);
/* protects deter_conn_list and writers of deter_conn_hash_tbl */
static DEFINE_SPINLOCK(deter_conn_lock);

/*
 * Connection ids: a random epoch per module load in the high half, so
 * that logs from different loads never collide, and a counter.
 */
static atomic64_t deter_conn_next_id;

static atomic64_t deter_conn_created;	/* sockets from socket(2) */
static atomic64_t deter_conn_cloned;	/* children from accepted handshakes */
static atomic64_t deter_conn_destroyed;	/* sockets destroyed */
static atomic64_t deter_conn_nomem;	/* sockets left untracked: no memory */

static u32 deter_conn_key(const struct net *net, __be32 saddr, __be32 daddr,
			  __be16 sport, __be16 dport)
{
	return jhash_3words((__force u32)saddr, (__force u32)daddr,
			    (__force u32)sport << 16 | (__force u32)dport,
			    (u32)(unsigned long)net);
}

/**
 * deter_conn_hash() - make a recorded connection findable by 4-tuple
 * @ds: its state; ds->sk has its addresses and ports set
 */
void deter_conn_hash(struct deter_sock *ds)
{
	const struct inet_sock *inet = inet_sk(ds->sk);

	spin_lock_bh(&deter_conn_lock);
	if (!ds->hashed) {
		hash_add_rcu(deter_conn_hash_tbl, &ds->hnode,
			     deter_conn_key(sock_net(ds->sk), inet->inet_saddr,
					    inet->inet_daddr, inet->inet_sport,
					    inet->inet_dport));
		ds->hashed = true;
	}
	spin_unlock_bh(&deter_conn_lock);
}

/**
 * deter_conn_lookup() - find a recorded connection by its 4-tuple
 * @net: the namespace the packet is in
 * @saddr: source address of a packet the connection sent
 * @daddr: its destination address
 * @sport: its source port
 * @dport: its destination port
 *
 * Return: the connection's state, valid until the caller's RCU read-side
 * critical section ends, or NULL.
 */
struct deter_sock *deter_conn_lookup(const struct net *net, __be32 saddr,
				     __be32 daddr, __be16 sport, __be16 dport)
{
	struct deter_sock *ds;

	hash_for_each_possible_rcu(deter_conn_hash_tbl, ds, hnode,
				   deter_conn_key(net, saddr, daddr, sport, dport)) {
		const struct inet_sock *inet = inet_sk(ds->sk);

		if (inet->inet_saddr == saddr && inet->inet_daddr == daddr &&
		    inet->inet_sport == sport && inet->inet_dport == dport &&
		    net_eq(sock_net(ds->sk), net))
			return ds;
	}
	return NULL;
}

static void deter_conn_unhash(struct deter_sock *ds)
{
	if (ds->hashed) {
		hash_del_rcu(&ds->hnode);
		ds->hashed = false;
	}
}

static int deter_conn_attach(struct sock *sk)
{
	struct deter_sock *ds = kzalloc(sizeof(*ds), GFP_ATOMIC);

	if (!ds) {
		atomic64_inc(&deter_conn_nomem);
		return -ENOMEM;
	}
	ds->sk = sk;
	ds->conn = atomic64_inc_return(&deter_conn_next_id);
	ds->cfg[DETER_CFG_RCVLOWAT] = 1;	/* sock_init_data()'s */
	ds->tcpopt[DETER_TCPOPT_MAX_PACING_RATE] = DETER_TCPOPT_RATE_MAX;
	spin_lock_init(&ds->tx_lock);
	spin_lock_init(&ds->ev_lock);
	sock_hold(sk);
	spin_lock_bh(&deter_conn_lock);
	list_add(&ds->node, &deter_conn_list);
	spin_unlock_bh(&deter_conn_lock);
	WRITE_ONCE(tcp_sk(sk)->deter, ds);
	return 0;
}

static void deter_conn_detach(struct deter_sock *ds)
{
	struct sock *sk = ds->sk;

	WRITE_ONCE(tcp_sk(sk)->deter, NULL);
	sock_put(sk);
	kfree_rcu(ds, rcu);
}

/**
 * deter_conn_sk_init() - socket(2) created a TCP socket: track it
 * @sk: the socket
 *
 * Return: 0, or -ENOMEM when it is left untracked.
 */
int deter_conn_sk_init(struct sock *sk)
{
	atomic64_inc(&deter_conn_created);
	return deter_conn_attach(sk);
}

/**
 * deter_conn_sk_clone() - a handshake created a passive end: track it
 * @newsk: the child socket
 *
 * Return: 0, or -ENOMEM when it is left untracked.
 */
int deter_conn_sk_clone(struct sock *newsk)
{
	atomic64_inc(&deter_conn_cloned);
	return deter_conn_attach(newsk);
}

/**
 * deter_conn_sk_destroy() - let go of a socket being destroyed
 * @sk: the socket
 */
void deter_conn_sk_destroy(struct sock *sk)
{
	struct deter_sock *ds = deter_conn_get(sk);

	atomic64_inc(&deter_conn_destroyed);
	if (!ds)
		return;
	spin_lock_bh(&deter_conn_lock);
	list_del(&ds->node);
	deter_conn_unhash(ds);
	spin_unlock_bh(&deter_conn_lock);
	deter_conn_detach(ds);
}

/*
 * The page and offset of byte @at of a spliced send's bytes, which
 * start @skip bytes into @bv[0]. Return: false past its end, or past
 * DETER_SPLICE_MAX_PAGES bvecs (the next send then cannot go on from it).
 */
static bool deter_sp_locate(const struct bio_vec *bv, unsigned long nr,
			    size_t skip, size_t at, const struct page **page,
			    u32 *off)
{
	unsigned long i;

	for (i = 0; i < nr && i < DETER_SPLICE_MAX_PAGES; i++, bv++) {
		size_t len = bv->bv_len - skip;

		if (at < len) {
			size_t o = bv->bv_offset + skip + at;

			*page = nth_page(bv->bv_page, o / PAGE_SIZE);
			*off = o % PAGE_SIZE;
			return true;
		}
		at -= len;
		skip = 0;
	}
	return false;
}

/*
 * Whether the @len bytes from @skip into @bv lie as a file's would: each
 * page but the first from its start, each but the last to its end; and
 * where the first lies, its page and offset.
 */
static bool deter_sp_file_like(const struct bio_vec *bv, unsigned long nr,
			       size_t skip, size_t len,
			       const struct page **first, u32 *off)
{
	unsigned int pages = 0;
	bool short_end = false;

	for (; len && nr; bv++, nr--) {
		size_t o = bv->bv_offset + skip;
		size_t n = min_t(size_t, bv->bv_len - skip, len);

		skip = 0;
		while (n) {
			size_t part = min_t(size_t, n, PAGE_SIZE - o % PAGE_SIZE);

			if (short_end || (pages && o % PAGE_SIZE) ||
			    ++pages > DETER_SPLICE_MAX_PAGES)
				return false;
			if (pages == 1) {
				*first = nth_page(bv->bv_page, o / PAGE_SIZE);
				*off = o % PAGE_SIZE;
			}
			short_end = (o + part) % PAGE_SIZE != 0;
			o += part;
			n -= part;
			len -= part;
		}
	}
	return !len;
}

/**
 * deter_conn_send_errq() - what a send will put on the error queue
 * @sk: the sending socket, owned
 * @msg: the send, before tcp_sendmsg_locked() takes from it
 *
 * As tcp_sendmsg_locked() decides it: MSG_ZEROCOPY counts on a socket
 * with SO_ZEROCOPY, or with a completion of the caller's own
 * (msg_ubuf); transmit timestamps by SO_TIMESTAMPING's TX bits, which a
 * control message of the send replaces (__sock_cmsg_send()). A walk
 * over the control messages the send has, none for most.
 *
 * Return: DETER_SEND_* bits.
 */
u64 deter_conn_send_errq(const struct sock *sk, const struct msghdr *msg)
{
	u32 tsflags = READ_ONCE(sk->sk_tsflags);
	struct cmsghdr *cmsg;
	u64 send = 0;

	if ((msg->msg_flags & MSG_ZEROCOPY) && iov_iter_count(&msg->msg_iter) &&
	    (msg->msg_ubuf || sock_flag(sk, SOCK_ZEROCOPY)))
		send |= DETER_SEND_ZEROCOPY;
	/* sendmsg() copied them in (____sys_sendmsg()). */
	if (msg->msg_controllen && !msg->msg_control_is_user) {
		for (cmsg = CMSG_FIRSTHDR(msg); cmsg && CMSG_OK(msg, cmsg);
		     cmsg = __cmsg_nxthdr(msg->msg_control,
					  msg->msg_controllen, cmsg)) {
			if (cmsg->cmsg_level != SOL_SOCKET ||
			    (cmsg->cmsg_type != SO_TIMESTAMPING_OLD &&
			     cmsg->cmsg_type != SO_TIMESTAMPING_NEW) ||
			    cmsg->cmsg_len != CMSG_LEN(sizeof(u32)))
				continue;
			tsflags &= ~SOF_TIMESTAMPING_TX_RECORD_MASK;
			tsflags |= *(u32 *)CMSG_DATA(cmsg) &
				   SOF_TIMESTAMPING_TX_RECORD_MASK;
		}
	}
	if (tsflags & SOF_TIMESTAMPING_TX_RECORD_MASK)
		send |= DETER_SEND_TXSTAMP;
	return send;
}
EXPORT_SYMBOL_IF_KUNIT(deter_conn_send_errq);

/**
 * deter_conn_send_pages() - a send is about to reach tcp_sendmsg_locked()
 * @ds: the sending socket's state; its owner calls
 * @msg: the send; valid until the call's deter_conn_send_pages_done()
 * @send: what it puts on the error queue, deter_conn_send_errq()
 *
 * For a spliced send (MSG_SPLICE_PAGES over bvecs), work out its layout
 * (DETER_SPLICE_*), record and replay alike: the pages TCP is handed
 * decide how it merges and splits them. A bounded walk over at most
 * DETER_SPLICE_MAX_PAGES pages; sends that copy cost a test.
 */
void deter_conn_send_pages(struct deter_sock *ds, const struct msghdr *msg,
			   u64 send)
{
	const struct iov_iter *it = &msg->msg_iter;
	size_t len = iov_iter_count(it);
	const struct page *page;
	u32 off;

	ds->sp_send = send;
	ds->sp_bvec = NULL;
	if (!(msg->msg_flags & MSG_SPLICE_PAGES) || !iov_iter_is_bvec(it) ||
	    !len)
		return;
	ds->sp_bvec = it->bvec;
	ds->sp_nr = it->nr_segs;
	ds->sp_skip = it->iov_offset;
	if (!deter_sp_file_like(it->bvec, it->nr_segs, it->iov_offset, len,
				&page, &off)) {
		ds->sp_layout = DETER_SPLICE_KNOWN | DETER_SPLICE_OTHER;
		return;
	}
	ds->sp_layout = DETER_SPLICE_KNOWN | off;
	if (page == ds->sp_page && off == ds->sp_end)
		ds->sp_layout |= DETER_SPLICE_CONT;
}
EXPORT_SYMBOL_IF_KUNIT(deter_conn_send_pages);

/**
 * deter_conn_send_pages_done() - the send deter_conn_send_pages() saw
 *	returned
 * @ds: the socket's state
 * @ret: what tcp_sendmsg_locked() returned: the bytes TCP took, or an error
 *
 * Note where the bytes TCP took stopped, for the next spliced send's
 * CONT.
 *
 * Return: the send's layout (0 if it was no spliced send) and what it
 * put on the error queue if it took any bytes, DETER_SPLICE_* and
 * DETER_SEND_* bits.
 */
u64 deter_conn_send_pages_done(struct deter_sock *ds, s64 ret)
{
	/* A send that took no bytes queues nothing (tcp_sendmsg_locked()). */
	u64 send = ret > 0 ? ds->sp_send : 0;
	const struct page *page;
	u32 off;

	ds->sp_send = 0;
	if (!ds->sp_bvec)
		return send;
	if (ret > 0) {
		if (deter_sp_locate(ds->sp_bvec, ds->sp_nr, ds->sp_skip,
				    ret - 1, &page, &off)) {
			ds->sp_page = page;
			ds->sp_end = off + 1;
		} else {
			ds->sp_page = NULL;
		}
	}
	ds->sp_bvec = NULL;
	return send | ds->sp_layout;
}
EXPORT_SYMBOL_IF_KUNIT(deter_conn_send_pages_done);

/**
 * deter_conn_init() - start numbering connections
 */
void deter_conn_init(void)
{
	atomic64_set(&deter_conn_next_id, (u64)(get_random_u32() | 1) << 32);
}

/**
 * deter_conn_for_each() - call @fn on every socket tracked
 * @fn: must not sleep (the list's lock is held, BH off)
 */
void deter_conn_for_each(void (*fn)(struct deter_sock *ds))
{
	struct deter_sock *ds;

	spin_lock_bh(&deter_conn_lock);
	list_for_each_entry(ds, &deter_conn_list, node)
		fn(ds);
	spin_unlock_bh(&deter_conn_lock);
}

/**
 * deter_conn_exit() - let go of every socket still tracked
 *
 * Called at unload, after the hooks and probes are withdrawn, so nothing
 * else touches the list or the sockets' state any more.
 */
void deter_conn_exit(void)
{
	struct deter_sock *ds, *tmp;
	LIST_HEAD(gone);

	spin_lock_bh(&deter_conn_lock);
	list_splice_init(&deter_conn_list, &gone);
	list_for_each_entry(ds, &gone, node)
		deter_conn_unhash(ds);
	spin_unlock_bh(&deter_conn_lock);
	synchronize_rcu();
	list_for_each_entry_safe(ds, tmp, &gone, node) {
		list_del(&ds->node);
		deter_conn_detach(ds);
	}
	rcu_barrier();
}

/**
 * deter_conn_stats_show() - the socket counters, as deter/stats shows them
 * @m: the file
 */
void deter_conn_stats_show(struct seq_file *m)
{
	seq_printf(m, "sockets_created %lld\n",
		   (long long)atomic64_read(&deter_conn_created));
	seq_printf(m, "sockets_cloned %lld\n",
		   (long long)atomic64_read(&deter_conn_cloned));
	seq_printf(m, "sockets_destroyed %lld\n",
		   (long long)atomic64_read(&deter_conn_destroyed));
	seq_printf(m, "sockets_untracked_nomem %lld\n",
		   (long long)atomic64_read(&deter_conn_nomem));
}

/**
 * deter_conn_splice_read_flags() - the CALL flags of a splice read
 * @ds: the reading socket's state; its owner calls
 * @sk: the socket
 * @flags: the splice flags
 *
 * Adds to them what decides the call beside TCP's state, record and
 * replay alike: the room of the pipe it fills, which DETER_VAL_PIPE_ROOM
 * handed deter just before (0 if it did not), and whether the socket's
 * file is nonblocking, as tcp_splice_read() reads it.
 *
 * Return: DETER_SPLICE_RD_* flags.
 */
u32 deter_conn_splice_read_flags(struct deter_sock *ds, const struct sock *sk,
				 u32 flags)
{
	const struct socket *sock = sk->sk_socket;
	u32 room = min_t(u32, ds->pipe_room, DETER_SPLICE_RD_ROOM_MAX);

	ds->pipe_room = 0;
	flags &= DETER_SPLICE_RD_FLAGS;
	if (sock && sock->file && (READ_ONCE(sock->file->f_flags) & O_NONBLOCK))
		flags |= DETER_SPLICE_RD_NONBLOCK;
	return flags | room << DETER_SPLICE_RD_ROOM_SHIFT;
}
EXPORT_SYMBOL_IF_KUNIT(deter_conn_splice_read_flags);
