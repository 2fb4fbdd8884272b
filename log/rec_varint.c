// SPDX-License-Identifier: GPL-2.0
/*
 * LEB128 varints for deter's logs.
 *
 * Most fields in a connection log are small: deltas of sequence numbers,
 * byte counts of socket calls, run lengths of lock owners. Seven bits per
 * byte with a continuation bit keep them at one or two bytes:
 *
 *   v = b0 & 0x7f | (b1 & 0x7f) << 7 | ...   while (bi & 0x80)
 *
 * Decoding is strict, because logs are input: a varint that runs past the
 * buffer, is longer than 10 bytes or overflows 64 bits is an error, never
 * a silently wrong value.
 */
#include "rec_varint.h"

#include <errno.h>

/**
 * rec_varint_get() - decode a varint
 * @buf: input
 * @len: bytes available at @buf
 * @v: the decoded value
 * @used: bytes consumed
 *
 * Return: 0, or -1 with errno EMSGSIZE (truncated) or EOVERFLOW (longer
 * than 10 bytes or above 2^64 - 1).
 */
int rec_varint_get(const uint8_t *buf, size_t len, uint64_t *v, size_t *used)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < REC_VARINT_MAX; i++) {
		if (i == len) {
			errno = EMSGSIZE;
			return -1;
		}
		if (i == REC_VARINT_MAX - 1 && buf[i] > 1) {
			errno = EOVERFLOW;
			return -1;
		}
		x |= (uint64_t)(buf[i] & 0x7f) << (7 * i);
		if (!(buf[i] & 0x80)) {
			*v = x;
			*used = i + 1;
			return 0;
		}
	}
	errno = EOVERFLOW;
	return -1;
}
