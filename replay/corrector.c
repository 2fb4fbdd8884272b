// SPDX-License-Identifier: GPL-2.0
/*
 * The replay packet corrector.
 *
 * On the replay testbed nothing between the hosts drops, reorders or
 * marks packets. Instead each host's ingress is queued (NFQUEUE) to this
 * corrector, which gives each replayed connection the network the
 * recording saw: the receiver logged, for each arriving non-SYN packet,
 * its index (the 16-bit IP ID extended to 64 bits) and its CE mark, in
 * arrival order; that is arr[] here. Per flow:
 *
 *   idx  = ref + (s16)(ipid - (u16)ref)      nearest-value unwrap;
 *   ref  = idx                               ref starts at arr[0].idx
 *   pos  = position of idx in arr[]          sorted map, built at start
 *
 *   idx < lo or > hi            -> accept (outside the recording)
 *   idx in [lo, hi], not in arr[] -> drop (the original network lost it)
 *   pos < next, or already held -> accept (a duplicate)
 *   pos == next                 -> accept, next += span, then release
 *                                  held packets while the one at next is
 *                                  held
 *
 * where [lo, hi] is arr[]'s range of indexes, widened to the edges of
 * the peer's series where the pair of logs knows them (the peer's first
 * index after the handshake, and one before its last when its socket had
 * closed before the receiver's last arrival: log/rec_edge.c), so that
 * the packets the original lost there, which no later arrival showed
 * missing, are dropped too; and span is 1, or for a GSO packet that arrived whole in the original
 * (one receive of several segments) the positions of its segments: queued
 * with NFQA_CFG_F_GSO, it arrives whole here too.
 *   pos > next                  -> hold (keep the NFQUEUE packet id)
 *   a GSO packet whose first segment arrived alone in the original, or
 *   was lost while its second arrived -> fail (st->split): the original's
 *   network split it, and it cannot be split here
 *
 * unless the receiver's log has its arrivals' shapes (corr_flow.split):
 * then the queue hands over GSO packets as their segments, span is 1,
 * and deter.ko regroups the segments into the logged arrivals.
 *
 * and every accepted arrival with arr[pos].ce is accepted with the mark
 * CORR_CE_MARK, for which the host's next prerouting chain sets ECN to
 * CE (0b11) in the IP header alone, as a switch's queue marks it.
 * SYNs and packets of no flow are accepted at once, and so is a segment
 * with IP ID 0 and no data that is not one of arr[] when the receiver
 * logged such arrivals (RX CTL): the peer's time-wait socket answering,
 * outside the IP ID series.
 *
 * Invariants: positions < next are delivered or given up; a position
 * >= next is held at most once (slot[pos] >= 0); at most CORR_HOLD_MAX
 * packets are held, all flows together; NFQUEUE verdicts may come in
 * any order, so holding costs only the kernel queue entry.
 *
 *            NFQUEUE (netlink)
 *   kernel ---------------------> corr_pkt_cb --> foreign/SYN -> ACCEPT
 *     ^                               |       --> lost        -> DROP
 *     |                               v
 *     |                          corr_arrive --> in turn     -> ACCEPT
 *     |                               |                         + drain
 *     |                               v
 *     |                         held[] pool (id, pos, time)
 *     |                               |  turn comes / 2 s timeout /
 *     |                               v  pool full / stop
 *     +------ verdict batch <--- corr_release (in arrival order)
 *
 * A held packet that waits CORR_HOLD_TIMEOUT_MS means an arrival it
 * waits for will never come: the flow gives up every missing position up
 * to the newest timed-out held packet, releases what it held there in
 * original arrival order (one line on stderr) and goes on. When the pool
 * is full, the flow holding the oldest packet gives up the same way.
 * When *stop is set, everything held is released before returning, since
 * closing the queue would drop it.
 *
 * Packets are never handed back rewritten: the kernel would take the
 * bytes into the skb's head (nfqnl_mangle()), where the original's
 * payload was in page fragments, and change what the receiver charges
 * for it (truesize), coalesces and splices. Only the headers are copied
 * to us (CORR_COPY bytes), never payload.
 *
 * References: DETER (Li et al., NSDI'19) section 4.3;
 * libnetfilter_queue examples/nf-queue.c; net/netfilter/nfnetlink_queue.c.
 */

#include "corrector.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

