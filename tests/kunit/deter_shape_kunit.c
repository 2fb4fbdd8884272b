// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite deter_shape: an arrival's shape (struct deter_shape) packed
 * into a NET SHAPE event and back, measured on an skb (deter_shape_of()),
 * and an arrival rebuilt from its segments (deter_shape_build()) in the
 * shapes drivers and GRO make: a linear page-fragment head (e1000e), a
 * header-only kmalloc head with a fragment per frame (virtio-net's
 * mergeable buffers, merged by GRO), fragments past MAX_SKB_FRAGS in a
 * frag_list, and fragments contiguous with the arrival that holds the
 * bytes before theirs. Then a passive end's first arrival, taken at its
 * request socket (deter_rpl_shape_child()).
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/dst.h>
#include <net/ip.h>
#include <net/tcp.h>

#include "../../include/deter_abi.h"
#include "deter_replay_seq.h"
#include "deter_replay_shape.h"
#include "deter_shape.h"

#define DETER_SHAPE_TEST_THL	32	/* a TCP header with timestamps */

/*
 * Segment @k of a test flow: IP and TCP headers, then @len payload
 * bytes counting up from @k * 100, as a segment at deter's hook has it
 * (data at the TCP header).
 */
static struct sk_buff *deter_shape_seg(struct kunit *test, unsigned int k,
				       unsigned int len, u8 flags)
{
	struct sk_buff *skb = alloc_skb(256 + len, GFP_KERNEL);
	struct tcphdr *th;
	struct iphdr *iph;
	unsigned int i;
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, 64);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->id = htons(1000 + k);
	skb_reset_network_header(skb);
	__skb_pull(skb, sizeof(*iph));
	skb_reset_transport_header(skb);
	th = skb_put_zero(skb, DETER_SHAPE_TEST_THL);
	th->doff = DETER_SHAPE_TEST_THL / 4;
	th->seq = htonl(k * len);
	tcp_flag_byte(th) = TCPHDR_ACK | flags;
	p = skb_put(skb, len);
	for (i = 0; i < len; i++)
		p[i] = (u8)(k * 100 + i);
	skb->ip_summed = CHECKSUM_UNNECESSARY;	/* as tcp_v4_rcv() found it */
	return skb;
}

/* Segments @k0 to @k0 + @n - 1 of @len bytes, the last with PSH. */
static void deter_shape_segs_from(struct kunit *test, struct sk_buff_head *q,
				  unsigned int k0, unsigned int n,
				  unsigned int len)
{
	unsigned int k;

	skb_queue_head_init(q);
	for (k = k0; k < k0 + n; k++)
		__skb_queue_tail(q, deter_shape_seg(test, k, len,
						    k == k0 + n - 1 ? TCPHDR_PSH : 0));
}

/* @n segments of @len bytes from the first, the last with PSH. */
static void deter_shape_segs(struct kunit *test, struct sk_buff_head *q,
			     unsigned int n, unsigned int len)
{
	deter_shape_segs_from(test, q, 0, n, len);
}

/* @skb's payload is segments @k0 to @k0 + @n - 1's of @len bytes, in order. */
static void deter_shape_expect_bytes(struct kunit *test, struct sk_buff *skb,
				     unsigned int k0, unsigned int n,
				     unsigned int len)
{
	unsigned int k, i;
	u8 b;

	KUNIT_ASSERT_EQ(test, skb->len, DETER_SHAPE_TEST_THL + n * len);
	for (k = 0; k < n; k++)
		for (i = 0; i < len; i += 7) {
			KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, DETER_SHAPE_TEST_THL +
							    k * len + i, &b, 1), 0);
			KUNIT_EXPECT_EQ(test, b, (u8)((k0 + k) * 100 + i));
		}
}

/* The head size alloc_skb() gives for a request of @size bytes. */
static u32 deter_shape_kmalloc_end(unsigned int size)
{
	struct sk_buff *skb = alloc_skb(size, GFP_KERNEL);
	u32 end = skb ? skb_end_offset(skb) : 0;

	kfree_skb(skb);
	return end;
}

/*
 * Build segments @k0 to @k0 + @n - 1 of @len bytes in shape @s; check it
 * measures as @s.
 */
