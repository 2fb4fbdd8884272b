// SPDX-License-Identifier: GPL-2.0
/*
 * The log body's encoder: a connection's events in, the records and
 * streams rec_codec.c describes out, a chunk at a time.
 *
 *   rec_log_enc_add(evs)  -> each event: a RUN goes on, or a SEQGAP if the
 *                            sequence skips, a tag to RS_TAG, the fields
 *                            to their kind's streams; the context follows
 *   rec_log_enc_chunk()   -> lengths of the RS_MAX streams | the streams;
 *                            the streams start empty again, the context
 *                            goes on
 *
 * The encoder never sees the file: deter record's writer (rec_write.c)
 * calls rec_log_enc_chunk() every 64 KiB encoded and compresses each
 * chunk into a zstd frame; deter compact and the unit tests encode a
 * body as one chunk (rec_log_encode()). An event the format cannot hold
 * (a type or sub out of range, a sequence number that does not advance,
 * a return value with bits the format has no room for) is an error,
 * never a log that decodes to other events.
 */
#include "rec_enc.h"

#include <stdlib.h>
#include <string.h>

#include "rec_codec.h"
#include "rec_err.h"

/*
 * An encoder: the context and streams carried from one call of
 * rec_log_enc_add() to the next, and the RUN being counted.
 */
struct rec_log_enc {
	struct rec_log_ctx c;		/* the context, across chunks */
	struct rec_buf bs[RS_MAX];	/* the chunk's streams so far */
	uint64_t run;			/* events the open RUN stands for */
};

/* @v as its low byte into @lo and the rest, a varint, into @hi. */
static int rec_buf_planes(struct rec_buf *lo, struct rec_buf *hi, uint64_t v)
{
	return rec_buf_byte(lo, (uint8_t)v) | rec_buf_varint(hi, v >> 8);
}

/* A clock delta of @ns: its code, split, and for code 0 the ns. */
static int rec_log_put_clock(struct rec_buf *bs, const struct rec_log_ctx *c, uint64_t ns)
{
	uint64_t code = ns % 1000 ? 0 : ns / 1000 + 1;
	int r, lo, hi;

	rec_log_clock_streams(c->clk_ctx, &lo, &hi);
	r = rec_buf_planes(&bs[lo], &bs[hi], code);
	if (!code)
		r |= rec_buf_varint(&bs[hi], ns);
	return r;
}

/* A sample's index delta, clock reference, time delta and gap. */
static int rec_log_put_sample(struct rec_buf *bs, struct rec_log_ctx *c,
			      const struct rec_ev *e)
{
	unsigned int ref = rec_smp_ref(c, e->b);
	uint64_t lag = c->smp_lag;
	int64_t d;
	int r;

	if (ref == REC_LOG_SMP_NOREF) {
		d = (int64_t)(e->b - c->smp_ns);
	} else {
		lag = e->b - rec_smp_ref_ns(c, ref);
		d = (int64_t)(lag - c->smp_lag);
	}
	if (d % 1000)
		ref |= REC_LOG_SMP_NS;
	else
		d /= 1000;
	r = rec_buf_varint(&bs[RS_SAMPLE], e->a - c->smp_idx);
	r |= rec_buf_byte(&bs[RS_SMPREF], ref);
	r |= rec_buf_planes(&bs[RS_SMPLO], &bs[RS_SMPHI], rec_zigzag_encode(d));
	r |= rec_buf_planes(&bs[RS_GAPLO], &bs[RS_GAPHI], rec_gap_pack(e->c));
	c->smp_lag = lag;
	return r;
}

/**
 * rec_log_enc_new() - an encoder
 *
 * Return: the encoder (rec_log_enc_free() it), or NULL (out of memory).
 */
struct rec_log_enc *rec_log_enc_new(void)
{
	return calloc(1, sizeof(struct rec_log_enc));
}