enum {
	/*
	 * Kernel queue length: every held packet stays queued in the kernel,
	 * plus those in flight to us; twice the hold limit leaves room for
	 * a burst while the pool is full.
	 */
	CORR_QUEUE_MAXLEN = 2 * CORR_HOLD_MAX,
	/* Socket receive buffer: a few hundred full-size packets in flight. */
	CORR_RCVBUF = 8 << 20,
	/*
	 * Verdict batch: one sendmsg per poll round, ~40 B a verdict. Must
	 * stay below the default socket send buffer (net.core.wmem_default,
	 * 208 KiB), or sendmsg fails.
	 */
	CORR_VBUF = 128 << 10,
	/* Bytes of each packet copied to us: IPv4 and TCP headers at most. */
	CORR_COPY = 60 + 60,
	/* Receive buffer: a copied packet plus netlink headers (< 1 KiB). */
	CORR_RBUF = CORR_COPY + 4096,
	/* Messages read per poll round, so expiry and flush run often. */
	CORR_RECV_BATCH = 64,
	/* Expiry scan interval while packets are held; 0.5 % of the timeout. */
	CORR_SCAN_MS = 10,
};

#define CORR_NO_SLOT	(-1)

/* A packet the corrector cannot deliver as it arrived (corr_pkt_cb()). */
#define CORR_SPLIT_WHAT \
	"arrives as a GSO packet, which the original's network split into segments"
#define CORR_SPLIT_WHY \
	" (its receiver got the first alone, or lost it); the replay cannot split it"

/* arr[] sorted by index, for lookups. */
struct corr_key {
	uint64_t idx;			/* packet index */
	size_t pos;			/* its position in arr[] */
};

/* Per-flow state. */
struct corr_fstate {
	const struct corr_flow *f;	/* the caller's flow */
	struct corr_key *keys;		/* arr[] sorted by idx, narr entries */
	int16_t *slot;			/* per position: held[] slot or CORR_NO_SLOT */
	uint64_t min_idx, max_idx;	/* range of arr[] indexes */
	uint64_t lo, hi;		/* the series' range, arr[]'s widened */
	uint64_t ref;			/* last index seen, for extension */
	size_t next;			/* first position not delivered */
	unsigned int nheld;		/* packets held for this flow */
	unsigned int synacks;		/* SYN-ACKs seen */
	size_t expire_to;		/* scratch: last position to give up */
	int expire;			/* scratch: expire_to is set */
};

/* One held packet. */
struct corr_held {
	int used;			/* slot in use */
	int16_t next_free;		/* free list link */
	uint32_t id;			/* NFQUEUE packet id */
	size_t flow;			/* index into corr.fs[] */
	size_t pos;			/* position in the flow's arr[] */
	uint64_t t_ns;			/* CLOCK_MONOTONIC when queued to us, ns */
};

struct corr {
	struct mnl_socket *nl;
	unsigned int portid;
	uint16_t queue;
	struct corr_fstate *fs;
	size_t nfs;
	struct corr_held held[CORR_HOLD_MAX];
	int16_t free_head;		/* first free held[] slot, or CORR_NO_SLOT */
	unsigned int nheld;		/* held[] slots in use */
	char *rbuf;			/* CORR_RBUF bytes */
	char *vbuf;			/* CORR_VBUF bytes of verdicts */
	size_t vused;			/* bytes used in vbuf */
	uint64_t last_scan_ns;		/* last expiry scan, ns */
	struct corr_stats *st;
	char *err;			/* first fatal error, malloc'd */
};

/* A parsed IPv4/TCP header. */
struct corr_pkt {
	uint32_t saddr, daddr;		/* host byte order */
	uint16_t sport, dport;		/* host byte order */
	uint16_t ipid;
	unsigned int ihl;		/* IP header length, bytes */
	int syn, ack;
	int bare;			/* no TCP payload */
	int have_ts;			/* 1: tsval is the TS option's */
	uint32_t tsval;
};

static void __attribute__((format(printf, 2, 3)))
corr_fail(struct corr *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return;
	va_start(ap, fmt);
	if (vasprintf(&c->err, fmt, ap) < 0)
		c->err = NULL;
	va_end(ap);
	if (!c->err)
		c->err = strdup("out of memory");
}

static uint64_t corr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * corr_idx_extend() - the 64-bit index nearest to @ref whose low 16 bits
 * are @id; never below 0 (recorded indexes start at a raw IP ID).
 */
