// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite deter_sample: rate-based send-time sampling (Algorithm 1).
 *
 * Each case feeds a send-time series to the sampler, rebuilds every
 * packet's send time from the emitted samples alone, and checks the
 * bound the recording promises: |inferred - actual| <= threshold.
 */
#include <kunit/test.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include "deter_sample.h"

#define DETER_TEST_PKTS 4096

struct deter_sample_run {
	struct deter_sample smp[DETER_TEST_PKTS];
	int nsmp;
};

/* Sample @ns[0..n) (index = position) and collect every emitted sample. */
static void deter_sample_collect(struct kunit *test, const u64 *ns, int n,
				 u32 th_ns, struct deter_sample_run *run)
{
	struct deter_sampler s;
	int i;

	deter_sampler_init(&s, th_ns);
	run->nsmp = 0;
	for (i = 0; i < n; i++)
		if (deter_sampler_add(&s, i, ns[i], &run->smp[run->nsmp]))
			run->nsmp++;
	KUNIT_ASSERT_TRUE(test, deter_sampler_flush(&s, &run->smp[run->nsmp]));
	run->nsmp++;
}

/* Largest inference error over the series, ns. */
static u64 deter_sample_max_err(const u64 *ns, int n,
				const struct deter_sample_run *run)
{
	u64 worst = 0, t;
	int i, k = 0;

	for (i = 0; i < n; i++) {
		while (k + 1 < run->nsmp && run->smp[k + 1].idx <= i)
			k++;
		t = deter_sample_infer(&run->smp[k], i);
		worst = max(worst, t > ns[i] ? t - ns[i] : ns[i] - t);
	}
	return worst;
}

static u64 *deter_sample_series(struct kunit *test)
{
	u64 *ns = kunit_kcalloc(test, DETER_TEST_PKTS, sizeof(*ns), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ns);
	return ns;
}

static struct deter_sample_run *deter_sample_run_new(struct kunit *test)
{
	struct deter_sample_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, run);
	return run;
}

static void deter_sample_constant_rate_test(struct kunit *test)
{
	struct deter_sample_run *run = deter_sample_run_new(test);
	u64 *ns = deter_sample_series(test);
	int i;

	for (i = 0; i < 1000; i++)
		ns[i] = 1000000 + i * 1200ULL;	/* 10 Gb/s, 1500 B packets */
	deter_sample_collect(test, ns, 1000, 5000, run);

	KUNIT_EXPECT_EQ(test, run->nsmp, 1);
	KUNIT_EXPECT_EQ(test, run->smp[0].idx, 0ULL);
	KUNIT_EXPECT_EQ(test, run->smp[0].ns, 1000000ULL);
	KUNIT_EXPECT_LE(test, deter_sample_max_err(ns, 1000, run), 5000ULL);
}

/* DETER Figure 5: the rate halves inside one burst; gap-based sampling errs. */
static void deter_sample_rate_change_test(struct kunit *test)
{
	struct deter_sample_run *run = deter_sample_run_new(test);
	u64 *ns = deter_sample_series(test);
	int i;

	for (i = 0; i < 500; i++)
		ns[i] = i < 96 ? i * 1200ULL : 96 * 1200ULL + (i - 96) * 2400ULL;
	deter_sample_collect(test, ns, 500, 5000, run);

	KUNIT_EXPECT_GE(test, run->nsmp, 2);
	KUNIT_EXPECT_LE(test, run->nsmp, 3);
	KUNIT_EXPECT_LE(test, deter_sample_max_err(ns, 500, run), 5000ULL);
}

