// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite deter_replay: the replay sequencer's decisions on scripts
 * built in memory (deter_replay_seq.c): which scripts it loads (they
 * come from userspace: every malformed header and event is refused),
 * which events are context events and which ran under an owner, which
 * segment an RX event is, where the context cursor stops, which jiffies
 * the events before it add up to, which backlog batch is due, and at
 * which of a call's signal checks the log's signal ends it.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "deter_conn.h"
#include "deter_replay_seq.h"
#include "deter_replay_value.h"

/* An event of a test script; seq is set by deter_rpl_test_script(). */
#define EV(t, s, ea, eb) { .type = (t), .sub = (s), .a = (ea), .b = (eb) }

/* A script of @n events from @ev, numbered 1.., with no socket bound. */
static struct deter_rpl *deter_rpl_test_script(struct kunit *test,
					       const struct deter_replay_ev *ev,
					       u32 n)
{
	struct deter_rpl *rpl = kunit_kzalloc(test, sizeof(*rpl), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, rpl);
	rpl->ev = kunit_kcalloc(test, n, sizeof(*ev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rpl->ev);
	memcpy(rpl->ev, ev, n * sizeof(*ev));
	for (i = 0; i < n; i++)
		rpl->ev[i].seq = i + 1;
	rpl->hdr.nevents = n;
	rpl->state = DETER_RPL_RUNNING;
	spin_lock_init(&rpl->lock);
	return rpl;
}

/* A well-formed script of 3 events and 1 checkpoint, as written. */
struct deter_rpl_test_buf {
	struct deter_replay_hdr h;
	struct deter_replay_ev ev[3];
	u64 st[DETER_ST_MAX];
};

static struct deter_rpl_test_buf *deter_rpl_test_buf(struct kunit *test)
{
	struct deter_rpl_test_buf *b = kunit_kzalloc(test, sizeof(*b),
						     GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	memcpy(b->h.magic, DETER_REPLAY_MAGIC, 8);
	b->h.version = DETER_ABI_VERSION;
	b->h.hdr_len = sizeof(b->h);
	b->h.nevents = 3;
	b->h.nstates = 1;
	b->ev[0] = (struct deter_replay_ev)EV(DETER_EV_LOCK, DETER_LOCK_APP, 0, 0);
	b->ev[1] = (struct deter_replay_ev)EV(DETER_EV_STATE, 0, 0, 0);
	b->ev[2] = (struct deter_replay_ev)EV(DETER_EV_VALUE, DETER_V_CLOCK, 5, 0);
	b->ev[0].seq = 1;
	b->ev[1].seq = 2;
	b->ev[2].seq = 7;
	return b;
}

static void deter_replay_validate_ok_test(struct kunit *test)
{
	struct deter_rpl_test_buf *b = deter_rpl_test_buf(test);

	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), 0);
	/* No checkpoints: the states are empty, the script shorter. */
	b->h.nstates = 0;
	b->ev[1].type = DETER_EV_CALL;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b) - sizeof(b->st)), 0);
	/* The highest type and lock site are in range. */
	b->ev[1].type = DETER_EV_LAST;
	b->ev[0].sub = DETER_LOCK_MAX - 1;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b) - sizeof(b->st)), 0);
}

static void deter_replay_validate_header_test(struct kunit *test)
{
	struct deter_rpl_test_buf *b = deter_rpl_test_buf(test);

	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(b->h) - 1), -EINVAL);
	/* A length that does not match the counts, either way. */
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b) - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b) - sizeof(b->st)),
			-EINVAL);
	b->h.magic[7] ^= 1;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->h.magic[7] ^= 1;
	b->h.version++;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->h.version--;
	b->h.hdr_len += 8;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->h.hdr_len -= 8;
	b->h.nevents = 0;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(b->h)), -EINVAL);
	/* Counts whose sizes would overflow or exceed the bound. */
	b->h.nevents = DETER_RPL_MAX_EVENTS + 1;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->h.nevents = U32_MAX;
	b->h.nstates = U32_MAX;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	/* More checkpoints than events. */
	b->h.nevents = 3;
	b->h.nstates = 4;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b) +
						 3 * sizeof(b->st)), -EINVAL);
}

