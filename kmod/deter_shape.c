// SPDX-License-Identifier: GPL-2.0
/*
 * An arrival's shape: what TCP reads of a received skb besides its bytes
 * and headers (struct deter_shape, include/deter_abi.h).
 *
 * A NIC's driver and GRO build the skbs a receiver's TCP gets: a head of
 * their choosing (kmalloc or page fragment, its size and headroom), the
 * payload split between head and fragments, frames merged up to 64 KB
 * with a frag_list past MAX_SKB_FRAGS, and a truesize that charges the
 * whole buffers. TCP's receive memory, advertised window, scaling_ratio,
 * coalescing, backlog condensing and splicing read all of that. The
 * replay's receiver gets other skbs: veth hands it the sender's GSO
 * packets, the replay corrector their segments. So the recorder logs
 * each arrival's shape (deter_shape_of()), and the replay rebuilds each
 * arrival from its segments in that shape (deter_shape_build()) before
 * TCP sees it.
 *
 * A rebuilt skb is equal to the original's in everything TCP reads but
 * two things no fresh skb can have: page_pool pages (pp_recycle; TCP only
 * compares it between two skbs, and every rebuilt one has the same) and a
 * clone held elsewhere (a tap's). deter_shape_eq() leaves those out.
 */
#include "deter_shape.h"

#include <kunit/visibility.h>
#include <linux/gfp.h>
#include <linux/ip.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/tcp.h>

/*
 * Pages rebuilt fragments come from, and the room a run of fragments
 * leaves after it in its page: a 64 KB arrival's, so that the next
 * arrival's first fragment can continue it, as the original's may have
 * (a sender's or a driver's pages are 32 KB).
 */
#define DETER_SHAPE_PAGE_ORDER	5
#define DETER_SHAPE_AFTER	SZ_64K
/* A bound on a head's size (a jumbo frame's is 16 KB) and on truesize. */
#define DETER_SHAPE_HEAD_MAX		SZ_64K
/* A bound on a logged truesize: 256 frames of 64 KB buffers. */
#define DETER_SHAPE_TRUESIZE_MAX	SZ_16M
/* Bytes left between two fragments that must not be contiguous. */
#define DETER_SHAPE_GAP		64

/**
 * deter_shape_tail_find() - find the arrival whose payload ended at @seq
 * @t: the table
 * @seq: sequence number
 *
 * Return: its slot, the most recently set if several, or -1.
 */
int deter_shape_tail_find(const struct deter_shape_tails *t, u32 seq)
{
	int i, best = -1;

	for (i = 0; i < DETER_SHAPE_TAILS; i++)
		if (t->page[i] && t->end_seq[i] == seq &&
		    (best < 0 || t->used[i] - t->used[best] < U32_MAX / 2))
			best = i;
	return best;
}
EXPORT_SYMBOL_IF_KUNIT(deter_shape_tail_find);

/**
 * deter_shape_tail_slot() - the slot a new arrival's last fragment takes
 * @t: the table
 * @found: its predecessor's slot (deter_shape_tail_find()), or -1
 *
 * Return: @found, else an unused slot or the least recently set one.
 * The caller sets it and its used[] to ++clock.
 */
unsigned int deter_shape_tail_slot(struct deter_shape_tails *t, int found)
{
	unsigned int i, lru = 0;

	if (found >= 0)
		return found;
	for (i = 0; i < DETER_SHAPE_TAILS; i++) {
		if (!t->page[i])
			return i;
		if (t->clock - t->used[i] > t->clock - t->used[lru])
			lru = i;
	}
	return lru;
}
EXPORT_SYMBOL_IF_KUNIT(deter_shape_tail_slot);

/*
 * Where @th's segment's payload starts and ends, of @len bytes with its
 * TCP header.
 */
static void deter_shape_seqs(const struct tcphdr *th, unsigned int len,
			     u32 *seq, u32 *end_seq)
{
	*seq = ntohl(th->seq) + th->syn;
	*end_seq = *seq + len - th->doff * 4;
}