static struct sk_buff *deter_shape_check_build_from(struct kunit *test,
						    const struct deter_shape *s,
						    unsigned int k0, unsigned int n,
						    unsigned int len,
						    struct deter_shape_pages *pg,
						    struct deter_shape_tails *tail)
{
	struct deter_shape have;
	struct sk_buff_head q;
	struct sk_buff *skb;
	const char *why = NULL;

	deter_shape_segs_from(test, &q, k0, n, len);
	skb = deter_shape_build(&q, s, n, pg, &why);
	__skb_queue_purge(&q);
	KUNIT_ASSERT_NOT_NULL_MSG(test, skb, "%s", why);
	deter_shape_of(skb, tail, &have);
	KUNIT_EXPECT_TRUE(test, deter_shape_eq(&have, s));
	KUNIT_EXPECT_EQ(test, have.truesize, s->truesize);
	KUNIT_EXPECT_EQ(test, have.nr_frags, s->nr_frags);
	KUNIT_EXPECT_EQ(test, have.runs, s->runs);
	KUNIT_EXPECT_EQ(test, have.frag_list, s->frag_list);
	KUNIT_EXPECT_EQ(test, have.end_offset, s->end_offset);
	KUNIT_EXPECT_EQ(test, have.headlen, s->headlen);
	KUNIT_EXPECT_EQ(test, have.headroom, s->headroom);
	deter_shape_expect_bytes(test, skb, k0, n, len);
	KUNIT_EXPECT_EQ(test, ntohs(ip_hdr(skb)->tot_len),
			sizeof(struct iphdr) + skb->len);
	KUNIT_EXPECT_EQ(test, ntohs(ip_hdr(skb)->id), 1000 + k0);
	KUNIT_EXPECT_TRUE(test, tcp_hdr(skb)->psh);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->gso_size, s->gso_size);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->gso_segs, s->gso_size ? n : 0);
	return skb;
}

static struct sk_buff *deter_shape_check_build(struct kunit *test,
					       const struct deter_shape *s,
					       unsigned int n, unsigned int len,
					       struct deter_shape_pages *pg,
					       struct deter_shape_tails *tail)
{
	return deter_shape_check_build_from(test, s, 0, n, len, pg, tail);
}

static void deter_shape_pack_test(struct kunit *test)
{
	struct deter_shape s = {
		.truesize = 66304, .end_offset = 1728, .headroom = 98,
		.headlen = 94, .gso_size = 1448, .nr_frags = 17,
		.frag_list = 28, .runs = 3, .run_len = { 5792, 2896 },
		.flags = DETER_SHAPE_F_HEAD_FRAG | DETER_SHAPE_F_CONT,
	}, u;
	u64 a, b, c;

	deter_shape_pack(&s, &a, &b, &c);
	KUNIT_ASSERT_EQ(test, deter_shape_unpack(a, b, c, &u), 0);
	KUNIT_EXPECT_TRUE(test, deter_shape_eq(&s, &u));
	KUNIT_EXPECT_EQ(test, u.flags, s.flags);
	KUNIT_EXPECT_EQ(test, u.run_len[1], 2896);

	/* Too large for its bits: saturated, never another valid value. */
	s.end_offset = 1 << 24;
	deter_shape_pack(&s, &a, &b, &c);
	KUNIT_ASSERT_EQ(test, deter_shape_unpack(a, b, c, &u), 0);
	KUNIT_EXPECT_EQ(test, u.end_offset, DETER_SHAPE_END_MAX);

	/* Bits no shape sets are refused. */
	KUNIT_EXPECT_EQ(test, deter_shape_unpack(a | 1ULL << 62, b, c, &u), -1);
	KUNIT_EXPECT_EQ(test, deter_shape_unpack(a, b | 0x7fULL << 56, c, &u), -1);
}

/* e1000e: one frame, linear in a page-fragment head. */
static void deter_shape_linear_test(struct kunit *test)
{
	struct deter_shape_pages pg = {};
	struct deter_shape_tails tail = {};
	struct deter_shape s = {
		.headroom = 64 + 14 + 20, .headlen = DETER_SHAPE_TEST_THL + 1448,
		.flags = DETER_SHAPE_F_HEAD_FRAG,
	};
	struct sk_buff *skb;

	s.end_offset = SKB_DATA_ALIGN(s.headroom + s.headlen + 64);
	s.truesize = SKB_TRUESIZE(s.end_offset);
	skb = deter_shape_check_build(test, &s, 1, 1448, &pg, &tail);
	KUNIT_EXPECT_TRUE(test, skb->head_frag);
	KUNIT_EXPECT_FALSE(test, skb_is_nonlinear(skb));
	kfree_skb(skb);
	deter_shape_pages_free(&pg);
}