uint64_t corr_idx_extend(uint64_t ref, uint16_t id)
{
	int16_t d = (int16_t)(uint16_t)(id - (uint16_t)ref);

	if (d < 0 && ref < (uint64_t)-(int32_t)d)
		return ref + (uint64_t)(d + 65536);
	return ref + (uint64_t)(int64_t)d;
}

static int corr_key_cmp(const void *a, const void *b)
{
	const struct corr_key *x = a, *y = b;

	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Position of @idx in the flow's arr[], or -1. */
static long long corr_flow_lookup(const struct corr_fstate *fs, uint64_t idx)
{
	size_t lo = 0, hi = fs->f->narr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fs->keys[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < fs->f->narr && fs->keys[lo].idx == idx)
		return (long long)fs->keys[lo].pos;
	return -1;
}

static void corr_flow_name(const struct corr_flow *f, char *buf, size_t len)
{
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];
	struct in_addr a;

	a.s_addr = htonl(f->saddr);
	inet_ntop(AF_INET, &a, s, sizeof(s));
	a.s_addr = htonl(f->daddr);
	inet_ntop(AF_INET, &a, d, sizeof(d));
	snprintf(buf, len, "%s:%u > %s:%u", s, f->sport, d, f->dport);
}

/*
 * Widen a flow's range to the edges of the peer's series: its first
 * index (nearest the lowest arrival, at or below it) and the one before
 * its end (nearest the highest arrival, above it).
 */
static void corr_flow_edges(struct corr_fstate *fs)
{
	uint64_t x;

	fs->lo = fs->min_idx;
	fs->hi = fs->max_idx;
	if (fs->f->have_first) {
		x = corr_idx_extend(fs->min_idx, fs->f->first_ipid);
		if (x < fs->min_idx)
			fs->lo = x;
	}
	if (fs->f->have_end) {
		x = corr_idx_extend(fs->max_idx, fs->f->end_ipid);
		if (x > fs->max_idx + 1)
			fs->hi = x - 1;
	}
}

static int corr_flows_init(struct corr *c, const struct corr_flow *flows,
			   size_t nflows)
{
	size_t i, j;

	c->fs = calloc(nflows ? nflows : 1, sizeof(*c->fs));
	if (!c->fs) {
		corr_fail(c, "out of memory");
		return -1;
	}
	c->nfs = nflows;
	for (i = 0; i < nflows; i++) {
		struct corr_fstate *fs = &c->fs[i];
		const struct corr_flow *f = &flows[i];
		char name[64];

		fs->f = f;
		if (!f->narr)
			continue;
		if (!f->arr) {
			corr_fail(c, "flow %zu: no arrivals array", i);
			return -1;
		}
		fs->keys = malloc(f->narr * sizeof(*fs->keys));
		fs->slot = malloc(f->narr * sizeof(*fs->slot));
		if (!fs->keys || !fs->slot) {
			corr_fail(c, "out of memory");
			return -1;
		}
		for (j = 0; j < f->narr; j++) {
			fs->keys[j].idx = f->arr[j].idx;
			fs->keys[j].pos = j;
			fs->slot[j] = CORR_NO_SLOT;
		}
		qsort(fs->keys, f->narr, sizeof(*fs->keys), corr_key_cmp);
		for (j = 1; j < f->narr; j++) {
			if (fs->keys[j].idx != fs->keys[j - 1].idx)
				continue;
			corr_flow_name(f, name, sizeof(name));
			corr_fail(c, "flow %s: index %llu arrives twice (arrivals %zu and %zu)",
				  name, (unsigned long long)fs->keys[j].idx,
				  fs->keys[j - 1].pos, fs->keys[j].pos);
			return -1;
		}
		fs->min_idx = fs->keys[0].idx;
		fs->max_idx = fs->keys[f->narr - 1].idx;
		fs->ref = f->arr[0].idx;
		corr_flow_edges(fs);
	}
	for (i = 0; i < CORR_HOLD_MAX; i++)
		c->held[i].next_free = i + 1 < CORR_HOLD_MAX ? (int16_t)(i + 1) : CORR_NO_SLOT;
	c->free_head = 0;
	return 0;
}

static void corr_flows_free(struct corr *c)
{
	size_t i;

	for (i = 0; i < c->nfs; i++) {
		free(c->fs[i].keys);
		free(c->fs[i].slot);
	}
	free(c->fs);
}

static int corr_flush(struct corr *c)
{
	if (!c->vused)
		return 0;
	if (mnl_socket_sendto(c->nl, c->vbuf, c->vused) < 0) {
		corr_fail(c, "queue %u: sending verdicts: %s", c->queue,
			  strerror(errno));
		c->vused = 0;
		return -1;
	}
	c->vused = 0;
	return 0;
}