/**
 * deter_shape_of() - measure the skb an arrival came in
 * @skb: the arrival, at deter's receive hook (data at the TCP header)
 * @t: the recent arrivals' last fragments; updated with this one's
 * @s: set to its shape
 */
void deter_shape_of(const struct sk_buff *skb, struct deter_shape_tails *t,
		    struct deter_shape *s)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	const skb_frag_t *f, *p = NULL;
	const struct sk_buff *m;
	unsigned int i, members = 0;
	u32 seq, end_seq;
	int prev;

	s->truesize = skb->truesize;
	s->end_offset = skb_end_offset(skb);
	s->headroom = min_t(unsigned int, skb_headroom(skb), U16_MAX);
	s->headlen = min_t(unsigned int, skb_headlen(skb), U16_MAX);
	s->gso_size = sh->gso_size;
	s->nr_frags = sh->nr_frags;
	skb_walk_frags(skb, m)
		members++;
	s->frag_list = min_t(unsigned int, members, U8_MAX);
	s->flags = (skb->head_frag ? DETER_SHAPE_F_HEAD_FRAG : 0) |
		   (skb_cloned(skb) ? DETER_SHAPE_F_CLONED : 0) |
		   (skb->pp_recycle ? DETER_SHAPE_F_PP_RECYCLE : 0);
	s->runs = 0;
	memset(s->run_len, 0, sizeof(s->run_len));
	for (i = 0; i < sh->nr_frags; i++, p = f) {
		f = &sh->frags[i];
		if (!p || skb_frag_page(f) != skb_frag_page(p) ||
		    skb_frag_off(f) != skb_frag_off(p) + skb_frag_size(p))
			s->runs++;
		if (s->runs <= DETER_SHAPE_RUN_LENS)
			s->run_len[s->runs - 1] += skb_frag_size(f);
	}
	/* The last run's length follows from the others'. */
	if (s->runs && s->runs <= DETER_SHAPE_RUN_LENS)
		s->run_len[s->runs - 1] = 0;
	if (!p)
		return;
	deter_shape_seqs((const struct tcphdr *)skb->data, skb->len, &seq,
			 &end_seq);
	prev = deter_shape_tail_find(t, seq);
	f = &sh->frags[0];
	if (prev >= 0 && skb_frag_page(f) == t->page[prev] &&
	    skb_frag_off(f) == t->end[prev])
		s->flags |= DETER_SHAPE_F_CONT;
	i = deter_shape_tail_slot(t, prev);
	t->page[i] = skb_frag_page(p);
	t->end[i] = skb_frag_off(p) + skb_frag_size(p);
	t->end_seq[i] = end_seq;
	t->used[i] = ++t->clock;
}
EXPORT_SYMBOL_IF_KUNIT(deter_shape_of);

/* What deter_shape_diff() compares of @s, in the order of its names. */
#define DETER_SHAPE_NFIELDS	14
static void deter_shape_fields(const struct deter_shape *s, u32 *v)
{
	const u32 f[DETER_SHAPE_NFIELDS] = {
		s->truesize, s->end_offset, s->headroom, s->headlen,
		s->gso_size, s->nr_frags, s->runs, s->frag_list,
		!!(s->flags & DETER_SHAPE_F_HEAD_FRAG),
		!!(s->flags & DETER_SHAPE_F_CONT),
		s->run_len[0], s->run_len[1], s->run_len[2], s->run_len[3],
	};

	memcpy(v, f, sizeof(f));
}

/**
 * deter_shape_diff() - the first thing in which two shapes differ
 * @x: one shape
 * @y: the other
 * @vx: set to @x's value of it
 * @vy: set to @y's
 *
 * Only what a rebuilt skb can reproduce counts: not cloned, no
 * page_pool pages.
 *
 * Return: the field's name, or NULL if they are the same.
 */
