/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for what the log body's encoder (rec_enc.c) and decoder
 * (rec_dec.c) share: the streams of a body, the context both carry from
 * one record to the next, and the predictions both make from it. The
 * format itself is described in rec_codec.c. Internal to log/; a context
 * belongs to one encoder or decoder, no locking.
 */
#ifndef _REC_CODEC_H
#define _REC_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "deter_abi.h"
#include "rec_ev.h"
#include "rec_varint.h"

enum {
	REC_LOG_DICT = 64,		/* dictionary entries */
	REC_LOG_SHAPES = 8,		/* recent arrival shapes a SHAPE may name */
	REC_LOG_CLK_RING = 32,		/* clock values a sample may refer to */
	REC_LOG_SMP_NOREF = 63,		/* a sample with no clock reference */
	REC_LOG_SMP_NS = 0x80,		/* its delta is in ns, not us */
	/* What a CLOCK delta came after: its pair of streams. */
	REC_LOG_CLK_RX = 0,		/* a segment: RS_CLOCK, RS_CLKHI */
	REC_LOG_CLK_LOCK,		/* RS_CLOCK_LOCK, RS_CLKHI_LOCK */
	REC_LOG_CLK_OTHER,		/* RS_CLOCK_OTHER, RS_CLKHI_OTHER */
};

/* A body's streams: a record's tag, and its fields by kind. */
enum rec_stream {
	RS_TAG,		/* tag bytes, one per record */
	RS_MISC,	/* run lengths, sequence gaps */
	RS_LOCK,	/* LOCK */
	RS_RX,		/* RX, NET */
	RS_CALL,	/* CALL, CALLREF, CALL_DONE */
	RS_SAMPLE,	/* SAMPLE's index delta */
	RS_CLOCK,	/* VALUE CLOCK after a segment: the code's low byte */
	RS_VALUE,	/* other VALUEs, CONFIG */
	RS_STATE,	/* STATE */
	RS_SMPREF,	/* SAMPLE's clock references */
	RS_CLKHI,	/* VALUE CLOCK after a segment: the rest, and ns */
	RS_SMPLO,	/* SAMPLE's time delta: the low byte */
	RS_SMPHI,	/*   and the rest */
	RS_GAPLO,	/* SAMPLE's gap: the low byte */
	RS_GAPHI,	/*   and the rest */
	RS_CLOCK_LOCK,	/* RS_CLOCK and RS_CLKHI after a LOCK */
	RS_CLKHI_LOCK,
	RS_CLOCK_OTHER,	/*   and after anything but a LOCK or segment */
	RS_CLKHI_OTHER,
	RS_MAX,
};

/* A growing byte buffer: a stream being encoded, a file's frames. */
struct rec_buf {
	uint8_t *p;		/* the bytes, malloc'd */
	size_t len;		/* bytes used */
	size_t cap;		/* bytes allocated */
};

int rec_buf_grow(struct rec_buf *b, size_t more);

/* Room for @more bytes past b->len. Return: 0, or -1 (out of memory). */
static inline int rec_buf_reserve(struct rec_buf *b, size_t more)
{
	return b->len + more <= b->cap ? 0 : rec_buf_grow(b, more);
}

static inline int rec_buf_varint(struct rec_buf *b, uint64_t v)
{
	if (rec_buf_reserve(b, REC_VARINT_MAX))
		return -1;
	b->len += rec_varint_put(b->p + b->len, v);
	return 0;
}

static inline int rec_buf_byte(struct rec_buf *b, uint8_t v)
{
	if (rec_buf_reserve(b, 1))
		return -1;
	b->p[b->len++] = v;
	return 0;
}

/* What both encoder and decoder carry from one record to the next. */
struct rec_log_ctx {
	uint32_t seq;			/* last sequence number */
	struct rec_ev prev;		/* last event, for runs */
	uint64_t rx_expect;		/* expected idx of the next RX */
	uint64_t rx_last;		/* idx of the last RX */
	uint64_t shape[3];		/* the last NET SHAPE's a, b and c */
	uint64_t shapes[REC_LOG_SHAPES][3]; /* the last distinct ones */
	unsigned int nshapes;		/* entries in use */
	unsigned int shape_next;	/* the entry the next new one replaces */
	uint64_t smp_idx;		/* last SAMPLE's idx */
	uint64_t smp_ns;		/* last SAMPLE's time, ns */
	uint64_t smp_lag;		/* the last referenced SAMPLE's time - its reference, ns */
	uint64_t clk;			/* the TCP clock: CLOCK deltas summed, ns */
	unsigned int clk_ctx;		/* REC_LOG_CLK_*: the last non-CLOCK event */
	uint64_t clk_ring[REC_LOG_CLK_RING]; /* its last values, ns */
	unsigned int nclk;		/* CLOCK values seen */
	uint64_t call_bytes[DETER_ABI_CALL_MAX]; /* last CALL's bytes, per call */
	struct rec_state state;		/* last STATE's values */
	uint64_t dict[REC_LOG_DICT][2];	/* CALL (a, b) dictionary */
	unsigned int ndict;		/* its entries in use */
	unsigned int dict_next;		/* the entry the next CALL replaces */
};

void rec_log_ctx_after(struct rec_log_ctx *c, const struct rec_ev *e,
		       const struct rec_state *st);
int rec_log_runnable(const struct rec_log_ctx *c, const struct rec_ev *e);
int rec_log_dict_find(const struct rec_log_ctx *c, uint64_t a, uint64_t b);
void rec_log_dict_add(struct rec_log_ctx *c, uint64_t a, uint64_t b);
int rec_log_shape_find(const struct rec_log_ctx *c, const struct rec_ev *e);
unsigned int rec_smp_ref(const struct rec_log_ctx *c, uint64_t ns);
enum rec_stream rec_log_stream(unsigned int type, unsigned int sub);
void rec_log_clock_streams(unsigned int ctx, int *lo, int *hi);

/* A CALL_DONE's result against its call's bytes, as zigzag. */
static inline uint64_t rec_log_done_zz(const struct rec_log_ctx *c, const struct rec_ev *e)
{
	return rec_zigzag_encode(e->a - (e->sub < DETER_ABI_CALL_MAX ?
					 c->call_bytes[e->sub] : 0));
}

/* The clock value @j reads before the newest (0: the newest), ns. */
static inline uint64_t rec_smp_ref_ns(const struct rec_log_ctx *c, unsigned int j)
{
	return c->clk_ring[(c->nclk - 1 - j) % REC_LOG_CLK_RING];
}

/*
 * A sample's gap without its trailing zero bits, which deter.ko makes
 * many of: m << 6 | tz for gap m << tz.
 */
static inline uint64_t rec_gap_pack(uint64_t gap)
{
	unsigned int tz = gap ? __builtin_ctzll(gap) : 0;

	return (gap >> tz) << 6 | tz;
}

/* rec_gap_pack() undone. Return: 0, or -1 if the gap overflows. */
static inline int rec_gap_unpack(uint64_t v, uint64_t *gap)
{
	unsigned int tz = v & 63;

	if (v >> 6 > UINT64_MAX >> tz)
		return -1;
	*gap = v >> 6 << tz;
	return 0;
}

#endif /* _REC_CODEC_H */