/* Queue a verdict on packet @id, with skb mark @mark when not 0. */
static int corr_verdict(struct corr *c, uint32_t id, int verdict, uint32_t mark)
{
	size_t need = MNL_ALIGN(sizeof(struct nlmsghdr)) +
		      MNL_ALIGN(sizeof(struct nfgenmsg)) +
		      MNL_ATTR_HDRLEN + MNL_ALIGN(sizeof(struct nfqnl_msg_verdict_hdr)) +
		      MNL_ATTR_HDRLEN + MNL_ALIGN(sizeof(uint32_t));
	struct nlmsghdr *nlh;

	if (c->vused + need > CORR_VBUF && corr_flush(c))
		return -1;
	nlh = nfq_nlmsg_put(c->vbuf + c->vused, NFQNL_MSG_VERDICT, c->queue);
	nfq_nlmsg_verdict_put(nlh, id, verdict);
	if (mark)
		nfq_nlmsg_verdict_put_mark(nlh, mark);
	c->vused += MNL_ALIGN(nlh->nlmsg_len);
	return 0;
}

/* Parse an IPv4 TCP packet's headers; -1 if it is anything else. */
/* The TS option's value of TCP header @th (@len bytes at hand), if any. */
static void corr_parse_ts(const uint8_t *th, uint32_t len, struct corr_pkt *pk)
{
	uint32_t off = 20, end = (th[12] >> 4) * 4u;

	pk->have_ts = 0;
	pk->tsval = 0;
	if (end > len)
		end = len;
	while (off < end && th[off] != 0) {	/* 0: end of options */
		if (th[off] == 1) {		/* NOP */
			off++;
			continue;
		}
		if (off + 1 >= end || th[off + 1] < 2 || off + th[off + 1] > end)
			return;
		if (th[off] == 8 && th[off + 1] == 10) {
			pk->have_ts = 1;
			pk->tsval = (uint32_t)th[off + 2] << 24 | th[off + 3] << 16 |
				    th[off + 4] << 8 | th[off + 5];
			return;
		}
		off += th[off + 1];
	}
}

static int corr_parse(const uint8_t *p, uint32_t len, struct corr_pkt *pk)
{
	const uint8_t *th;
	uint16_t tot;

	if (len < 20 || (p[0] >> 4) != 4)
		return -1;
	pk->ihl = (p[0] & 0x0f) * 4;
	tot = (uint16_t)(p[2] << 8 | p[3]);
	if (pk->ihl < 20 || len < pk->ihl + 20 || tot < pk->ihl + 20)
		return -1;
	if (p[9] != IPPROTO_TCP)
		return -1;
	if ((p[6] << 8 | p[7]) & 0x3fff)	/* MF or a fragment offset */
		return -1;
	th = p + pk->ihl;
	pk->ipid = (uint16_t)(p[4] << 8 | p[5]);
	pk->saddr = (uint32_t)p[12] << 24 | p[13] << 16 | p[14] << 8 | p[15];
	pk->daddr = (uint32_t)p[16] << 24 | p[17] << 16 | p[18] << 8 | p[19];
	pk->sport = (uint16_t)(th[0] << 8 | th[1]);
	pk->dport = (uint16_t)(th[2] << 8 | th[3]);
	pk->syn = !!(th[13] & 0x02);
	pk->ack = !!(th[13] & 0x10);
	pk->bare = tot == pk->ihl + (th[12] >> 4) * 4;
	corr_parse_ts(th, len - pk->ihl, pk);
	return 0;
}

static long long corr_flow_find(const struct corr *c, const struct corr_pkt *pk)
{
	size_t i;

	for (i = 0; i < c->nfs; i++) {
		const struct corr_flow *f = c->fs[i].f;

		if (f->saddr == pk->saddr && f->daddr == pk->daddr &&
		    f->sport == pk->sport && f->dport == pk->dport)
			return (long long)i;
	}
	return -1;
}

/* Accept arrival @pos of flow @fi, to be marked CE if it was. */
static int corr_deliver(struct corr *c, size_t fi, size_t pos, uint32_t id)
{
	const struct corr_fstate *fs = &c->fs[fi];

	c->st->passed++;
	if (fs->f->arr[pos].ce) {
		c->st->marked++;
		return corr_verdict(c, id, NF_ACCEPT, CORR_CE_MARK);
	}
	return corr_verdict(c, id, NF_ACCEPT, 0);
}