static void deter_replay_validate_events_test(struct kunit *test)
{
	struct deter_rpl_test_buf *b = deter_rpl_test_buf(test);

	/* Sequence numbers must rise: equal is refused. */
	b->ev[2].seq = b->ev[1].seq;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->ev[2].seq = 7;
	b->ev[0].type = 0;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->ev[0].type = DETER_EV_LAST + 1;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	/* A lock site past the names the sequencer has. */
	b->ev[0].type = DETER_EV_LOCK;
	b->ev[0].sub = DETER_LOCK_MAX;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->ev[0].sub = DETER_LOCK_APP;
	/* A checkpoint index past the states. */
	b->ev[1].a = 1;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->ev[1].a = 1ULL << 32;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), -EINVAL);
	b->ev[1].a = 0;
	KUNIT_EXPECT_EQ(test, deter_rpl_validate(b, sizeof(*b)), 0);
}

static void deter_replay_classify_test(struct kunit *test)
{
	const struct deter_replay_ev app = EV(DETER_EV_LOCK, DETER_LOCK_APP, 0, 0),
		wt = EV(DETER_EV_LOCK, DETER_LOCK_WRITE_TIMER, 0, 0),
		wt_def = EV(DETER_EV_LOCK, DETER_LOCK_WRITE_TIMER,
			    DETER_LOCK_F_DEFERRED, 0),
		ka_def = EV(DETER_EV_LOCK, DETER_LOCK_KEEPALIVE_TIMER,
			    DETER_LOCK_F_DEFERRED, 0),
		app_def = EV(DETER_EV_LOCK, DETER_LOCK_APP,
			     DETER_LOCK_F_DEFERRED, 0),
		batch = EV(DETER_EV_LOCK, DETER_LOCK_BACKLOG, 3, 0),
		rx = EV(DETER_EV_RX, 0, 10, 0),
		rx_owned = EV(DETER_EV_RX, 0, 10, DETER_RX_OWNED),
		icmp = EV(DETER_EV_NET, DETER_NET_ICMP, 3 << 8, 0),
		icmp_owned = EV(DETER_EV_NET, DETER_NET_ICMP,
				DETER_ICMP_F_OWNED | 3 << 8, 0),
		gap = EV(DETER_EV_NET, DETER_NET_GAP, 10, 2),
		clock = EV(DETER_EV_VALUE, DETER_V_CLOCK, 1, 0),
		call = EV(DETER_EV_CALL, DETER_CALL_SENDMSG, 100, 0);

	/* Context events take the socket; the rest do not. */
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_ctx(&app));
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_ctx(&rx));
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_ctx(&icmp));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_ctx(&gap));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_ctx(&clock));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_ctx(&call));

	/* Owned: backlogged, deferred to the owner, or a batch. */
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_owned(&app));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_owned(&app_def));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_owned(&wt));
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_owned(&wt_def));
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_owned(&batch));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_owned(&rx));
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_owned(&rx_owned));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_owned(&icmp));
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_owned(&icmp_owned));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_owned(&clock));

	/* Deferred: only handlers tcp_release_cb() runs. */
	KUNIT_EXPECT_TRUE(test, deter_rpl_is_deferred(&wt_def));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_deferred(&wt));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_deferred(&ka_def));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_deferred(&app_def));
	KUNIT_EXPECT_FALSE(test, deter_rpl_is_deferred(NULL));
}

