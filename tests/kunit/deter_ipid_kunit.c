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

static void deter_ipid_head_gap_test(struct kunit *test)
{
	u64 start = 0;

	/* The handshake's ACK created the child: nothing lost. */
	KUNIT_EXPECT_EQ(test, deter_ipid_head_gap(100, 101, &start), 0U);
	/* The ACK was lost, the first data segment created the child. */
	KUNIT_EXPECT_EQ(test, deter_ipid_head_gap(100, 102, &start), 1U);
	KUNIT_EXPECT_EQ(test, start, 101ULL);
	KUNIT_EXPECT_EQ(test, deter_ipid_head_gap(100, 105, &start), 4U);
	KUNIT_EXPECT_EQ(test, start, 101ULL);
	/* Across the wrap, the lost ones' indexes below the first's. */
	KUNIT_EXPECT_EQ(test, deter_ipid_head_gap(0xffff, 3, &start), 3U);
	KUNIT_EXPECT_EQ(test, start, 0ULL);
	/* One more would start below index 0: not counted. */
	KUNIT_EXPECT_EQ(test, deter_ipid_head_gap(0xfffe, 3, &start), 0U);
	/* A first ID at or before the SYN's is no loss. */
	KUNIT_EXPECT_EQ(test, deter_ipid_head_gap(100, 100, &start), 0U);
	KUNIT_EXPECT_EQ(test, deter_ipid_head_gap(100, 90, &start), 0U);
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