/* How many positions from @pos the packet arriving there covers. */
static size_t corr_span(const struct corr_fstate *fs, size_t pos)
{
	size_t n = fs->f->arr[pos].segs;

	if (n <= 1 || fs->f->split)
		return 1;
	return n < fs->f->narr - pos ? n : fs->f->narr - pos;
}

/* Deliver held packet @s and free its slot. */
static int corr_release(struct corr *c, int16_t s)
{
	struct corr_held *h = &c->held[s];
	struct corr_fstate *fs = &c->fs[h->flow];
	int ret;

	ret = corr_deliver(c, h->flow, h->pos, h->id);
	h->used = 0;
	fs->slot[h->pos] = CORR_NO_SLOT;
	fs->nheld--;
	c->nheld--;
	h->next_free = c->free_head;
	c->free_head = s;
	return ret;
}

/* Deliver held packets of flow @fi while the one at next is held. */
static int corr_drain(struct corr *c, size_t fi)
{
	struct corr_fstate *fs = &c->fs[fi];

	while (fs->next < fs->f->narr && fs->slot[fs->next] != CORR_NO_SLOT) {
		size_t span = corr_span(fs, fs->next);

		if (corr_release(c, fs->slot[fs->next]))
			return -1;
		fs->next += span;
	}
	return 0;
}

/*
 * corr_give_up() - stop waiting for flow @fi's missing arrivals up to
 * position @to: release what is held there in arrival order, skip the
 * rest, and deliver on from there. @why names the reason, or NULL to
 * stay quiet (stopping).
 */
static int corr_give_up(struct corr *c, size_t fi, size_t to, const char *why)
{
	struct corr_fstate *fs = &c->fs[fi];
	uint64_t first = fs->f->arr[fs->next].idx;
	unsigned int held = fs->nheld;
	size_t skipped = 0;
	char name[64];

	while (fs->next <= to) {
		size_t span = corr_span(fs, fs->next);

		if (fs->slot[fs->next] == CORR_NO_SLOT) {
			skipped++;
			fs->next++;
			continue;
		}
		if (corr_release(c, fs->slot[fs->next]))
			return -1;
		fs->next += span;
	}
	if (corr_drain(c, fi))
		return -1;
	if (why) {
		corr_flow_name(fs->f, name, sizeof(name));
		fprintf(stderr,
			"corrector: flow %s: index %llu lost (%s): skipped %zu, released %u\n",
			name, (unsigned long long)first, why, skipped,
			held - fs->nheld);
		c->st->timeouts++;
	}
	return 0;
}

/* Give up on each flow's arrivals that held packets waited too long for. */
static int corr_expire(struct corr *c, uint64_t now)
{
	uint64_t tmo = (uint64_t)CORR_HOLD_TIMEOUT_MS * 1000000;
	size_t i;

	if (!c->nheld || now - c->last_scan_ns < (uint64_t)CORR_SCAN_MS * 1000000)
		return 0;
	c->last_scan_ns = now;
	for (i = 0; i < c->nfs; i++)
		c->fs[i].expire = 0;
	for (i = 0; i < CORR_HOLD_MAX; i++) {
		const struct corr_held *h = &c->held[i];
		struct corr_fstate *fs;

		if (!h->used || now - h->t_ns < tmo)
			continue;
		fs = &c->fs[h->flow];
		if (!fs->expire || h->pos > fs->expire_to)
			fs->expire_to = h->pos;
		fs->expire = 1;
	}
	for (i = 0; i < c->nfs; i++)
		if (c->fs[i].expire &&
		    corr_give_up(c, i, c->fs[i].expire_to, "held 2 s"))
			return -1;
	return 0;
}

/* Make room in a full pool: the flow holding the oldest packet gives up. */
static int corr_make_room(struct corr *c)
{
	const struct corr_held *old = NULL;
	size_t i;

	for (i = 0; i < CORR_HOLD_MAX; i++)
		if (c->held[i].used && (!old || c->held[i].t_ns < old->t_ns))
			old = &c->held[i];
	if (!old)
		return 0;
	return corr_give_up(c, old->flow, old->pos, "hold pool full");
}

/*
 * Did the original's receiver never get SYN-ACK @pk? It logged the TS
 * value of each it got; without them (no timestamps) the first ones the
 * peer sent are taken to be those lost.
 */