static void deter_replay_rx_match_test(struct kunit *test)
{
	const struct deter_replay_ev rx = EV(DETER_EV_RX, 0, 10, 0),
		syn = EV(DETER_EV_RX, 0, 0, DETER_RX_SYN),
		ctl = EV(DETER_EV_RX, 0, 10, DETER_RX_CTL),
		lock = EV(DETER_EV_LOCK, DETER_LOCK_APP, 10, 0);

	KUNIT_EXPECT_TRUE(test, deter_rpl_rx_match(&rx, false, false, 10));
	KUNIT_EXPECT_FALSE(test, deter_rpl_rx_match(&rx, false, false, 11));
	KUNIT_EXPECT_FALSE(test, deter_rpl_rx_match(&rx, true, false, 10));
	/* A series segment whose ID happens to be 0 is still matched by index. */
	KUNIT_EXPECT_TRUE(test, deter_rpl_rx_match(&rx, false, true, 10));
	/* A SYN is any SYN; a SYN's RX takes no other segment. */
	KUNIT_EXPECT_TRUE(test, deter_rpl_rx_match(&syn, true, false, 1234));
	KUNIT_EXPECT_FALSE(test, deter_rpl_rx_match(&syn, false, false, 0));
	/* The peer's time-wait answer: any segment with IP ID 0. */
	KUNIT_EXPECT_TRUE(test, deter_rpl_rx_match(&ctl, false, true, 99));
	KUNIT_EXPECT_FALSE(test, deter_rpl_rx_match(&ctl, false, false, 10));
	KUNIT_EXPECT_FALSE(test, deter_rpl_rx_match(&lock, false, false, 10));
}

/* A segment of @len payload bytes with IP ID @id, a SYN if @syn. */
static struct sk_buff *deter_replay_test_seg(struct kunit *test, u16 id,
					     unsigned int len, bool syn)
{
	struct sk_buff *skb = alloc_skb(128 + len, GFP_KERNEL);
	struct tcphdr *th;
	struct iphdr *iph;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, 64);
	skb_reset_network_header(skb);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->id = htons(id);
	iph->tot_len = htons(sizeof(*iph) + sizeof(*th) + len);
	skb_set_transport_header(skb, sizeof(*iph));
	th = skb_put_zero(skb, sizeof(*th));
	th->doff = sizeof(*th) / 4;
	th->syn = syn;
	th->ack = 1;
	skb_put_zero(skb, len);
	return skb;
}

/*
 * A control segment is out of the IP ID series: IP ID 0 and no payload.
 * A data segment with IP ID 0 is the series wrapping.
 */
static void deter_replay_skb_ctl_test(struct kunit *test)
{
	static const struct {
		u16 id;
		unsigned int len;
		bool syn, ctl;
	} c[] = {
		{ 0, 0, false, true },		/* a host's reset */
		{ 0, 1448, false, false },	/* the series wrapping */
		{ 7, 0, false, false },		/* an ACK of the series */
		{ 0, 0, true, false },		/* a SYN */
	};
	struct sk_buff *skb;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		skb = deter_replay_test_seg(test, c[i].id, c[i].len, c[i].syn);
		KUNIT_EXPECT_EQ_MSG(test, deter_rpl_skb_ctl(skb), c[i].ctl,
				    "case %u", i);
		kfree_skb(skb);
	}
}

static void deter_replay_ctx_skip_test(struct kunit *test)
{
	static const struct deter_replay_ev ev[] = {
		EV(DETER_EV_VALUE, DETER_V_JIFFIES, 1000, 0),
		EV(DETER_EV_CALL, DETER_CALL_SENDMSG, 100, 0),
		EV(DETER_EV_LOCK, DETER_LOCK_APP, 0, 0),
		EV(DETER_EV_VALUE, DETER_V_CLOCK, 5, 0),
		EV(DETER_EV_NET, DETER_NET_GAP, 3, 1),
		EV(DETER_EV_RX, 0, 7, 0),
		EV(DETER_EV_CALL_DONE, DETER_CALL_SENDMSG, 100, 0),
	};
	struct deter_rpl *rpl = deter_rpl_test_script(test, ev, ARRAY_SIZE(ev));

	deter_rpl_ctx_skip(rpl, 0, NULL);
	KUNIT_EXPECT_EQ(test, rpl->ctx, 2);
	deter_rpl_ctx_skip(rpl, 2, NULL);
	KUNIT_EXPECT_EQ(test, rpl->ctx, 2);
	/* A network action is not a context: the segment is. */
	deter_rpl_ctx_skip(rpl, 3, NULL);
	KUNIT_EXPECT_EQ(test, rpl->ctx, 5);
	/* Past the last context event: the end. */
	deter_rpl_ctx_skip(rpl, 6, NULL);
	KUNIT_EXPECT_EQ(test, rpl->ctx, ARRAY_SIZE(ev));
	KUNIT_EXPECT_NULL(test, deter_rpl_at(rpl, rpl->ctx));
}

