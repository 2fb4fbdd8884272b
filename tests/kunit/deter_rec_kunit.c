// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite deter_rec: the jiffies a recording context reads, held at
 * the value of its last event, per context, until a step of a socket not
 * recorded or for at most DETER_REC_JIF_HOLD (DETER_REC_JIF_STEP while a
 * task owns a recorded socket); the passive handshakes'
 * table; the TS option parser of received segments.
 */
#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/jiffies.h>
#include <linux/preempt.h>
#include <net/ip.h>
#include <net/tcp.h>

#include "deter_rec_hook.h"
#include "deter_rec_value.h"

/* @got is @want, unless the hold ran out since @want was set. */
static bool deter_rec_jif_held(unsigned long got, unsigned long want)
{
	return got == want || time_after(jiffies, want + HZ / 10);
}

static void deter_rec_jif_hold_test(struct kunit *test)
{
	unsigned long j;

	migrate_disable();
	j = jiffies;
	deter_rec_jif_set(j);
	KUNIT_EXPECT_TRUE(test, deter_rec_jif_held(deter_rec_jiffies_read(), j));
	/* A few ticks behind is held. */
	deter_rec_jif_set(j - 3);
	KUNIT_EXPECT_TRUE(test, deter_rec_jif_held(deter_rec_jiffies_read(), j - 3));
	/* Past the hold is not: the live value. */
	deter_rec_jif_set(j - HZ);
	KUNIT_EXPECT_TRUE(test, time_after_eq(deter_rec_jiffies_read(), j));
	/* Nor after a step of a socket not recorded. */
	deter_rec_jif_set(j - 3);
	deter_rec_jif_clear();
	KUNIT_EXPECT_TRUE(test, time_after_eq(deter_rec_jiffies_read(), j));
	/* Ahead (a stale slot from before a wrap) is not either. */
	deter_rec_jif_set(j + HZ);
	KUNIT_EXPECT_TRUE(test, time_before(deter_rec_jiffies_read(), j + HZ));
	migrate_enable();
}

/*
 * A task's step runs partly with BH off (the lock hooks, under
 * spin_lock_bh()) and partly not: both read the task's slot.
 */
static void deter_rec_jif_bh_off_test(struct kunit *test)
{
	unsigned long j, got;

	migrate_disable();
	j = jiffies;
	deter_rec_jif_set(j - HZ);		/* stale */
	local_bh_disable();
	deter_rec_jif_set(j - 1);		/* at the lock hook */
	local_bh_enable();
	got = deter_rec_jiffies_read();
	KUNIT_EXPECT_TRUE(test, deter_rec_jif_held(got, j - 1));
	local_bh_disable();
	got = deter_rec_jiffies_read();
	local_bh_enable();
	KUNIT_EXPECT_TRUE(test, deter_rec_jif_held(got, j - 1));
	deter_rec_jif_clear();
	migrate_enable();
}

/*
 * A task that owns a recorded socket holds its jiffies past
 * DETER_REC_JIF_HOLD, however long it was kept from running, until it
 * releases the socket; not past DETER_REC_JIF_STEP, nor after a step of
 * a socket not recorded.
 */
static void deter_rec_jif_step_test(struct kunit *test)
{
	unsigned long j;

	migrate_disable();
	j = jiffies;
	deter_rec_jif_set(j - HZ / 2);
	deter_rec_jif_step_begin();
	KUNIT_EXPECT_EQ(test, deter_rec_jiffies_read(), j - HZ / 2);
	/* The step's later events move the held value, and keep the step. */
	deter_rec_jif_set(j - HZ / 3);
	KUNIT_EXPECT_EQ(test, deter_rec_jiffies_read(), j - HZ / 3);
	/* Released: the hold's own bound again. */
	deter_rec_jif_step_end();
	KUNIT_EXPECT_TRUE(test, time_after_eq(deter_rec_jiffies_read(), j));
	/* Not past the step's bound. */
	deter_rec_jif_set(j - 3 * HZ);
	deter_rec_jif_step_begin();
	KUNIT_EXPECT_TRUE(test, time_after_eq(deter_rec_jiffies_read(), j));
	/* A socket not recorded ends it. */
	deter_rec_jif_set(j - HZ / 2);
	deter_rec_jif_step_begin();
	deter_rec_jif_clear();
	deter_rec_jif_set(j - HZ / 2);
	KUNIT_EXPECT_TRUE(test, time_after_eq(deter_rec_jiffies_read(), j));
	deter_rec_jif_clear();
	migrate_enable();
}

/*
 * The handshake table: concurrent handshakes that share ports, or whose
 * ports would hash alike, keep their own slots; a full table gives the
 * oldest slot away, and its child then finds none.
 */
