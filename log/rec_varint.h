/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the log encoder's integer codec: LEB128 varints and
 * zigzag for signed deltas. Pure functions on caller buffers; thread-safe.
 */
#ifndef _REC_VARINT_H
#define _REC_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit value takes at most 10 bytes. */
#define REC_VARINT_MAX 10

/**
 * rec_varint_put() - encode @v at @buf
 * @buf: room for REC_VARINT_MAX bytes
 * @v: the value
 *
 * Inline: the encoder calls it for nearly every field.
 *
 * Return: the number of bytes written.
 */
static inline size_t rec_varint_put(uint8_t *buf, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	return n;
}

int rec_varint_get(const uint8_t *buf, size_t len, uint64_t *v, size_t *used);

static inline uint64_t rec_zigzag_encode(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t rec_zigzag_decode(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif /* _REC_VARINT_H */