static void deter_replay_jiffies_test(struct kunit *test)
{
	static const struct deter_replay_ev ev[] = {
		EV(DETER_EV_VALUE, DETER_V_JIFFIES, 1000, 0),
		EV(DETER_EV_LOCK, DETER_LOCK_APP, 0, 0),
		EV(DETER_EV_VALUE, DETER_V_JIFFIES, 3, 0),
		EV(DETER_EV_VALUE, DETER_V_CLOCK, 5, 0),
		EV(DETER_EV_LOCK, DETER_LOCK_WRITE_TIMER, 0, 0),
		EV(DETER_EV_VALUE, DETER_V_JIFFIES, 4, 0),
		EV(DETER_EV_RX, 0, 7, DETER_RX_OWNED),
		EV(DETER_EV_VALUE, DETER_V_JIFFIES, 8, 0),
		EV(DETER_EV_LOCK, DETER_LOCK_APP, 0, 0),
	};
	struct deter_rpl *rpl = deter_rpl_test_script(test, ev, ARRAY_SIZE(ev));

	/* The deltas logged before an event, applied once each. */
	deter_rpl_jiffies_to(rpl, 1);
	KUNIT_EXPECT_EQ(test, rpl->jiffies, 1000UL);
	deter_rpl_jiffies_to(rpl, 4);
	KUNIT_EXPECT_EQ(test, rpl->jiffies, 1003UL);
	deter_rpl_jiffies_to(rpl, 4);
	deter_rpl_jiffies_to(rpl, 2);
	KUNIT_EXPECT_EQ(test, rpl->jiffies, 1003UL);

	/*
	 * Taking the timer's turn moves to the owned segment; a softirq's
	 * backlogged segment leaves the jiffies to the owner, and the
	 * last unowned context stays the timer's.
	 */
	rpl->ctx = 4;
	deter_rpl_ctx_advance(rpl);
	KUNIT_EXPECT_EQ(test, rpl->ctx, 6);
	KUNIT_EXPECT_EQ(test, rpl->ctx_seq, 5);
	deter_rpl_ctx_advance(rpl);
	KUNIT_EXPECT_EQ(test, rpl->ctx, 8);
	KUNIT_EXPECT_EQ(test, rpl->jiffies, 1003UL);
	KUNIT_EXPECT_EQ(test, rpl->ctx_seq, 5);
	/* The app's turn applies every delta before it. */
	deter_rpl_ctx_advance(rpl);
	KUNIT_EXPECT_EQ(test, rpl->jiffies, 1015UL);
	KUNIT_EXPECT_EQ(test, rpl->ctx_seq, 9);
	KUNIT_EXPECT_EQ(test, rpl->ctx, ARRAY_SIZE(ev));
}

static void deter_replay_next_value_test(struct kunit *test)
{
	static const struct deter_replay_ev ev[] = {
		EV(DETER_EV_VALUE, DETER_V_HOST, 2, (u64)DETER_HOST_SIGNAL << 32),
		EV(DETER_EV_VALUE, DETER_V_CLOCK, 5, 0),
		EV(DETER_EV_VALUE, DETER_V_HOST, 4, (u64)DETER_HOST_TIMEOUT << 32),
		EV(DETER_EV_RX, DETER_V_HOST, 7, 0),
		EV(DETER_EV_VALUE, DETER_V_HOST, 0, (u64)DETER_HOST_XMIT << 32 | 1),
	};
	struct deter_rpl *rpl = deter_rpl_test_script(test, ev, ARRAY_SIZE(ev));
	const struct deter_replay_ev *e;
	u32 cursor = 0;

	/* Signals are not host answers; other types are not values. */
	e = deter_rpl_next_value(rpl, &cursor, DETER_V_HOST);
	KUNIT_EXPECT_PTR_EQ(test, e, &rpl->ev[2]);
	KUNIT_EXPECT_EQ(test, cursor, 3);
	e = deter_rpl_next_value(rpl, &cursor, DETER_V_HOST);
	KUNIT_EXPECT_PTR_EQ(test, e, &rpl->ev[4]);
	KUNIT_EXPECT_EQ(test, cursor, 5);
	e = deter_rpl_next_value(rpl, &cursor, DETER_V_HOST);
	KUNIT_EXPECT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, cursor, ARRAY_SIZE(ev));
	cursor = 0;
	e = deter_rpl_next_value(rpl, &cursor, DETER_V_CLOCK);
	KUNIT_EXPECT_PTR_EQ(test, e, &rpl->ev[1]);
}