const char *deter_shape_diff(const struct deter_shape *x,
			     const struct deter_shape *y, u32 *vx, u32 *vy)
{
	static const char *const names[DETER_SHAPE_NFIELDS] = {
		"truesize", "head size", "headroom", "bytes in head", "gso_size",
		"fragments", "fragment runs", "frag_list members",
		"page-fragment head", "continuing the arrival before",
		"bytes in run 1", "bytes in run 2", "bytes in run 3",
		"bytes in run 4",
	};
	u32 a[DETER_SHAPE_NFIELDS], b[DETER_SHAPE_NFIELDS];
	unsigned int i;

	deter_shape_fields(x, a);
	deter_shape_fields(y, b);
	for (i = 0; i < DETER_SHAPE_NFIELDS; i++) {
		if (a[i] != b[i]) {
			*vx = a[i];
			*vy = b[i];
			return names[i];
		}
	}
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(deter_shape_diff);

/* Are @x and @y the same shape, as far as a rebuilt skb can be? */
bool deter_shape_eq(const struct deter_shape *x, const struct deter_shape *y)
{
	u32 vx, vy;

	return !deter_shape_diff(x, y, &vx, &vy);
}
EXPORT_SYMBOL_IF_KUNIT(deter_shape_eq);

void deter_shape_pages_free(struct deter_shape_pages *pg)
{
	unsigned int i;

	for (i = 0; i < DETER_SHAPE_TAILS; i++)
		if (pg->page[i])
			put_page(pg->page[i]);
	memset(pg, 0, sizeof(*pg));
}
EXPORT_SYMBOL_IF_KUNIT(deter_shape_pages_free);

/*
 * Room for @len bytes of fragment in slot @i of @pg: right after its
 * last one if @cont, else apart from it, in a new page when that one
 * has not DETER_SHAPE_AFTER bytes left after it. Return: the page, with
 * a reference for the fragment, and *off; NULL if out of memory, or if
 * @cont and the bytes do not fit.
 */
static struct page *deter_shape_room(struct deter_shape_pages *pg,
				     unsigned int i, unsigned int len,
				     bool cont, u32 *off)
{
	unsigned int start = pg->t.end[i] + (cont ? 0 : DETER_SHAPE_GAP);
	unsigned int order;

	if (cont && (!pg->page[i] || start + len > pg->size[i]))
		return NULL;
	if (!cont && (!pg->page[i] ||
		      start + len + DETER_SHAPE_AFTER > pg->size[i])) {
		if (pg->page[i])
			put_page(pg->page[i]);
		order = max_t(unsigned int, DETER_SHAPE_PAGE_ORDER,
			      get_order(len + DETER_SHAPE_AFTER));
		pg->page[i] = alloc_pages(GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN,
					  order);
		pg->t.page[i] = pg->page[i];
		if (!pg->page[i])
			return NULL;
		pg->size[i] = PAGE_SIZE << order;
		start = 0;
	}
	*off = start;
	pg->t.end[i] = start + len;
	get_page(pg->page[i]);
	return pg->page[i];
}

/* A cursor over the payload of consecutive segments. */
struct deter_shape_it {
	struct sk_buff *f;		/* segment, NULL past the last */
	struct sk_buff_head *frames;
	unsigned int off;		/* into f, past its TCP header */
};

static unsigned int deter_shape_thlen(const struct sk_buff *f)
{
	return ((const struct tcphdr *)f->data)->doff * 4;
}

/* Copy the next @len payload bytes to @to. Return: 0, or -EFAULT. */
static int deter_shape_copy(struct deter_shape_it *it, u8 *to,
			    unsigned int len)
{
	unsigned int n;

	while (len) {
		if (!it->f)
			return -EFAULT;
		n = it->f->len - deter_shape_thlen(it->f) - it->off;
		if (n > len)
			n = len;
		if (skb_copy_bits(it->f, deter_shape_thlen(it->f) + it->off,
				  to, n))
			return -EFAULT;
		to += n;
		len -= n;
		it->off += n;
		if (it->off == it->f->len - deter_shape_thlen(it->f)) {
			it->f = skb_queue_is_last(it->frames, it->f) ? NULL :
				it->f->next;
			it->off = 0;
		}
	}
	return 0;
}

/*
 * Put the next @len payload bytes into a new fragment @i of @skb, in
 * slot @slot of @pg, contiguous with the one before when @cont.
 */
static int deter_shape_frag(struct sk_buff *skb, unsigned int i,
			    struct deter_shape_it *it, unsigned int len,
			    struct deter_shape_pages *pg, unsigned int slot,
			    bool cont)
{
	struct page *page;
	u32 off;

	page = deter_shape_room(pg, slot, len, cont, &off);
	if (!page)
		return cont ? -ENOSPC : -ENOMEM;
	if (deter_shape_copy(it, page_address(page) + off, len)) {
		put_page(page);
		return -EFAULT;
	}
	skb_fill_page_desc(skb, i, page, off, len);
	skb->len += len;
	skb->data_len += len;
	return 0;
}

/*
 * Why @frames cannot be one arrival, as GRO merges frames: consecutive
 * in sequence, the same ACK, none but the first a SYN, a reset or
 * urgent, each checksum right. Else NULL, with *@plen their payload
 * bytes and *@flags their TCP flags ORed.
 */
static const char *deter_shape_frames(struct sk_buff_head *frames,
				      unsigned int *plen, u8 *flags)
{
	const struct tcphdr *th, *th0 = NULL;
	struct sk_buff *f;
	u32 seq = 0;

	*plen = 0;
	*flags = 0;
	skb_queue_walk(frames, f) {
		th = (const struct tcphdr *)f->data;
		if (tcp_checksum_complete(f))
			return "a segment's checksum is wrong";
		if (th0 && (ntohl(th->seq) != seq || th->ack_seq != th0->ack_seq ||
			    th->syn || th->rst || th->urg))
			return "its segments do not follow one another";
		th0 = th0 ?: th;
		seq = ntohl(th->seq) + f->len - th->doff * 4;
		*plen += f->len - th->doff * 4;
		*flags |= tcp_flag_byte(th);
	}
	return NULL;
}

/* The head an arrival of shape @s had: a page fragment or kmalloc'd. */
static struct sk_buff *deter_shape_head(const struct deter_shape *s)
{
	unsigned int size;
	void *data;
	struct sk_buff *skb;

	if (!(s->flags & DETER_SHAPE_F_HEAD_FRAG))
		return alloc_skb(s->end_offset, GFP_ATOMIC | __GFP_NOWARN);
	size = SKB_DATA_ALIGN(s->end_offset) +
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	if (size > PAGE_SIZE)
		return NULL;
	data = netdev_alloc_frag(size);
	if (!data)
		return NULL;
	skb = build_skb(data, size);
	if (!skb)
		skb_free_frag(data);
	return skb;
}

/* Why an arrival of @plen payload bytes cannot have shape @s, or NULL. */
static const char *deter_shape_check(const struct deter_shape *s,
				     unsigned int ihl, unsigned int thl,
				     unsigned int plen)
{
	unsigned int pieces = s->nr_frags + s->frag_list;

	if (s->flags & DETER_SHAPE_F_PP_RECYCLE)
		return "its driver's page_pool pages cannot be";
	if (s->headroom < ihl || s->headlen < thl ||
	    s->headroom + s->headlen > s->end_offset ||
	    s->end_offset > DETER_SHAPE_HEAD_MAX)
		return "its head does not hold its headers";
	if (ihl + thl + plen > IP_MAX_MTU)
		return "its segments hold more than an IP packet";
	if (s->headlen - thl > plen)
		return "its head holds more than its payload";
	/*
	 * Every skb's does, but a pure ACK's over veth: its sender's
	 * (skb_set_tcp_pure_ack()). Coalescing data relies on it
	 * (skb_try_coalesce()).
	 */
	if ((plen && s->truesize < SKB_TRUESIZE(s->end_offset) + plen -
			      (s->headlen - thl)) ||
	    s->truesize > DETER_SHAPE_TRUESIZE_MAX)
		return "its truesize does not cover its buffers";
	if (s->nr_frags > MAX_SKB_FRAGS || s->runs > s->nr_frags ||
	    (s->nr_frags && !s->runs))
		return "more fragments than an skb has";
	if (plen - (s->headlen - thl) < pieces ||
	    (plen > s->headlen - thl && !pieces))
		return "its payload does not fill its fragments";
	return NULL;
}

/* Fragments of @s in run @r: those i with i * runs / nr_frags == r. */
static unsigned int deter_shape_run_frags(const struct deter_shape *s,
					  unsigned int r)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->nr_frags; i++)
		n += i * s->runs / s->nr_frags == r;
	return n;
}

