// SPDX-License-Identifier: GPL-2.0
/* Unit tests for log/rec_varint.c. */
#include "rec_varint.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "unit.h"

static void test_roundtrip(void)
{
	static const uint64_t vals[] = {
		0, 1, 127, 128, 255, 16383, 16384, (1ULL << 32) - 1,
		1ULL << 32, (1ULL << 63) - 1, 1ULL << 63, UINT64_MAX,
	};
	uint8_t buf[REC_VARINT_MAX];
	size_t i, n, used;
	uint64_t v;

	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		n = rec_varint_put(buf, vals[i]);
		UNIT_CHECK(rec_varint_get(buf, n, &v, &used) == 0);
		UNIT_CHECK_EQ(v, vals[i]);
		UNIT_CHECK_EQ(used, n);
	}
}

static void test_sizes(void)
{
	uint8_t buf[REC_VARINT_MAX];

	UNIT_CHECK_EQ(rec_varint_put(buf, 0), 1);
	UNIT_CHECK_EQ(rec_varint_put(buf, 127), 1);
	UNIT_CHECK_EQ(rec_varint_put(buf, 128), 2);
	UNIT_CHECK_EQ(rec_varint_put(buf, UINT64_MAX), 10);
	UNIT_CHECK_EQ(buf[9], 1);
}

static void test_truncated(void)
{
	uint8_t buf[REC_VARINT_MAX];
	size_t n, used;
	uint64_t v;

	n = rec_varint_put(buf, 1ULL << 40);
	errno = 0;
	UNIT_CHECK(rec_varint_get(buf, n - 1, &v, &used) == -1);
	UNIT_CHECK_EQ(errno, EMSGSIZE);
	UNIT_CHECK(rec_varint_get(buf, 0, &v, &used) == -1);
}

static void test_overflow(void)
{
	uint8_t buf[12];
	size_t used;
	uint64_t v;

	memset(buf, 0xff, sizeof(buf));
	errno = 0;
	UNIT_CHECK(rec_varint_get(buf, sizeof(buf), &v, &used) == -1);
	UNIT_CHECK_EQ(errno, EOVERFLOW);
	/* 10th byte 2: bit 64 set. */
	memset(buf, 0x80, 9);
	buf[9] = 2;
	UNIT_CHECK(rec_varint_get(buf, 10, &v, &used) == -1);
}

static void test_zigzag(void)
{
	static const int64_t vals[] = { 0, -1, 1, -2, 63, -64, INT64_MAX, INT64_MIN };
	size_t i;

	UNIT_CHECK_EQ(rec_zigzag_encode(0), 0);
	UNIT_CHECK_EQ(rec_zigzag_encode(-1), 1);
	UNIT_CHECK_EQ(rec_zigzag_encode(1), 2);
	for (i = 0; i < ARRAY_SIZE(vals); i++)
		UNIT_CHECK(rec_zigzag_decode(rec_zigzag_encode(vals[i])) == vals[i]);
}

int main(void)
{
	UNIT_RUN(test_roundtrip);
	UNIT_RUN(test_sizes);
	UNIT_RUN(test_truncated);
	UNIT_RUN(test_overflow);
	UNIT_RUN(test_zigzag);
	return unit_done();
}
