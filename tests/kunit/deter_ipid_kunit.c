// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite deter_ipid: extending 16-bit IP IDs to packet indexes and
 * classifying arrivals (drop/reorder detection, DETER §4).
 */
#include <kunit/test.h>

#include "deter_ipid.h"

static void deter_ipid_extend_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0x1234, 0x1235), 0x1235ULL);
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0x1234, 0x1234), 0x1234ULL);
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0x1234, 0x1200), 0x1200ULL);
	/* Forward across the 16-bit wrap. */
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0xfffe, 0x0001), 0x10001ULL);
	/* A reordered packet from before the wrap. */
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0x10001, 0xffff), 0xffffULL);
	/* Near zero, a "negative" ID extends upwards instead. */
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(5, 0xffff), 0xffffULL);
	/* Far into the flow. */
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0x123456789ULL, 0x6790),
			0x123456790ULL);
	/* Half a window ahead is the limit. */
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0x20000, 0x7fff), 0x27fffULL);
	KUNIT_EXPECT_EQ(test, deter_ipid_extend(0x20000, 0x8000), 0x18000ULL);
}

static void deter_ipid_sequence_test(struct kunit *test)
{
	u64 ref = 0xfff0, idx;
	u16 id = 0xfff0;
	int i;

	/* 200000 consecutive IDs from near the wrap stay consecutive. */
	for (i = 1; i < 200000; i++) {
		idx = deter_ipid_extend(ref, ++id);
		KUNIT_ASSERT_EQ(test, idx, ref + 1);
		ref = idx;
	}
}

static void deter_ipid_classify_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, deter_ipid_classify(10, 10), DETER_IPID_NEXT);
	KUNIT_EXPECT_EQ(test, deter_ipid_classify(10, 13), DETER_IPID_GAP);
	KUNIT_EXPECT_EQ(test, deter_ipid_classify(10, 9), DETER_IPID_LATE);
}

/* deter_ipid_head_gap() with the SYNs sent again in @again; @want runs. */
static void deter_ipid_head_gap_expect(struct kunit *test, u16 syn,
				       const u16 *again, unsigned int nagain,
				       u16 first, unsigned int n,
				       const struct deter_ipid_run *want)
{
	struct deter_ipid_run got[DETER_IPID_SYN_AGAIN + 1] = {};
	unsigned int i;

	KUNIT_ASSERT_EQ(test, deter_ipid_head_gap(syn, again, nagain, first, got), n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, got[i].start, want[i].start);
		KUNIT_EXPECT_EQ(test, got[i].count, want[i].count);
	}
}

static void deter_ipid_head_gap_test(struct kunit *test)
{
	static const struct {
		u16 syn, first;
		u16 again[DETER_IPID_SYN_AGAIN + 1];
		unsigned int nagain, n;
		struct deter_ipid_run want[2];
	} cases[] = {
		/* The handshake's ACK created the child: nothing lost. */
		{ 100, 101 },
		/* The ACK was lost, the first data segment created the child. */
		{ 100, 102, {}, 0, 1, { { 101, 1 } } },
		{ 100, 105, {}, 0, 1, { { 101, 4 } } },
		/* Across the wrap, the lost ones' indexes below the first's. */
		{ 0xffff, 3, {}, 0, 1, { { 0, 3 } } },
		/* One more would start below index 0: not counted. */
		{ 0xfffe, 3 },
		/* A first ID at or before the SYN's is no loss. */
		{ 100, 100 },
		{ 100, 90 },
		/* A SYN sent again took 101; the ACK, 102, was lost. */
		{ 100, 103, { 101 }, 1, 1, { { 102, 1 } } },
		/* The first SYN again was lost, the second came; then the ACK. */
		{ 100, 103, { 102 }, 1, 1, { { 101, 1 } } },
		{ 100, 106, { 103, 102 }, 2, 2, { { 101, 1 }, { 104, 2 } } },
		/* Nothing lost between SYNs that came and the first arrival. */
		{ 100, 103, { 101, 102 }, 2 },
		/* SYNs outside the handshake's IDs count for nothing. */
		{ 100, 102, { 100, 102, 99 }, 3, 1, { { 101, 1 } } },
		/* A SYN again the network duplicated counts once. */
		{ 100, 104, { 102, 102 }, 2, 2, { { 101, 1 }, { 103, 1 } } },
		/* More SYNs again than kept: unknown, none counted. */
		{ 100, 110, { 101, 102, 103, 104, 105 }, 5 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		deter_ipid_head_gap_expect(test, cases[i].syn, cases[i].again,
					   cases[i].nagain, cases[i].first,
					   cases[i].n, cases[i].want);
}

static struct kunit_case deter_ipid_cases[] = {
	KUNIT_CASE(deter_ipid_extend_test),
	KUNIT_CASE(deter_ipid_sequence_test),
	KUNIT_CASE(deter_ipid_classify_test),
	KUNIT_CASE(deter_ipid_head_gap_test),
	{}
};

static struct kunit_suite deter_ipid_suite = {
	.name = "deter_ipid",
	.test_cases = deter_ipid_cases,
};

kunit_test_suite(deter_ipid_suite);