/* virtio-net mergeable, GRO: headers and a little payload in a kmalloc head. */
static void deter_shape_gro_test(struct kunit *test)
{
	struct deter_shape_pages pg = {};
	struct deter_shape_tails tail = {};
	struct deter_shape s = {
		.truesize = 9088, .headroom = 66, .headlen = DETER_SHAPE_TEST_THL + 62,
		.gso_size = 1448, .nr_frags = 4, .runs = 2, .run_len = { 1000 },
	};
	struct sk_buff *skb;

	s.end_offset = deter_shape_kmalloc_end(256);
	skb = deter_shape_check_build(test, &s, 4, 1448, &pg, &tail);
	KUNIT_EXPECT_FALSE(test, skb->head_frag);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->gso_type & SKB_GSO_TCPV4,
			SKB_GSO_TCPV4);
	kfree_skb(skb);

	/* A run of fewer bytes than fragments cannot be. */
	s.run_len[0] = 1;
	{
		struct sk_buff_head q;
		const char *why = NULL;

		deter_shape_segs(test, &q, 4, 1448);
		KUNIT_EXPECT_NULL(test, deter_shape_build(&q, &s, 4, &pg, &why));
		KUNIT_EXPECT_NOT_NULL(test, why);
		__skb_queue_purge(&q);
	}

	/* Past MAX_SKB_FRAGS, GRO chains frames in a frag_list. */
	s.nr_frags = MAX_SKB_FRAGS;
	s.runs = MAX_SKB_FRAGS;
	s.run_len[0] = 300;
	s.run_len[1] = 400;
	s.run_len[2] = 500;
	s.run_len[3] = 600;
	s.frag_list = 3;
	s.truesize = 60000;
	skb = deter_shape_check_build(test, &s, MAX_SKB_FRAGS + 3, 1448, &pg, &tail);
	KUNIT_EXPECT_TRUE(test, skb_has_frag_list(skb));
	kfree_skb(skb);
	deter_shape_pages_free(&pg);
}

/* Is @b's first fragment right after @a's last? */
static bool deter_shape_follows(const struct sk_buff *a,
				const struct sk_buff *b)
{
	const skb_frag_t *l = &skb_shinfo(a)->frags[skb_shinfo(a)->nr_frags - 1];
	const skb_frag_t *f = &skb_shinfo(b)->frags[0];

	return skb_frag_page(f) == skb_frag_page(l) &&
	       skb_frag_off(f) == skb_frag_off(l) + skb_frag_size(l);
}

/*
 * A first fragment that continues the last of the arrival holding the
 * byte before it: the one before in time, or, for a retransmission that
 * fills a hole, the one before the hole.
 */
static void deter_shape_cont_test(struct kunit *test)
{
	struct deter_shape_pages pg = {};
	struct deter_shape_tails tail = {};
	struct deter_shape s = {
		.truesize = 4000, .headroom = 66, .headlen = DETER_SHAPE_TEST_THL,
		.gso_size = 1000, .nr_frags = 2, .runs = 1,
	};
	struct sk_buff *one, *two, *four, *three;
	struct sk_buff_head q;
	const char *why = NULL;

	s.end_offset = deter_shape_kmalloc_end(256);
	one = deter_shape_check_build_from(test, &s, 0, 2, 1000, &pg, &tail);
	s.flags |= DETER_SHAPE_F_CONT;
	two = deter_shape_check_build_from(test, &s, 2, 2, 1000, &pg, &tail);
	KUNIT_EXPECT_TRUE(test, deter_shape_follows(one, two));

	/* Segments 6-7 arrive before 4-5: not after anything here. */
	s.flags &= ~DETER_SHAPE_F_CONT;
	four = deter_shape_check_build_from(test, &s, 6, 2, 1000, &pg, &tail);
	/* 4-5 continue 2-3, 6-7 having come in between. */
	s.flags |= DETER_SHAPE_F_CONT;
	three = deter_shape_check_build_from(test, &s, 4, 2, 1000, &pg, &tail);
	KUNIT_EXPECT_TRUE(test, deter_shape_follows(two, three));
	KUNIT_EXPECT_FALSE(test, deter_shape_follows(three, four));

	/* Nothing here ends where 10-11 begin: no fragment to continue. */
	deter_shape_segs_from(test, &q, 10, 2, 1000);
	KUNIT_EXPECT_NULL(test, deter_shape_build(&q, &s, 2, &pg, &why));
	KUNIT_EXPECT_NOT_NULL(test, why);
	__skb_queue_purge(&q);

	kfree_skb(one);
	kfree_skb(two);
	kfree_skb(three);
	kfree_skb(four);
	deter_shape_pages_free(&pg);
}