static int corr_synack_lost(struct corr_fstate *fs, const struct corr_pkt *pk)
{
	const struct corr_flow *f = fs->f;
	unsigned int i;

	if (!f->nsynack_ts || !pk->have_ts)
		return fs->synacks++ < f->synack_drop;
	for (i = 0; i < f->nsynack_ts && i < CORR_SYNACK_TS; i++)
		if (f->synack_ts[i] == pk->tsval)
			return 0;
	return 1;
}

/* Was the peer's packet @ipid lost before the passive end's first arrival? */
static int corr_head_lost(const struct corr_flow *f, uint16_t ipid)
{
	unsigned int i;

	for (i = 0; i < f->nhead && i < CORR_HEAD_GAPS; i++)
		if ((uint16_t)(ipid - f->head[i].ipid) < f->head[i].count)
			return 1;
	return 0;
}

/* Flow @fi's packet @id arrived, at position @pos of its arr[]. */
static int corr_arrive(struct corr *c, size_t fi, size_t pos, uint32_t id)
{
	struct corr_fstate *fs = &c->fs[fi];
	struct corr_held *h;
	int16_t s;

	for (;;) {
		if (pos < fs->next || fs->slot[pos] != CORR_NO_SLOT) {
			/* A duplicate: it arrived once already. */
			c->st->passed++;
			return corr_verdict(c, id, NF_ACCEPT, 0);
		}
		if (pos == fs->next) {
			if (corr_deliver(c, fi, pos, id))
				return -1;
			fs->next += corr_span(fs, pos);
			return corr_drain(c, fi);
		}
		if (c->free_head != CORR_NO_SLOT)
			break;
		if (corr_make_room(c))
			return -1;
	}

	s = c->free_head;
	h = &c->held[s];
	c->free_head = h->next_free;
	h->used = 1;
	h->id = id;
	h->flow = fi;
	h->pos = pos;
	h->t_ns = corr_now_ns();
	fs->slot[pos] = s;
	fs->nheld++;
	c->nheld++;
	if (c->nheld > c->st->held_max)
		c->st->held_max = c->nheld;
	return 0;
}

