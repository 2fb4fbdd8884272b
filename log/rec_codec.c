// SPDX-License-Identifier: GPL-2.0
/*
 * The log body: a connection's events, encoded compactly (rec_enc.c) and
 * decoded strictly (rec_dec.c). A log file is a header and the body in
 * zstd frames (rec_write.c, rec_read.c); this is what is inside.
 *
 * Records. Each record is a tag byte (type << 4 | sub) and a
 * type-specific payload of varints (rec_varint.c), most of them deltas
 * against what the decoder can predict from the records before it (the
 * context, struct rec_log_ctx):
 *
 *   LOCK       a (DETER_LOCK_F_* bits; BACKLOG: the owner's check)
 *   RX         zigzag(idx - expected idx), flags byte, segs
 *              (expected idx = previous RX's idx + its segs; a CTL's c
 *              is a TS value, and the expected idx stays)
 *   NET        zigzag(idx - last RX idx), count
 *   CALL       bytes, flags << 32 | tid
 *   CALLREF    an index into the dictionary: a CALL whose (bytes,
 *              flags << 32 | tid) is one of the last 64 distinct ones
 *   CALL_DONE  zigzag(ret - the last same CALL's bytes): 0 when all was
 *              done. A send's is that << 1 | 1 if b follows (its spliced
 *              pages, DETER_SPLICE_*, and what it put on the error
 *              queue, DETER_SEND_*; nonzero), else that << 1
 *   SAMPLE     idx - previous sample's idx, time, gap
 *   CONFIG     value
 *   VALUE      a, and b for the kinds that have one (deter_value_has_b());
 *              a CLOCK delta as a code: 1 + us when it is whole
 *              microseconds, as deter.ko makes them, else 0 and the ns
 *   STATE      DETER_ST_MAX x zigzag(value - previous state's value)
 *   RUN        n: the previous LOCK or RX repeats n more times, each with
 *              sequence + 1 (and, for RX, the expected idx)
 *   SEQGAP     g: the next record's sequence number is the last + g + 2
 *              (otherwise it is the last + 1)
 *
 * A sample's time is a reference byte and zigzag(delta). The reference
 * is the newest of the last 32 TCP clock values at or before the sample
 * (its age, 0-31): the clock read that sent the packet, so that the
 * sample's lag behind it is the stack's and the qdisc's delay; the delta
 * is that lag minus the previous sample's, so a steady delay costs 0.
 * 63 is no reference: the delta is then from the previous sample's time.
 * Bit 7 set: the delta is in ns, else in us. The gap is m << 6 | tz for
 * m << tz: deter.ko picks round gaps.
 *
 * Streams. A chunk of the body is RS_MAX streams, their lengths
 * (varints) first, then the streams back to back:
 *
 *   chunk = len(0) ... len(RS_MAX - 1) | stream 0 | ... | stream RS_MAX - 1
 *   body  = chunk | chunk | ...
 *
 * The tags go in one stream, run lengths and sequence gaps in another,
 * each kind's fields in their own (enum rec_stream). The stream of tags
 * repeats the same few patterns and compresses to a few percent; what
 * remains is the clock and send-time noise, in streams of their own. A
 * clock code, a sample's time delta and a sample's gap are each split
 * into a low byte and the rest (a varint) in two streams: the low bytes
 * are nearly noise, the rest nearly constant, and apart zstd's entropy
 * coder gets each right (-19 % on RPC logs' clock values against one
 * stream of varints; -15 % on the samples). A clock delta goes to one of
 * three pairs of streams by the last other event before it: a segment
 * (RX, NET: mostly an RTT since the segment it answers), a LOCK (an
 * application's wake-up), anything else (within a call: the stack's own
 * delay), so that each pair's entropy coder fits one spread.
 *
 * Chunks. deter record encodes a connection's events as they come and
 * cuts its body into chunks (rec_log_enc_chunk()), one per 64 KiB
 * encoded, so that it holds no connection whole; the context goes on
 * from one chunk to the next (a chunk decodes only after those before
 * it). deter compact makes the body one chunk again.
 *
 * Runs make the common case, a stream of in-order segments received in
 * softirq or a burst of lock acquisitions by one context, cost bytes per
 * run instead of per event (DETER §4: run-length lock owners). Socket
 * calls repeat (fixed-size application I/O): hence the dictionary
 * (DETER: call patterns).
 *
 * Decoding is strict: every varint is bounded, every field range-checked,
 * every stream of a chunk used up, and the event count must match the
 * header; an error names the offset ("body+N" counts from the start of
 * the decompressed body).
 */
#include "rec_codec.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(DETER_V_MAX <= 16 && DETER_CFG_MAX <= 16 && DETER_NET_MAX <= 16,
	       "a record's sub is 4 bits");
_Static_assert((int)DETER_EV_LAST < (int)REC_LOG_SEQGAP, "event types and record tags differ");

/**
 * rec_buf_grow() - make room for @more bytes past @b->len
 * @b: the buffer
 * @more: bytes
 *
 * Return: 0, or -1 (out of memory; @b is as it was).
 */
int rec_buf_grow(struct rec_buf *b, size_t more)
{
	uint8_t *np;
	size_t cap;

	cap = b->cap ? b->cap * 2 : 4096;
	while (cap < b->len + more)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np)
		return -1;
	b->p = np;
	b->cap = cap;
	return 0;
}

/* Index of (@a, @b) in the dictionary, or -1. */
int rec_log_dict_find(const struct rec_log_ctx *c, uint64_t a, uint64_t b)
{
	unsigned int i;

	for (i = 0; i < c->ndict; i++)
		if (c->dict[i][0] == a && c->dict[i][1] == b)
			return i;
	return -1;
}