/** rec_log_enc_free() - free an encoder (NULL: nothing) */
void rec_log_enc_free(struct rec_log_enc *enc)
{
	int k;

	if (!enc)
		return;
	for (k = 0; k < RS_MAX; k++)
		free(enc->bs[k].p);
	free(enc);
}

/* Bytes rec_log_enc_chunk() would return now, but for the lengths. */
size_t rec_log_enc_pending(const struct rec_log_enc *enc)
{
	size_t raw = 0;
	int k;

	for (k = 0; k < RS_MAX; k++)
		raw += enc->bs[k].len;
	return raw;
}

/* Whether rec_log_enc_chunk() would return a chunk of no records. */
int rec_log_enc_empty(const struct rec_log_enc *enc)
{
	return !enc->run && !rec_log_enc_pending(enc);
}

/* Close the open RUN, if any. */
static int rec_log_enc_run_end(struct rec_log_enc *enc)
{
	int r = 0;

	if (enc->run) {
		r |= rec_buf_byte(&enc->bs[RS_TAG], REC_LOG_RUN << 4);
		r |= rec_buf_varint(&enc->bs[RS_MISC], enc->run);
		enc->run = 0;
	}
	return r;
}

/**
 * rec_log_enc_add() - encode more of a connection's events
 * @enc: the encoder
 * @evs: events sorted by sequence number, all after the last ones added
 * @n: how many
 * @states: the values their STATE events index
 * @err: the error message
 *
 * Return: 0, or -1 with *err set (an event the format cannot hold; the
 * encoder is then unusable).
 */
int rec_log_enc_add(struct rec_log_enc *enc, const struct rec_ev *evs, size_t n,
		    const struct rec_state *states, char **err)
{
	struct rec_log_ctx *c = &enc->c;
	struct rec_buf *bs = enc->bs, *b;
	size_t i;
	int k, r = 0;

	for (i = 0; i < n && !r; i++) {
		const struct rec_ev *e = &evs[i];
		const struct rec_state *st = NULL;
		unsigned int j;

		if (e->type == DETER_EV_STATE)
			st = &states[e->a];
		if (rec_log_runnable(c, e)) {
			enc->run++;
			rec_log_ctx_after(c, e, st);
			continue;
		}
		r |= rec_log_enc_run_end(enc);
		if (e->sub > 15 || e->type == REC_LOG_RUN ||
		    e->type > DETER_EV_LAST || e->seq <= c->seq ||
		    (e->type == DETER_EV_CALL_DONE &&
		     (e->sub == DETER_ABI_CALL_SENDMSG ? rec_log_done_zz(c, e) >> 63 :
		      e->b != 0))) {
			r = -2;
			break;
		}
		if (e->seq - c->seq > 1) {
			r |= rec_buf_byte(&bs[RS_TAG], REC_LOG_SEQGAP << 4);
			r |= rec_buf_varint(&bs[RS_MISC], e->seq - c->seq - 2);
		}
		k = e->type == DETER_EV_CALL ? rec_log_dict_find(c, e->a, e->b) : -1;
		r |= rec_buf_byte(&bs[RS_TAG], (k >= 0 ? REC_LOG_CALLREF : e->type) << 4 | e->sub);
		b = &bs[rec_log_stream(e->type, e->sub)];
		switch (e->type) {
		case DETER_EV_VALUE:
			if (e->sub == DETER_V_CLOCK) {
				r |= rec_log_put_clock(bs, c, e->a);
				break;
			}
			r |= rec_buf_varint(b, e->a);
			if (deter_value_has_b(e->sub))
				r |= rec_buf_varint(b, e->b);
			break;
		case DETER_EV_LOCK:
		case DETER_EV_CONFIG:
			r |= rec_buf_varint(b, e->a);
			break;
		case DETER_EV_RX:
			r |= rec_buf_varint(b, rec_zigzag_encode(e->a - c->rx_expect));
			r |= rec_buf_byte(b, (uint8_t)e->b);
			r |= rec_buf_varint(b, e->c);
			break;
		case DETER_EV_NET:
			if (e->sub == DETER_NET_SHAPE) {
				/*
				 * One of the recent shapes (a driver's buffers
				 * alternate), or against the last: mostly one
				 * field moved. a has no bit 63.
				 */
				k = rec_log_shape_find(c, e);
				if (k >= 0) {
					r |= rec_buf_varint(b, (uint64_t)k << 1 | 1);
					break;
				}
				r |= rec_buf_varint(b, (e->a ^ c->shape[0]) << 1);
				r |= rec_buf_varint(b, e->b ^ c->shape[1]);
				r |= rec_buf_varint(b, e->c);
				break;
			}
			r |= rec_buf_varint(b, rec_zigzag_encode(e->a - c->rx_last));
			r |= rec_buf_varint(b, e->b);
			break;
		case DETER_EV_CALL:
			if (k >= 0) {
				r |= rec_buf_varint(b, k);
				break;
			}
			r |= rec_buf_varint(b, e->a);
			r |= rec_buf_varint(b, e->b);
			rec_log_dict_add(c, e->a, e->b);
			break;
		case DETER_EV_CALL_DONE:
			/* Mostly all the bytes asked: 0. */
			if (e->sub != DETER_ABI_CALL_SENDMSG) {
				r |= rec_buf_varint(b, rec_log_done_zz(c, e));
				break;
			}
			r |= rec_buf_varint(b, rec_log_done_zz(c, e) << 1 | !!e->b);
			if (e->b)
				r |= rec_buf_varint(b, e->b);
			break;
		case DETER_EV_SAMPLE:
			r |= rec_log_put_sample(bs, c, e);
			break;
		case DETER_EV_STATE:
			for (j = 0; j < DETER_ST_MAX; j++)
				r |= rec_buf_varint(b,
						    rec_zigzag_encode(st->v[j] - c->state.v[j]));
			break;
		}
		rec_log_ctx_after(c, e, st);
	}
	if (r == -2)
		return rec_err(err, "event %zu (seq %u): cannot encode type %u sub %u",
			       i, evs[i].seq, evs[i].type, evs[i].sub);
	if (r)
		return rec_err(err, "out of memory");
	return 0;
}