static int corr_pkt_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *attr[NFQA_MAX + 1] = {};
	struct corr *c = data;
	struct nfqnl_msg_packet_hdr *ph;
	struct corr_fstate *fs;
	struct corr_pkt pk = { 0 };
	uint32_t id, len = 0, skbinfo = 0;
	uint8_t *pkt = NULL;
	long long fi, pos;
	uint64_t idx;

	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR]) {
		corr_fail(c, "queue %u: malformed packet message", c->queue);
		return MNL_CB_ERROR;
	}
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	id = ntohl(ph->packet_id);
	if (attr[NFQA_PAYLOAD]) {
		pkt = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
		len = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
	}
	if (attr[NFQA_SKB_INFO])
		skbinfo = ntohl(mnl_attr_get_u32(attr[NFQA_SKB_INFO]));

	fi = -1;
	if (pkt && ntohs(ph->hw_protocol) == 0x0800 /* ETH_P_IP */ &&
	    !corr_parse(pkt, len, &pk))
		fi = corr_flow_find(c, &pk);
	if (fi < 0) {
		c->st->foreign++;
		return corr_verdict(c, id, NF_ACCEPT, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}
	fs = &c->fs[fi];
	if (pk.syn && !pk.ack && fs->f->have_syn_ipid &&
	    (int16_t)(pk.ipid - fs->f->syn_ipid) < 0) {
		c->st->dropped++;	/* a SYN lost in the original */
		return corr_verdict(c, id, NF_DROP, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}
	if (pk.syn && !pk.ack && corr_head_lost(fs->f, pk.ipid)) {
		c->st->dropped++;	/* a SYN sent again, lost in the original */
		return corr_verdict(c, id, NF_DROP, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}
	if (pk.syn && pk.ack && corr_synack_lost(fs, &pk)) {
		c->st->dropped++;	/* a SYN-ACK lost in the original */
		return corr_verdict(c, id, NF_DROP, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}
	if (pk.syn || !fs->f->narr) {
		c->st->passed++;
		return corr_verdict(c, id, NF_ACCEPT, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}

	idx = corr_idx_extend(fs->ref, pk.ipid);
	/*
	 * IP ID 0, no data, and not one of the numbered arrivals: the
	 * peer's time-wait socket answering (the receiver logged RX CTL),
	 * outside the series. Accepted, the series left where it is.
	 */
	if (fs->f->have_ctl && !pk.ipid && pk.bare &&
	    (idx < fs->min_idx || idx > fs->max_idx || corr_flow_lookup(fs, idx) < 0)) {
		c->st->passed++;
		return corr_verdict(c, id, NF_ACCEPT, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}
	fs->ref = idx;
	if (idx < fs->lo || idx > fs->hi) {
		c->st->passed++;
		return corr_verdict(c, id, NF_ACCEPT, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}
	pos = corr_flow_lookup(fs, idx);
	/*
	 * A GSO packet (2 segments at least) whose first segment the
	 * original's receiver got alone, or lost while its second came:
	 * its network split the packet (a qdisc or a device that segments:
	 * tbf above its burst, a link without TSO) where the replay's does
	 * not. It cannot be split here: NFQUEUE's own segmentation (without
	 * NFQA_CFG_F_GSO) copies each segment's payload into its head, which
	 * the receiver charges, coalesces and splices otherwise than the
	 * original's page fragments. A GSO packet the original's receiver
	 * got in fewer segments, or merged (GRO) with the ones after it,
	 * passes here as that arrival: the queue does not say how many
	 * segments a packet holds. deter.ko stops the replay there,
	 * comparing every arrival's segments with the log's (a later packet
	 * whose first ID that arrival covered is then dropped here as lost,
	 * after the replay stopped).
	 */
	if ((skbinfo & NFQA_SKB_GSO) && !fs->f->split &&
	    (pos >= 0 ? fs->f->arr[pos].segs <= 1 : corr_flow_lookup(fs, idx + 1) >= 0)) {
		char name[64];

		corr_flow_name(fs->f, name, sizeof(name));
		corr_fail(c, "flow %s: index %llu " CORR_SPLIT_WHAT CORR_SPLIT_WHY,
			  name, (unsigned long long)idx);
		c->st->split = 1;
		return MNL_CB_ERROR;
	}
	if (pos < 0) {
		c->st->dropped++;
		return corr_verdict(c, id, NF_DROP, 0) ? MNL_CB_ERROR : MNL_CB_OK;
	}
	if (corr_arrive(c, (size_t)fi, (size_t)pos, id))
		return MNL_CB_ERROR;
	return MNL_CB_OK;
}

/*
 * Bind @c->queue: copy packets' headers, a long queue; GSO packets whole
 * (veth forwards them whole, as the recording's did), unless a flow's
 * receiver rebuilds its arrivals from their segments (corr_flow.split);
 * wait for acks.
 */
static int corr_queue_bind(struct corr *c)
{
	uint32_t gso = NFQA_CFG_F_GSO;
	struct nlmsghdr *nlh;
	int acks = 0, ret;
	size_t i;
	ssize_t n;

	for (i = 0; i < c->nfs; i++)
		if (c->fs[i].f->split)
			gso = 0;

	nlh = nfq_nlmsg_put(c->vbuf, NFQNL_MSG_CONFIG, c->queue);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	c->vused = MNL_ALIGN(nlh->nlmsg_len);

	nlh = nfq_nlmsg_put(c->vbuf + c->vused, NFQNL_MSG_CONFIG, c->queue);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, CORR_COPY);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, CORR_QUEUE_MAXLEN);
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(gso));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO));
	c->vused += MNL_ALIGN(nlh->nlmsg_len);

	/* Both in one datagram: no packet comes between bind and params. */
	if (mnl_socket_sendto(c->nl, c->vbuf, c->vused) < 0) {
		c->vused = 0;
		corr_fail(c, "queue %u: bind: %s", c->queue, strerror(errno));
		return -1;
	}
	c->vused = 0;
	while (acks < 2) {
		n = mnl_socket_recvfrom(c->nl, c->rbuf, CORR_RBUF);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			corr_fail(c, "queue %u: bind: %s", c->queue, strerror(errno));
			return -1;
		}
		ret = mnl_cb_run(c->rbuf, n, 0, c->portid, corr_pkt_cb, c);
		if (ret < 0) {
			if (!c->err)
				corr_fail(c, "queue %u: bind: %s%s", c->queue,
					  strerror(errno), errno == EBUSY ?
					  " (queue in use by another program)" : "");
			return -1;
		}
		if (ret == MNL_CB_STOP)
			acks++;
	}
	return corr_flush(c);
}