/* Shapes no segments can be built in: NULL and a reason. */
static void deter_shape_refuse_test(struct kunit *test)
{
	struct deter_shape_pages pg = {};
	struct deter_shape s = {
		.truesize = 2304, .headroom = 66, .headlen = 20,
	};
	struct sk_buff_head q;
	const char *why = NULL;

	s.end_offset = deter_shape_kmalloc_end(256);
	deter_shape_segs(test, &q, 1, 100);
	/* A head that does not hold the TCP header. */
	KUNIT_EXPECT_NULL(test, deter_shape_build(&q, &s, 1, &pg, &why));
	KUNIT_EXPECT_NOT_NULL(test, why);
	/* Payload left over with no fragment to hold it. */
	s.headlen = DETER_SHAPE_TEST_THL + 10;
	why = NULL;
	KUNIT_EXPECT_NULL(test, deter_shape_build(&q, &s, 1, &pg, &why));
	KUNIT_EXPECT_NOT_NULL(test, why);
	/* A truesize below what its head and fragments take. */
	s.headlen = DETER_SHAPE_TEST_THL + 100;
	s.truesize = SKB_TRUESIZE(s.end_offset) - 1;
	why = NULL;
	KUNIT_EXPECT_NULL(test, deter_shape_build(&q, &s, 1, &pg, &why));
	KUNIT_EXPECT_NOT_NULL(test, why);
	s.truesize = 2304;
	/* Page-pool pages. */
	s.headlen = DETER_SHAPE_TEST_THL + 100;
	s.flags = DETER_SHAPE_F_PP_RECYCLE;
	why = NULL;
	KUNIT_EXPECT_NULL(test, deter_shape_build(&q, &s, 1, &pg, &why));
	KUNIT_EXPECT_NOT_NULL(test, why);
	__skb_queue_purge(&q);

	/* Segments that GRO would not have merged: a gap in sequence. */
	s.flags = 0;
	s.headlen = DETER_SHAPE_TEST_THL;
	s.nr_frags = 2;
	s.runs = 1;
	s.truesize = 8000;
	deter_shape_segs(test, &q, 2, 100);
	tcp_hdr(skb_peek_tail(&q))->seq = htonl(1000);
	why = NULL;
	KUNIT_EXPECT_NULL(test, deter_shape_build(&q, &s, 2, &pg, &why));
	KUNIT_EXPECT_NOT_NULL(test, why);
	__skb_queue_purge(&q);
	deter_shape_pages_free(&pg);
}

/* The route a segment for the request socket holds; never released. */
static struct dst_entry deter_shape_test_dst;

/* Segment @k of the child test flow, routed as tcp_v4_rcv() has it. */
static struct sk_buff *deter_shape_child_seg(struct kunit *test,
					     unsigned int k)
{
	struct sk_buff *skb = deter_shape_seg(test, k, 1448, 0);

	dst_hold(&deter_shape_test_dst);
	skb_dst_set(skb, &deter_shape_test_dst);
	return skb;
}

/*
 * A script whose passive end's first arrival is segments 0 to 3 (IP IDs
 * 1000 to 1003) merged by GRO in shape @s.
 */