/**
 * rec_log_enc_chunk() - the next chunk of the body: the events added
 *	since the last chunk
 * @enc: the encoder; its context goes on, its streams start empty again
 * @out: the bytes, malloc'd
 * @len: their length
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_enc_chunk(struct rec_log_enc *enc, uint8_t **out, size_t *len,
		      char **err)
{
	struct rec_buf body = { 0 };
	int k, r;

	r = rec_log_enc_run_end(enc);
	for (k = 0; k < RS_MAX && !r; k++)
		r |= rec_buf_varint(&body, enc->bs[k].len);
	for (k = 0; k < RS_MAX && !r; k++) {
		if (!enc->bs[k].len)
			continue;
		r |= rec_buf_reserve(&body, enc->bs[k].len);
		if (!r) {
			memcpy(body.p + body.len, enc->bs[k].p, enc->bs[k].len);
			body.len += enc->bs[k].len;
		}
	}
	if (r) {
		free(body.p);
		return rec_err(err, "out of memory");
	}
	for (k = 0; k < RS_MAX; k++)
		enc->bs[k].len = 0;
	*out = body.p;
	*len = body.len;
	return 0;
}

/**
 * rec_log_encode() - encode events into a log body (one chunk, before
 *	compression)
 * @evs: events sorted by sequence number
 * @n: how many
 * @states: the values STATE events index
 * @out: the body, malloc'd
 * @len: its length
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_encode(const struct rec_ev *evs, size_t n,
		   const struct rec_state *states, uint8_t **out, size_t *len,
		   char **err)
{
	struct rec_log_enc *enc = rec_log_enc_new();
	int r;

	if (!enc)
		return rec_err(err, "out of memory");
	r = rec_log_enc_add(enc, evs, n, states, err);
	if (!r)
		r = rec_log_enc_chunk(enc, out, len, err);
	rec_log_enc_free(enc);
	return r;
}