static void deter_rec_hs_test(struct kunit *test)
{
	struct deter_rec_hs *tab, *h, *a, *b;
	__be32 la = htonl(0x0a000201), ra = htonl(0x0a000101);
	unsigned int i;

	tab = kunit_kcalloc(test, DETER_REC_HS_SLOTS, sizeof(*tab), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tab);
	/* Unknown, not claimed: none. */
	KUNIT_EXPECT_NULL(test, deter_rec_hs_slot(tab, 1, la, 5201, ra, 56636,
						  false, 100));
	a = deter_rec_hs_slot(tab, 1, la, 5201, ra, 56636, true, 100);
	KUNIT_ASSERT_NOT_NULL(test, a);
	a->have_syn = true;
	/* Same ports in another namespace, or from another address. */
	b = deter_rec_hs_slot(tab, 2, la, 5201, ra, 56636, true, 101);
	KUNIT_EXPECT_PTR_NE(test, a, b);
	h = deter_rec_hs_slot(tab, 1, la, 5201, htonl(0x0a000102), 56636,
			      true, 101);
	KUNIT_EXPECT_PTR_NE(test, a, h);
	KUNIT_EXPECT_PTR_NE(test, b, h);
	/* Found again, values kept. */
	KUNIT_EXPECT_PTR_EQ(test, deter_rec_hs_slot(tab, 1, la, 5201, ra,
						    56636, false, 102), a);
	KUNIT_EXPECT_TRUE(test, a->have_syn);
	/* Fill the table: the oldest, a, goes to the last one. */
	for (i = 3; i < DETER_REC_HS_SLOTS; i++)
		KUNIT_EXPECT_NOT_NULL(test, deter_rec_hs_slot(tab, 1, la, 5201,
							      ra, 1000 + i,
							      true, 200 + i));
	h = deter_rec_hs_slot(tab, 1, la, 5202, ra, 40000, true, 300);
	KUNIT_EXPECT_PTR_EQ(test, h, a);
	KUNIT_EXPECT_FALSE(test, h->have_syn);
	KUNIT_EXPECT_NULL(test, deter_rec_hs_slot(tab, 1, la, 5201, ra, 56636,
						  false, 301));
	/* A freed slot is taken before any claimed one. */
	b->lport = 0;
	b->rport = 0;
	KUNIT_EXPECT_PTR_EQ(test, deter_rec_hs_slot(tab, 3, la, 1, ra, 2, true,
						    302), b);
}

/*
 * The TS value of a segment from the network: found where TCP puts it
 * and after other options; nothing past doff is read, and a malformed
 * option ends the walk.
 */
static void deter_rec_tsval_test(struct kunit *test)
{
	static const u8 aligned[] = {		/* tcp_v4_send_ack()'s */
		TCPOPT_NOP, TCPOPT_NOP, TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP,
		0xfa, 0x12, 0x34, 0x56, 0, 0, 0, 1,
	};
	static const u8 syn[] = {		/* MSS, SACK_PERM, TS, NOP, WS */
		TCPOPT_MSS, TCPOLEN_MSS, 0x05, 0xb4,
		TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM,
		TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP, 0, 0, 0, 7, 0, 0, 0, 0,
		TCPOPT_NOP, TCPOPT_WINDOW, TCPOLEN_WINDOW, 7,
	};
	static const u8 eol[] = {		/* TS after the end of options */
		TCPOPT_EOL, TCPOPT_NOP, TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP,
		0, 0, 0, 1, 0, 0, 0, 1,
	};
	static const u8 zero_len[] = {		/* a length that would not move */
		TCPOPT_MSS, 0, TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP,
		0, 0, 0, 1, 0, 0, 0, 1,
	};
	static const u8 past_doff[] = {	/* the option runs past doff */
		TCPOPT_NOP, TCPOPT_NOP, TCPOPT_NOP, TCPOPT_NOP,
		TCPOPT_NOP, TCPOPT_NOP, TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP,
		0, 0, 0, 1, 0, 0, 0, 1,
	};
	struct {
		struct tcphdr th;
		u8 opt[40];
	} seg;
	u32 tsval = 0;

	memset(&seg, 0, sizeof(seg));
	seg.th.doff = 5;
	KUNIT_EXPECT_FALSE(test, deter_rec_tsval(&seg.th, &tsval));

	memcpy(seg.opt, aligned, sizeof(aligned));
	seg.th.doff = 5 + sizeof(aligned) / 4;
	KUNIT_EXPECT_TRUE(test, deter_rec_tsval(&seg.th, &tsval));
	KUNIT_EXPECT_EQ(test, tsval, 0xfa123456);

	memcpy(seg.opt, syn, sizeof(syn));
	seg.th.doff = 5 + sizeof(syn) / 4;
	KUNIT_EXPECT_TRUE(test, deter_rec_tsval(&seg.th, &tsval));
	KUNIT_EXPECT_EQ(test, tsval, 7);

	memcpy(seg.opt, eol, sizeof(eol));
	seg.th.doff = 5 + sizeof(eol) / 4;
	KUNIT_EXPECT_FALSE(test, deter_rec_tsval(&seg.th, &tsval));

	memcpy(seg.opt, zero_len, sizeof(zero_len));
	seg.th.doff = 5 + sizeof(zero_len) / 4;
	KUNIT_EXPECT_FALSE(test, deter_rec_tsval(&seg.th, &tsval));

	memcpy(seg.opt, past_doff, sizeof(past_doff));
	seg.th.doff = 5 + 8 / 4;		/* the TS's first bytes only */
	KUNIT_EXPECT_FALSE(test, deter_rec_tsval(&seg.th, &tsval));
	seg.th.doff = 5 + sizeof(past_doff) / 4;
	KUNIT_EXPECT_TRUE(test, deter_rec_tsval(&seg.th, &tsval));
	KUNIT_EXPECT_EQ(test, tsval, 1);
}

static struct kunit_case deter_rec_test_cases[] = {
	KUNIT_CASE(deter_rec_jif_hold_test),
	KUNIT_CASE(deter_rec_jif_bh_off_test),
	KUNIT_CASE(deter_rec_jif_step_test),
	KUNIT_CASE(deter_rec_hs_test),
	KUNIT_CASE(deter_rec_tsval_test),
	{}
};

static struct kunit_suite deter_rec_test_suite = {
	.name = "deter_rec",
	.test_cases = deter_rec_test_cases,
};

kunit_test_suite(deter_rec_test_suite);