/* (@a, @b) into the dictionary, over its oldest entry once it is full. */
void rec_log_dict_add(struct rec_log_ctx *c, uint64_t a, uint64_t b)
{
	c->dict[c->dict_next][0] = a;
	c->dict[c->dict_next][1] = b;
	c->dict_next = (c->dict_next + 1) % REC_LOG_DICT;
	if (c->ndict < REC_LOG_DICT)
		c->ndict++;
}

/* Index of NET SHAPE @e's shape among the recent ones, or -1. */
int rec_log_shape_find(const struct rec_log_ctx *c, const struct rec_ev *e)
{
	unsigned int i;

	for (i = 0; i < c->nshapes; i++)
		if (c->shapes[i][0] == e->a && c->shapes[i][1] == e->b &&
		    c->shapes[i][2] == e->c)
			return i;
	return -1;
}

/**
 * rec_log_ctx_after() - update the context with an event just encoded or
 *	decoded
 * @c: the context
 * @e: the event
 * @st: its values, if it is a STATE
 */
void rec_log_ctx_after(struct rec_log_ctx *c, const struct rec_ev *e,
		       const struct rec_state *st)
{
	c->seq = e->seq;
	c->prev = *e;
	switch (e->type) {
	case DETER_EV_RX:
		c->rx_last = e->a;
		/* A CTL's or SYN's c is a TS value, not segments: a is the expected. */
		c->rx_expect = e->a + (e->b & DETER_RX_TS ? 0 : e->c);
		break;
	case DETER_EV_NET:
		if (e->sub != DETER_NET_SHAPE)
			break;
		c->shape[0] = e->a;
		c->shape[1] = e->b;
		c->shape[2] = e->c;
		if (rec_log_shape_find(c, e) >= 0)
			break;
		memcpy(c->shapes[c->shape_next], c->shape, sizeof(c->shape));
		c->shape_next = (c->shape_next + 1) % REC_LOG_SHAPES;
		if (c->nshapes < REC_LOG_SHAPES)
			c->nshapes++;
		break;
	case DETER_EV_CALL:
		if (e->sub < DETER_ABI_CALL_MAX)
			c->call_bytes[e->sub] = e->a;
		break;
	case DETER_EV_SAMPLE:
		c->smp_idx = e->a;
		c->smp_ns = e->b;
		break;
	case DETER_EV_VALUE:
		if (e->sub == DETER_V_CLOCK) {
			c->clk += e->a;
			c->clk_ring[c->nclk++ % REC_LOG_CLK_RING] = c->clk;
			return;		/* leaves clk_ctx */
		}
		break;
	case DETER_EV_STATE:
		c->state = *st;
		break;
	}
	c->clk_ctx = e->type == DETER_EV_RX || e->type == DETER_EV_NET ? REC_LOG_CLK_RX :
		     e->type == DETER_EV_LOCK ? REC_LOG_CLK_LOCK : REC_LOG_CLK_OTHER;
}

/* Whether @e is the previous event again, as a RUN repeats it. */
int rec_log_runnable(const struct rec_log_ctx *c, const struct rec_ev *e)
{
	const struct rec_ev *p = &c->prev;

	if (!c->seq || e->seq != p->seq + 1 || e->type != p->type ||
	    e->sub != p->sub)
		return 0;
	if (e->type == DETER_EV_LOCK)
		return e->a == p->a;
	if (e->type == DETER_EV_RX)
		return e->a == c->rx_expect && e->b == p->b && e->c == p->c;
	return 0;
}

/*
 * A sample's clock reference: the age of the newest of the last
 * REC_LOG_CLK_RING clock values at or before @ns, or REC_LOG_SMP_NOREF.
 */
unsigned int rec_smp_ref(const struct rec_log_ctx *c, uint64_t ns)
{
	unsigned int j, n = c->nclk < REC_LOG_CLK_RING ? c->nclk : REC_LOG_CLK_RING;

	for (j = 0; j < n; j++)
		if (rec_smp_ref_ns(c, j) <= ns)
			return j;
	return REC_LOG_SMP_NOREF;
}

/* The stream each record kind's fields go to (a CLOCK's: its low bytes). */
enum rec_stream rec_log_stream(unsigned int type, unsigned int sub)
{
	switch (type) {
	case DETER_EV_LOCK:
		return RS_LOCK;
	case DETER_EV_RX:
	case DETER_EV_NET:
		return RS_RX;
	case DETER_EV_CALL:
	case DETER_EV_CALL_DONE:
	case REC_LOG_CALLREF:
		return RS_CALL;
	case DETER_EV_SAMPLE:
		return RS_SAMPLE;
	case DETER_EV_VALUE:
		return sub == DETER_V_CLOCK ? RS_CLOCK : RS_VALUE;
	case DETER_EV_CONFIG:
		return RS_VALUE;
	case DETER_EV_STATE:
		return RS_STATE;
	}
	return RS_MISC;
}

/*
 * The pair of streams a clock delta goes to, by @ctx (REC_LOG_CLK_*):
 * its low bytes to *@lo, the rest to *@hi.
 */
void rec_log_clock_streams(unsigned int ctx, int *lo, int *hi)
{
	if (ctx == REC_LOG_CLK_RX) {
		*lo = RS_CLOCK;
		*hi = RS_CLKHI;
	} else {
		*lo = ctx == REC_LOG_CLK_LOCK ? RS_CLOCK_LOCK : RS_CLOCK_OTHER;
		*hi = *lo + 1;
	}
}