static int corr_open(struct corr *c)
{
	int fd, one = 1, sz = CORR_RCVBUF;

	c->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!c->nl) {
		corr_fail(c, "netlink: %s", strerror(errno));
		return -1;
	}
	if (mnl_socket_bind(c->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		corr_fail(c, "netlink: bind: %s", strerror(errno));
		return -1;
	}
	c->portid = mnl_socket_get_portid(c->nl);
	fd = mnl_socket_get_fd(c->nl);
	/* Best effort: a small buffer only risks kernel-side queue drops. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	/*
	 * Lost messages cannot be asked for again; ENOBUFS would only stop
	 * the loop. The packets concerned are dropped by the kernel.
	 */
	mnl_socket_setsockopt(c->nl, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	return corr_queue_bind(c);
}

/* Read what is queued, up to CORR_RECV_BATCH messages; 0 or -1. */
static int corr_recv(struct corr *c)
{
	int fd = mnl_socket_get_fd(c->nl), i, ret;
	ssize_t n;

	for (i = 0; i < CORR_RECV_BATCH; i++) {
		n = recv(fd, c->rbuf, CORR_RBUF, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			corr_fail(c, "queue %u: receive: %s", c->queue, strerror(errno));
			return -1;
		}
		ret = mnl_cb_run(c->rbuf, n, 0, c->portid, corr_pkt_cb, c);
		if (ret >= 0)
			continue;
		if (c->err)
			return -1;
		/* The packet went away (e.g. its device did): nothing to do. */
		if (errno == ENOENT)
			continue;
		corr_fail(c, "queue %u: verdict refused: %s", c->queue, strerror(errno));
		return -1;
	}
	return 0;
}

/* Release everything held, in each flow's arrival order. */
static int corr_release_all(struct corr *c)
{
	size_t i, to, j;

	for (i = 0; i < c->nfs; i++) {
		struct corr_fstate *fs = &c->fs[i];

		if (!fs->nheld)
			continue;
		to = fs->next;
		for (j = 0; j < CORR_HOLD_MAX; j++)
			if (c->held[j].used && c->held[j].flow == i &&
			    c->held[j].pos > to)
				to = c->held[j].pos;
		if (corr_give_up(c, i, to, NULL))
			return -1;
	}
	return corr_flush(c);
}

/**
 * corr_run() - correct the packets queued to NFQUEUE @queue until *@stop
 * @queue: the NFQUEUE number this host's ingress TCP is queued to
 * @flows: the recorded flows arriving at this host, peer -> this host
 * @nflows: entries in @flows
 * @stop: set nonzero (e.g. from a signal handler) to return
 * @st: statistics, zeroed here first
 * @err: set to a malloc'd one-line message on failure
 *
 * Binds @queue and gives each flow's packets the drops, order and CE
 * marks of its arrivals (see the top of this file); other packets pass.
 * On stop, packets still held are accepted in arrival order.
 *
 * Return: 0 when stopped, -1 with *@err set on failure.
 */
int corr_run(uint16_t queue, const struct corr_flow *flows, size_t nflows,
	     volatile sig_atomic_t *stop, struct corr_stats *st, char **err)
{
	struct corr *c;
	int ret = -1;

	*err = NULL;
	memset(st, 0, sizeof(*st));
	c = calloc(1, sizeof(*c));
	if (!c) {
		*err = strdup("out of memory");
		return -1;
	}
	c->queue = queue;
	c->st = st;
	c->rbuf = malloc(CORR_RBUF);
	c->vbuf = malloc(CORR_VBUF);
	if (!c->rbuf || !c->vbuf) {
		corr_fail(c, "out of memory");
		goto out;
	}
	if (corr_flows_init(c, flows, nflows) || corr_open(c))
		goto out;

	while (!*stop) {
		struct pollfd pfd = {
			.fd = mnl_socket_get_fd(c->nl),
			.events = POLLIN,
		};
		int n = poll(&pfd, 1, c->nheld ? CORR_SCAN_MS : CORR_POLL_MS);

		if (n < 0 && errno != EINTR) {
			corr_fail(c, "queue %u: poll: %s", queue, strerror(errno));
			goto out;
		}
		if (n > 0 && corr_recv(c))
			goto out;
		if (corr_expire(c, corr_now_ns()) || corr_flush(c))
			goto out;
	}
	if (corr_release_all(c))
		goto out;
	ret = 0;
out:
	if (c->nl)
		mnl_socket_close(c->nl);
	if (c->fs)
		corr_flows_free(c);
	free(c->rbuf);
	free(c->vbuf);
	*err = c->err;
	free(c);
	return ret;
}