/*
 * The bytes of each run of @s, whose fragments hold @bytes: the logged
 * lengths of the first ones, the rest shared by the others. Return: 0,
 * or -EINVAL if a run has fewer bytes than fragments.
 */
static int deter_shape_runs(const struct deter_shape *s, unsigned int bytes,
			    unsigned int *rb)
{
	unsigned int given = min_t(unsigned int, s->runs - 1,
				   DETER_SHAPE_RUN_LENS);
	unsigned int r, left = bytes, others = s->runs - given;

	for (r = 0; r < s->runs; r++) {
		if (r < given)
			rb[r] = s->run_len[r];
		else
			rb[r] = left / others--;
		if (rb[r] > left || rb[r] < deter_shape_run_frags(s, r))
			return -EINVAL;
		left -= rb[r];
	}
	return 0;
}

/*
 * The fragments and frag_list members of @skb after its head: @rest
 * payload bytes, a near equal piece to each member and the others to
 * the fragments, laid in s->runs runs of contiguous fragments of the
 * logged lengths, in slot @slot of @pg; the first continues the slot's
 * last fragment if s says so.
 */
static int deter_shape_frags(struct sk_buff *skb, const struct deter_shape *s,
			     struct deter_shape_it *it, unsigned int rest,
			     struct deter_shape_pages *pg, unsigned int slot)
{
	unsigned int pieces = s->nr_frags + s->frag_list, i, len, r, n;
	unsigned int piece = pieces ? rest / pieces : 0, rb[MAX_SKB_FRAGS];
	struct sk_buff *m, **tail = &skb_shinfo(skb)->frag_list;
	/* Members' bytes apart: the next arrival may continue the last fragment. */
	struct deter_shape_pages mpg = {};
	bool first, cont;
	int err;