/*
 * A send that waited, found room after its wait and copied, then found
 * none again and was ended by a signal, all in one lock turn: only the
 * check after the send space mark the log has before the signal takes it.
 */
static void deter_replay_signal_test(struct kunit *test)
{
	static const struct deter_replay_ev ev[] = {
		EV(DETER_EV_LOCK, DETER_LOCK_APP, 0, 0),
		EV(DETER_EV_CALL, DETER_ABI_CALL_SENDMSG, 65536, 0),
		EV(DETER_EV_VALUE, DETER_V_HOST, 2, (u64)DETER_HOST_NOSPACE << 32),
		EV(DETER_EV_VALUE, DETER_V_HOST, 0, (u64)DETER_HOST_SIGNAL << 32),
		EV(DETER_EV_CALL_DONE, DETER_ABI_CALL_SENDMSG, 65160, 0),
	};
	struct deter_rpl *rpl = deter_rpl_test_script(test, ev, ARRAY_SIZE(ev));
	struct deter_sock *ds = kunit_kzalloc(test, sizeof(*ds), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ds);
	rpl->ds = ds;
	rpl->ctx = 1;
	rpl->call = 1;
	rpl->host.ev = &rpl->ev[2];

	/* After the wait: the mark logged before the signal is still due. */
	ds->host_run = 1;
	KUNIT_EXPECT_FALSE(test, deter_rpl_signal(rpl));
	KUNIT_EXPECT_EQ(test, rpl->state, DETER_RPL_RUNNING);
	/* The mark given and no usual answer since, as logged: this one. */
	rpl->host.ev = NULL;
	ds->host_run = 0;
	KUNIT_EXPECT_TRUE(test, deter_rpl_signal(rpl));
	KUNIT_EXPECT_EQ(test, rpl->sig, 4);
	KUNIT_EXPECT_FALSE(test, deter_rpl_signal(rpl));

	/* More usual answers than the log has before it: a divergence. */
	rpl->sig = 0;
	ds->host_run = 2;
	KUNIT_EXPECT_FALSE(test, deter_rpl_signal(rpl));
	KUNIT_EXPECT_EQ(test, rpl->state, DETER_RPL_DIVERGED);
}