static struct deter_rpl *deter_shape_child_script(struct kunit *test,
						  const struct deter_shape *s)
{
	struct deter_rpl *rpl = kunit_kzalloc(test, sizeof(*rpl), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rpl);
	rpl->ev = kunit_kcalloc(test, 2, sizeof(*rpl->ev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rpl->ev);
	rpl->ev[0].type = DETER_EV_NET;
	rpl->ev[0].sub = DETER_NET_SHAPE;
	deter_shape_pack(s, &rpl->ev[0].a, &rpl->ev[0].b, &rpl->ev[0].c);
	rpl->ev[1].type = DETER_EV_VALUE;
	rpl->ev[1].sub = DETER_V_CHILD_IPID;
	rpl->ev[1].a = 1000;
	rpl->ev[1].b = 4;
	rpl->hdr.nevents = 2;
	rpl->state = DETER_RPL_LOADED;
	spin_lock_init(&rpl->lock);
	__skb_queue_head_init(&rpl->frames);
	return rpl;
}

/*
 * The segments that create a passive end are taken at the request socket
 * until its first arrival is whole, then handed on rebuilt in its logged
 * shape; a segment that is not the arrival's first goes on as it came,
 * and one out of turn hands on what was taken and says why.
 */
static void deter_shape_child_test(struct kunit *test)
{
	struct deter_shape s = {
		.truesize = 9088, .headroom = 66, .headlen = DETER_SHAPE_TEST_THL + 62,
		.gso_size = 1448, .nr_frags = 4, .runs = 2, .run_len = { 1000 },
	};
	struct deter_shape have;
	struct deter_shape_tails tail = {};
	struct sk_buff_head out;
	struct deter_rpl *rpl;
	struct sk_buff *skb;
	unsigned int k;

	rcuref_init(&deter_shape_test_dst.__rcuref, 1);
	s.end_offset = deter_shape_kmalloc_end(256);
	__skb_queue_head_init(&out);

	/* Whole: held until its fourth segment, then handed on rebuilt. */
	rpl = deter_shape_child_script(test, &s);
	skb = deter_shape_child_seg(test, 1);
	KUNIT_EXPECT_FALSE(test, deter_rpl_shape_child(rpl, skb, &out));
	kfree_skb(skb);
	for (k = 0; k < 4; k++) {
		KUNIT_EXPECT_TRUE(test, deter_rpl_shape_child(rpl, deter_shape_child_seg(test, k),
							      &out));
		KUNIT_EXPECT_EQ(test, skb_queue_len(&out), k == 3 ? 1U : 0U);
	}
	skb = __skb_dequeue(&out);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, skb->mark, DETER_RPL_SHAPED_MARK);
	deter_shape_of(skb, &tail, &have);
	KUNIT_EXPECT_TRUE(test, deter_shape_eq(&have, &s));
	KUNIT_EXPECT_EQ(test, ntohs(ip_hdr(skb)->id), 1000);
	KUNIT_EXPECT_STREQ(test, rpl->child_why, "");
	/* The rebuilt arrival re-enters tcp_v4_rcv(): left alone there. */
	KUNIT_EXPECT_FALSE(test, deter_rpl_shape_child(rpl, skb, &out));
	kfree_skb(skb);
	deter_shape_pages_free(&rpl->pages);

	/* Out of turn: what was taken goes on, the reason kept. */
	rpl = deter_shape_child_script(test, &s);
	KUNIT_EXPECT_TRUE(test, deter_rpl_shape_child(rpl, deter_shape_child_seg(test, 0),
						      &out));
	skb = deter_shape_child_seg(test, 2);
	KUNIT_EXPECT_FALSE(test, deter_rpl_shape_child(rpl, skb, &out));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&out), 1U);
	KUNIT_EXPECT_EQ(test, ntohs(ip_hdr(skb_peek(&out))->id), 1000);
	KUNIT_EXPECT_NOT_NULL(test, strstr(rpl->child_why, "ipid 1002"));
	/* Once it failed, its segments go on as they come. */
	KUNIT_EXPECT_FALSE(test, deter_rpl_shape_child(rpl, skb_peek(&out), &out));
	kfree_skb(skb);
	__skb_queue_purge(&out);
	KUNIT_EXPECT_TRUE(test, skb_queue_empty(&rpl->frames));
	deter_shape_pages_free(&rpl->pages);
}

static struct kunit_case deter_shape_test_cases[] = {
	KUNIT_CASE(deter_shape_pack_test),
	KUNIT_CASE(deter_shape_linear_test),
	KUNIT_CASE(deter_shape_gro_test),
	KUNIT_CASE(deter_shape_cont_test),
	KUNIT_CASE(deter_shape_refuse_test),
	KUNIT_CASE(deter_shape_child_test),
	{}
};

static struct kunit_suite deter_shape_test_suite = {
	.name = "deter_shape",
	.test_cases = deter_shape_test_cases,
};

kunit_test_suite(deter_shape_test_suite);