	if (s->nr_frags) {
		err = deter_shape_runs(s, rest - s->frag_list * piece, rb);
		if (err)
			return err;
	}
	for (i = 0; i < s->nr_frags; i++) {
		r = i * s->runs / s->nr_frags;
		first = !i || (i - 1) * s->runs / s->nr_frags != r;
		n = deter_shape_run_frags(s, r);
		/* The run's bytes in near equal parts, the rest in its first. */
		len = rb[r] / n + (first ? rb[r] % n : 0);
		cont = first ? !i && (s->flags & DETER_SHAPE_F_CONT) : true;
		err = deter_shape_frag(skb, i, it, len, pg, slot, cont);
		if (err)
			return err;
	}
	err = 0;
	for (i = 0; i < s->frag_list; i++) {
		m = alloc_skb(0, GFP_ATOMIC | __GFP_NOWARN);
		if (!m) {
			err = -ENOMEM;
			break;
		}
		*tail = m;
		tail = &m->next;
		err = deter_shape_frag(m, 0, it, piece, &mpg, 0, false);
		if (err)
			break;
		skb->len += piece;
		skb->data_len += piece;
	}
	deter_shape_pages_free(&mpg);
	return err;
}

/**
 * deter_shape_build() - rebuild an arrival in its original's shape
 * @frames: its segments, consecutive, in order, each at its TCP header
 *	(left for the caller to free)
 * @s: the shape its log gives
 * @segs: segments it holds
 * @pg: where its fragments' bytes go
 * @why: set to the reason when it cannot be built
 *
 * The first segment's headers head it, as GRO keeps the first frame's:
 * its IP total length covers it all and its TCP flags take the FIN and
 * PSH of the others. Its bytes are theirs, laid out as @s says.
 *
 * Return: the arrival, ready to re-enter tcp_v4_rcv(), or NULL.
 */