/* Bursts, idle gaps and jitter from a fixed LCG: the bound must hold. */
static void deter_sample_random_bound_test(struct kunit *test)
{
	static const u32 ths[] = { 0, 1000, 5000, 50000 };
	struct deter_sample_run *run = deter_sample_run_new(test);
	u64 *ns = deter_sample_series(test);
	u32 x = 12345;
	int i, j;

	for (j = 0; j < ARRAY_SIZE(ths); j++) {
		u64 t = 0;

		for (i = 0; i < DETER_TEST_PKTS; i++) {
			x = x * 1103515245 + 12345;
			if ((x >> 16) % 64 == 0)
				t += 100000 + (x >> 8) % 2000000;	/* idle */
			else
				t += 1200 + (x >> 20) % 600;		/* jitter */
			ns[i] = t;
		}
		deter_sample_collect(test, ns, DETER_TEST_PKTS, ths[j], run);
		KUNIT_EXPECT_LE_MSG(test, deter_sample_max_err(ns, DETER_TEST_PKTS, run),
				    (u64)ths[j], "threshold %u ns", ths[j]);
		KUNIT_EXPECT_LE(test, run->nsmp, DETER_TEST_PKTS);
	}
}

static void deter_sample_edges_test(struct kunit *test)
{
	struct deter_sampler s;
	struct deter_sample out;

	deter_sampler_init(&s, 5000);
	KUNIT_EXPECT_FALSE(test, deter_sampler_flush(&s, &out));

	KUNIT_EXPECT_FALSE(test, deter_sampler_add(&s, 7, 100, &out));
	/* An index that does not advance adds nothing. */
	KUNIT_EXPECT_FALSE(test, deter_sampler_add(&s, 7, 900000, &out));
	KUNIT_EXPECT_FALSE(test, deter_sampler_add(&s, 3, 900000, &out));
	KUNIT_ASSERT_TRUE(test, deter_sampler_flush(&s, &out));
	KUNIT_EXPECT_EQ(test, out.idx, 7ULL);
	/* Rounded down to a whole microsecond: 100 ns off, within 5 us. */
	KUNIT_EXPECT_EQ(test, out.ns, 0ULL);
	KUNIT_EXPECT_EQ(test, out.gap_q10, 0ULL);
	KUNIT_EXPECT_EQ(test, deter_sample_infer(&out, 7), 0ULL);

	/* Below a microsecond of threshold, times stay exact. */
	deter_sampler_init(&s, 999);
	deter_sampler_add(&s, 0, 1234567, &out);
	KUNIT_ASSERT_TRUE(test, deter_sampler_flush(&s, &out));
	KUNIT_EXPECT_EQ(test, out.ns, 1234567ULL);

	/* A clock step backwards is clamped, not wrapped. */
	deter_sampler_init(&s, 0);
	deter_sampler_add(&s, 0, 1000, &out);
	KUNIT_EXPECT_FALSE(test, deter_sampler_add(&s, 1, 999, &out));
	deter_sampler_flush(&s, &out);
	KUNIT_EXPECT_EQ(test, deter_sample_infer(&out, 1), 1000ULL);
}

/* The gap recorded is round (the log stores it without trailing zeros). */
static void deter_sample_round_gap_test(struct kunit *test)
{
	struct deter_sampler s;
	struct deter_sample out;
	u64 got;

	deter_sampler_init(&s, 5000);
	deter_sampler_add(&s, 10, 0, &out);
	deter_sampler_add(&s, 11, 1000000, &out);
	KUNIT_ASSERT_TRUE(test, deter_sampler_flush(&s, &out));
	/* [995, 1005] us in Q10; its middle half holds a multiple of 2^22. */
	KUNIT_EXPECT_GE(test, __ffs64(out.gap_q10), 22UL);
	got = deter_sample_infer(&out, 11);
	KUNIT_EXPECT_LE(test, got > 1000000 ? got - 1000000 : 1000000 - got, 3750ULL);
}

static struct kunit_case deter_sample_cases[] = {
	KUNIT_CASE(deter_sample_constant_rate_test),
	KUNIT_CASE(deter_sample_rate_change_test),
	KUNIT_CASE(deter_sample_random_bound_test),
	KUNIT_CASE(deter_sample_edges_test),
	KUNIT_CASE(deter_sample_round_gap_test),
	{}
};

static struct kunit_suite deter_sample_suite = {
	.name = "deter_sample",
	.test_cases = deter_sample_cases,
};

kunit_test_suite(deter_sample_suite);