static void deter_replay_batch_test(struct kunit *test)
{
	static const struct deter_replay_ev ev[] = {
		EV(DETER_EV_RX, 0, 7, DETER_RX_OWNED),
		EV(DETER_EV_VALUE, DETER_V_CLOCK, 5, 0),
		EV(DETER_EV_LOCK, DETER_LOCK_DELACK_TIMER,
		   DETER_LOCK_F_DEFERRED, 0),
		EV(DETER_EV_LOCK, DETER_LOCK_BACKLOG, 2, 0),
		EV(DETER_EV_RX, 0, 8, 0),
		EV(DETER_EV_LOCK, DETER_LOCK_BACKLOG, 0, 0),
	};
	struct deter_rpl *rpl = deter_rpl_test_script(test, ev, ARRAY_SIZE(ev));
	struct deter_sock *ds = kunit_kzalloc(test, sizeof(*ds), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ds);
	rpl->ds = ds;
	/* Owned events before it: the batch is this ownership's. */
	KUNIT_EXPECT_PTR_EQ(test, deter_rpl_next_batch(rpl), &rpl->ev[3]);
	/* Due at the check that found it, not at another. */
	ds->bl_checks = 1;
	KUNIT_EXPECT_FALSE(test, deter_rpl_batch_due(rpl));
	ds->bl_checks = 2;
	KUNIT_EXPECT_TRUE(test, deter_rpl_batch_due(rpl));
	/* Nor once the script stopped. */
	rpl->state = DETER_RPL_DIVERGED;
	KUNIT_EXPECT_FALSE(test, deter_rpl_batch_due(rpl));
	rpl->state = DETER_RPL_RUNNING;
	/* An unowned context first: the next batch is another ownership's. */
	rpl->ctx = 4;
	KUNIT_EXPECT_NULL(test, deter_rpl_next_batch(rpl));
	ds->bl_checks = 0;
	KUNIT_EXPECT_FALSE(test, deter_rpl_batch_due(rpl));
	rpl->ctx = 5;
	KUNIT_EXPECT_PTR_EQ(test, deter_rpl_next_batch(rpl), &rpl->ev[5]);
	KUNIT_EXPECT_TRUE(test, deter_rpl_batch_due(rpl));
}

/*
 * A request socket's timeouts run where the log has them among the
 * peer's segments: two before any came, one after the second.
 */
static void deter_replay_req_timeouts_test(struct kunit *test)
{
	const struct deter_replay_ev ev[] = {
		EV(DETER_EV_VALUE, DETER_V_SYN_IPID, 100, 0),
		EV(DETER_EV_NET, DETER_NET_SYNACK_TIMER, 0, 0),
		EV(DETER_EV_NET, DETER_NET_SYNACK_TIMER, 0, 0),
		EV(DETER_EV_NET, DETER_NET_SYNACK_TIMER, 2, 0),
		EV(DETER_EV_VALUE, DETER_V_CHILD_IPID, 103, 1),
	};
	struct deter_rpl *rpl = deter_rpl_test_script(test, ev, ARRAY_SIZE(ev));

	rpl->state = DETER_RPL_LOADED;
	/* The real timer expired: one at a time. */
	KUNIT_EXPECT_EQ(test, deter_rpl_req_timeouts_due(rpl, 1), 1U);
	/* A segment came: the rest due before it run first. */
	KUNIT_EXPECT_EQ(test, deter_rpl_req_timeouts_due(rpl, U32_MAX), 1U);
	rpl->req_rx = 1;
	KUNIT_EXPECT_EQ(test, deter_rpl_req_timeouts_due(rpl, U32_MAX), 0U);
	rpl->req_rx = 2;
	KUNIT_EXPECT_EQ(test, deter_rpl_req_timeouts_due(rpl, U32_MAX), 1U);
	KUNIT_EXPECT_EQ(test, deter_rpl_req_timeouts_due(rpl, U32_MAX), 0U);
	KUNIT_EXPECT_EQ(test, rpl->req_timeouts, 3U);
}

static struct kunit_case deter_replay_cases[] = {
	KUNIT_CASE(deter_replay_validate_ok_test),
	KUNIT_CASE(deter_replay_validate_header_test),
	KUNIT_CASE(deter_replay_validate_events_test),
	KUNIT_CASE(deter_replay_classify_test),
	KUNIT_CASE(deter_replay_rx_match_test),
	KUNIT_CASE(deter_replay_skb_ctl_test),
	KUNIT_CASE(deter_replay_ctx_skip_test),
	KUNIT_CASE(deter_replay_jiffies_test),
	KUNIT_CASE(deter_replay_next_value_test),
	KUNIT_CASE(deter_replay_signal_test),
	KUNIT_CASE(deter_replay_batch_test),
	KUNIT_CASE(deter_replay_req_timeouts_test),
	{}
};

static struct kunit_suite deter_replay_suite = {
	.name = "deter_replay",
	.test_cases = deter_replay_cases,
};

kunit_test_suite(deter_replay_suite);