struct sk_buff *deter_shape_build(struct sk_buff_head *frames,
				  const struct deter_shape *s, u32 segs,
				  struct deter_shape_pages *pg,
				  const char **why)
{
	struct sk_buff *f0 = skb_peek(frames), *skb;
	struct deter_shape_it it = { .frames = frames };
	unsigned int ihl, thl, plen, inhead, slot = 0;
	u32 seq, end_seq;
	struct tcphdr *th;
	int prev;
	u8 flags;

	if (!f0) {
		*why = "no segments";
		return NULL;
	}
	ihl = f0->data - skb_network_header(f0);
	thl = deter_shape_thlen(f0);
	*why = deter_shape_frames(frames, &plen, &flags);
	if (*why)
		return NULL;
	*why = deter_shape_check(s, ihl, thl, plen);
	if (*why)
		return NULL;
	deter_shape_seqs((const struct tcphdr *)f0->data, thl + plen, &seq,
			 &end_seq);
	prev = deter_shape_tail_find(&pg->t, seq);
	if ((s->flags & DETER_SHAPE_F_CONT) && prev < 0) {
		*why = "its first fragment continues one no arrival before it has";
		return NULL;
	}
	if (s->nr_frags)
		slot = deter_shape_tail_slot(&pg->t, prev);
	*why = "no memory";
	skb = deter_shape_head(s);
	if (!skb)
		return NULL;
	if (skb_end_offset(skb) != s->end_offset) {
		*why = "its head's size is not one this host allocates";
		goto fail;
	}
	skb_reserve(skb, s->headroom);
	skb_copy_header(skb, f0);
	skb->sk = NULL;
	skb->destructor = NULL;
	skb_reset_transport_header(skb);
	skb_set_network_header(skb, -(int)ihl);
	skb->mac_header = (typeof(skb->mac_header))~0U;
	memcpy(skb_network_header(skb), skb_network_header(f0), ihl);
	skb_put_data(skb, f0->data, thl);
	inhead = s->headlen - thl;
	it.f = f0;
	if (deter_shape_copy(&it, skb_put(skb, inhead), inhead)) {
		*why = "its segments are short";
		goto fail;
	}
	switch (deter_shape_frags(skb, s, &it, plen - inhead, pg, slot)) {
	case 0:
		break;
	case -ENOSPC:
		*why = "a fragment that continued the one before has no room after it";
		goto fail;
	case -ENOMEM:
		*why = "no memory for its fragments";
		goto fail;
	case -EINVAL:
		*why = "its runs of fragments do not fit its payload";
		goto fail;
	default:
		*why = "its segments are short";
		goto fail;
	}
	if (s->nr_frags) {
		pg->t.end_seq[slot] = end_seq;
		pg->t.used[slot] = ++pg->t.clock;
	}
	th = tcp_hdr(skb);
	tcp_flag_byte(th) |= flags & (TCPHDR_FIN | TCPHDR_PSH);
	ip_hdr(skb)->tot_len = htons(ihl + skb->len);
	ip_send_check(ip_hdr(skb));
	skb_hwtstamps(skb)->hwtstamp = skb_hwtstamps(f0)->hwtstamp;
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->csum_level = 0;
	skb->truesize = s->truesize;
	/* As GRO leaves a merged skb, or a sender a GSO packet. */
	skb_shinfo(skb)->gso_size = s->gso_size;
	skb_shinfo(skb)->gso_segs = s->gso_size ? segs : 0;
	skb_shinfo(skb)->gso_type = s->gso_size ? SKB_GSO_TCPV4 |
				    (th->cwr ? SKB_GSO_TCP_ECN : 0) : 0;
	*why = NULL;
	return skb;
fail:
	kfree_skb(skb);
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(deter_shape_build);
