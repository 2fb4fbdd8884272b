// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite deter_rec: the jiffies a recording context reads, held at
 * the value of its last event, per context, until a step of a socket not
 * recorded or for at most DETER_REC_JIF_HOLD.
 */
#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/jiffies.h>
#include <linux/preempt.h>

#include "deter_rec.h"

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

static struct kunit_case deter_rec_test_cases[] = {
	KUNIT_CASE(deter_rec_jif_hold_test),
	KUNIT_CASE(deter_rec_jif_bh_off_test),
	{}
};

static struct kunit_suite deter_rec_test_suite = {
	.name = "deter_rec",
	.test_cases = deter_rec_test_cases,
};

kunit_test_suite(deter_rec_test_suite);
