// SPDX-License-Identifier: GPL-2.0
/*
 * The log body's decoder: the records and streams rec_codec.c describes
 * in, a connection's events out, or an error naming the offset.
 *
 * Logs are input: a file copied from another host, cut short by a full
 * disk, or damaged on the way. The decoder trusts nothing in them:
 *
 *   body+N   every varint is bounded (rec_varint.c) and read within its
 *            stream, every stream within its chunk; every field is
 *            range-checked against what deter.ko can log (an unknown
 *            event type, call, lock owner, flag bit, sysctl, ...);
 *            a RUN repeats only a LOCK or RX, a CALLREF names a
 *            dictionary entry there is, a sample refers to a clock
 *            value there was; every stream of a chunk is used up
 *   events   no record may go past the event count of the header, and
 *            the body must end with exactly that many events
 *
 * so that whatever the bytes, rec_log_decode() returns the events the
 * encoder was given or an error "body+N: what", N counting from the
 * start of the decompressed body (the libFuzzer target,
 * tests/fuzz/rec_log_fuzz.c, holds it to that). It also counts, per
 * record tag, the records, events and bytes (deter show --stats).
 *
 * A body is one or more chunks, each its streams' lengths and the
 * streams; the context goes on from one chunk to the next:
 *
 *   rec_log_dec_init(chunk) -> RS_MAX readers, one per stream
 *   records, while RS_TAG has tags -> fields from each kind's streams
 *   every other stream used up -> the next chunk, or the end
 */
#include "rec_dec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rec_codec.h"
#include "rec_err.h"

/* One stream of a body being decoded; offsets in errors count from the body. */
struct rec_log_rd {
	const uint8_t *p;	/* the stream */
	size_t len;		/* its length */
	size_t off;		/* bytes read */
	size_t base;		/* its offset in the body */
	char **err;		/* where errors go */
};

/* A body being decoded: the readers of its chunk, and what carries on. */
struct rec_log_dec {
	struct rec_log_rd rd[RS_MAX];	/* the chunk's streams */
	struct rec_log_ctx c;		/* the context, across chunks */
	struct rec_log *log;		/* the events so far */
	size_t cap;			/* log->evs allocated */
	size_t scap;			/* log->states allocated */
	uint32_t nevents;		/* events the header promises */
	uint64_t gap;			/* 1 + the pending SEQGAP's g, or 0 */
	char **err;
};

static int rec_log_get(struct rec_log_rd *rd, uint64_t *v, const char *what)
{
	size_t used;

	if (rec_varint_get(rd->p + rd->off, rd->len - rd->off, v, &used))
		return rec_err(rd->err, "body+%zu: %s: %s", rd->base + rd->off, what,
			       errno == EMSGSIZE ? "truncated" : "bad varint");
	rd->off += used;
	return 0;
}

static int rec_log_get_byte(struct rec_log_rd *rd, uint64_t *v, const char *what)
{
	if (rd->off == rd->len)
		return rec_err(rd->err, "body+%zu: %s: truncated", rd->base + rd->off, what);
	*v = rd->p[rd->off++];
	return 0;
}

/* A value split into a low byte (@lo) and the rest (@hi), joined. */
static int rec_log_get_planes(struct rec_log_rd *lo, struct rec_log_rd *hi,
			      uint64_t *v, const char *what)
{
	uint64_t l = 0, h = 0;

	if (rec_log_get_byte(lo, &l, what) || rec_log_get(hi, &h, what))
		return -1;
	if (h > UINT64_MAX >> 8)
		return rec_err(hi->err, "body+%zu: %s out of range",
			       hi->base + hi->off - 1, what);
	*v = h << 8 | l;
	return 0;
}

static int rec_log_push(struct rec_log_dec *d, const struct rec_ev *e)
{
	struct rec_log *log = d->log;
	struct rec_ev *ne;

	if (log->nevs == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 1024;
		ne = realloc(log->evs, d->cap * sizeof(*ne));
		if (!ne)
			return rec_err(d->err, "out of memory");
		log->evs = ne;
	}
	log->evs[log->nevs++] = *e;
	return 0;
}

static void rec_log_stat(struct rec_log *log, unsigned int type, unsigned int sub,
			 size_t from, size_t to, uint64_t events)
{
	struct rec_log_stat *st = &log->stat[type & 15][sub & 15];

	st->records++;
	st->events += events;
	st->bytes += to - from;
}

/*
 * Readers for the streams of the chunk at @buf, @base bytes into the
 * body; *@end: where that chunk ends.
 */
static int rec_log_dec_init(struct rec_log_dec *d, const uint8_t *buf, size_t len,
			    size_t base, size_t *end)
{
	struct rec_log_rd pre = { .p = buf, .len = len, .base = base, .err = d->err };
	uint64_t sl[RS_MAX];
	size_t at;
	int i;

	for (i = 0; i < RS_MAX; i++)
		if (rec_log_get(&pre, &sl[i], "stream length"))
			return -1;
	at = pre.off;
	for (i = 0; i < RS_MAX; i++) {
		if (sl[i] > len - at)
			return rec_err(d->err, "body+%zu: stream %d (%llu bytes) overruns the body",
				       base + at, i, (unsigned long long)sl[i]);
		d->rd[i] = (struct rec_log_rd){ .p = buf + at, .len = sl[i],
						.base = base + at, .err = d->err };
		at += sl[i];
	}
	*end = base + at;
	return 0;
}

/* Bytes the readers have consumed, all streams together. */
static size_t rec_log_dec_used(const struct rec_log_dec *d)
{
	size_t n = 0;
	int i;

	for (i = 0; i < RS_MAX; i++)
		n += d->rd[i].off;
	return n;
}

/* A clock delta (rec_log_put_clock()) into *@ns. */
static int rec_log_dec_clock(struct rec_log_dec *d, uint64_t *ns, size_t at)
{
	uint64_t code;
	int lo, hi;

	rec_log_clock_streams(d->c.clk_ctx, &lo, &hi);
	if (rec_log_get_planes(&d->rd[lo], &d->rd[hi], &code, "clock"))
		return -1;
	if (!code)
		return rec_log_get(&d->rd[hi], ns, "clock (ns)");
	if (code - 1 > UINT64_MAX / 1000)
		return rec_err(d->err, "body+%zu: bad clock value", at);
	*ns = (code - 1) * 1000;
	return 0;
}

/* A sample's time: its clock reference, then the delta. */
static int rec_log_dec_sample_time(struct rec_log_dec *d, struct rec_ev *e, size_t at)
{
	struct rec_log_rd *rs = &d->rd[RS_SMPREF];
	struct rec_log_ctx *c = &d->c;
	uint64_t ref = 0, v = 0;
	unsigned int j;
	int64_t dt;

	if (rec_log_get_byte(rs, &ref, "sample reference") ||
	    rec_log_get_planes(&d->rd[RS_SMPLO], &d->rd[RS_SMPHI], &v, "sample time"))
		return -1;
	j = ref & ~REC_LOG_SMP_NS;
	if (j != REC_LOG_SMP_NOREF && j >= REC_LOG_CLK_RING)
		return rec_err(d->err, "body+%zu: bad sample reference byte 0x%02x",
			       rs->base + rs->off - 1, (unsigned int)ref);
	if (j != REC_LOG_SMP_NOREF && j >= c->nclk)
		return rec_err(d->err, "body+%zu: sample refers to clock value %u of %u",
			       rs->base + rs->off - 1, j, c->nclk);
	dt = rec_zigzag_decode(v);
	if (!(ref & REC_LOG_SMP_NS)) {
		if (dt > INT64_MAX / 1000 || dt < INT64_MIN / 1000)
			return rec_err(d->err, "body+%zu: sample time out of range", at);
		dt *= 1000;
	}
	if (j == REC_LOG_SMP_NOREF) {
		e->b = c->smp_ns + (uint64_t)dt;
	} else {
		c->smp_lag += dt;
		e->b = rec_smp_ref_ns(c, j) + (uint64_t)c->smp_lag;
	}
	return 0;
}

/*
 * b of a send's CALL_DONE: a spliced send's pages (DETER_SPLICE_*), what
 * the send put on the error queue (DETER_SEND_*); nonzero.
 */
static int rec_log_send_bits_ok(uint64_t b)
{
	const uint64_t splice = DETER_SPLICE_OFF | DETER_SPLICE_CONT | DETER_SPLICE_OTHER;
	const uint64_t known = splice | DETER_SPLICE_KNOWN | DETER_SEND_ERRQ;

	return b && !(b & ~known) && (!(b & splice) || (b & DETER_SPLICE_KNOWN));
}

/*
 * The flags of a splice read's CALL: the splice flags (SPLICE_F_*,
 * DETER_SPLICE_RD_FLAGS), the pipe's room and the socket's mode
 * (DETER_SPLICE_RD_*).
 */
static int rec_log_splice_read_ok(uint64_t flags)
{
	const uint64_t known = DETER_SPLICE_RD_FLAGS | DETER_SPLICE_RD_NONBLOCK |
		(uint64_t)DETER_SPLICE_RD_ROOM_MAX << DETER_SPLICE_RD_ROOM_SHIFT;

	return !(flags & ~known);
}

/* A VALUE's fields into @e, its sub already there. */
static int rec_log_dec_value(struct rec_log_dec *d, struct rec_log_rd *rs,
			     struct rec_ev *e, size_t at)
{
	if (e->sub >= DETER_V_MAX)
		return rec_err(d->err, "body+%zu: unknown value %u", at, e->sub);
	if (e->sub == DETER_V_CLOCK) {
		if (rec_log_dec_clock(d, &e->a, at))
			return -1;
	} else if (rec_log_get(rs, &e->a, "value")) {
		return -1;
	}
	if (deter_value_has_b(e->sub) && rec_log_get(rs, &e->b, "value's second field"))
		return -1;
	if (e->sub == DETER_V_HOST && e->b >> 32 >= DETER_HOST_MAX)
		return rec_err(d->err, "body+%zu: unknown host answer %llu", at,
			       (unsigned long long)(e->b >> 32));
	if (e->sub == DETER_V_MEM && e->b >> 1 >= DETER_MEM_MAX)
		return rec_err(d->err, "body+%zu: unknown memory decision %llu", at,
			       (unsigned long long)(e->b >> 1));
	return 0;
}

/* A CALL_DONE's fields into @e: its result, and a send's bits. */
static int rec_log_dec_done(struct rec_log_dec *d, struct rec_log_rd *rs,
			    struct rec_ev *e, size_t at)
{
	uint64_t v;

	if (rec_log_get(rs, &v, "call result"))
		return -1;
	if (e->sub == DETER_ABI_CALL_SENDMSG) {
		if (v & 1 && rec_log_get(rs, &e->b, "spliced send's pages"))
			return -1;
		if (v & 1 && !rec_log_send_bits_ok(e->b))
			return rec_err(d->err, "body+%zu: bad bits %#llx on a send's return",
				       at, (unsigned long long)e->b);
		v >>= 1;
	}
	e->a = (uint64_t)rec_zigzag_decode(v) + d->c.call_bytes[e->sub];
	return 0;
}

/* A STATE's values into log->states, @e->a indexing them. */
static int rec_log_dec_state(struct rec_log_dec *d, struct rec_log_rd *rs,
			     struct rec_ev *e, struct rec_state *st)
{
	struct rec_log *log = d->log;
	struct rec_state *ns;
	unsigned int j;
	uint64_t v;

	for (j = 0; j < DETER_ST_MAX; j++) {
		if (rec_log_get(rs, &v, "state value"))
			return -1;
		st->v[j] = d->c.state.v[j] + rec_zigzag_decode(v);
	}
	if (log->nstates == d->scap) {
		d->scap = d->scap ? d->scap * 2 : 64;
		ns = realloc(log->states, d->scap * sizeof(*ns));
		if (!ns)
			return rec_err(d->err, "out of memory");
		log->states = ns;
	}
	e->a = log->nstates;
	log->states[log->nstates++] = *st;
	return 0;
}

/*
 * The fields of a record of @type (an event type or CALLREF) into @e,
 * its type, sub and seq already there; a STATE's values into *@st.
 */
static int rec_log_dec_fields(struct rec_log_dec *d, unsigned int type,
			      struct rec_ev *e, struct rec_state *st, size_t at)
{
	struct rec_log_rd *rs = &d->rd[rec_log_stream(type, e->sub)];
	struct rec_log_ctx *c = &d->c;
	uint64_t v;

	switch (type) {
	case DETER_EV_LOCK:
		if (e->sub >= DETER_LOCK_MAX)
			return rec_err(d->err, "body+%zu: unknown lock owner %u", at, e->sub);
		return rec_log_get(rs, &e->a, "lock");
	case DETER_EV_CONFIG:
		if (e->sub >= DETER_CFG_MAX)
			return rec_err(d->err, "body+%zu: unknown config field %u", at, e->sub);
		if (rec_log_get(rs, &e->a, "config value"))
			return -1;
		if (e->sub == DETER_CFG_SYSCTL && e->a >> 32 >= DETER_SYSCTL_MAX)
			return rec_err(d->err, "body+%zu: unknown sysctl %llu", at,
				       (unsigned long long)(e->a >> 32));
		if (e->sub == DETER_CFG_TCP && DETER_TCPOPT_ID(e->a) >= DETER_TCPOPT_MAX)
			return rec_err(d->err, "body+%zu: unknown TCP option %u", at,
				       DETER_TCPOPT_ID(e->a));
		return 0;
	case DETER_EV_VALUE:
		return rec_log_dec_value(d, rs, e, at);
	case DETER_EV_RX:
		if (rec_log_get(rs, &v, "rx index"))
			return -1;
		e->a = c->rx_expect + rec_zigzag_decode(v);
		if (rec_log_get_byte(rs, &e->b, "rx flags") ||
		    rec_log_get(rs, &e->c, "rx segments"))
			return -1;
		if (e->b & ~(uint64_t)DETER_RX_FLAGS)
			return rec_err(d->err, "body+%zu: unknown rx flags 0x%llx", at,
				       (unsigned long long)e->b);
		if ((e->b & DETER_RX_TS) && e->c > UINT32_MAX + 1ULL)
			return rec_err(d->err, "body+%zu: rx TS value %llu out of range", at,
				       (unsigned long long)e->c - 1);
		return 0;
	case DETER_EV_NET:
		if (e->sub >= DETER_NET_MAX)
			return rec_err(d->err, "body+%zu: unknown network action %u", at, e->sub);
		if (e->sub == DETER_NET_SHAPE) {
			struct deter_shape sh;

			if (rec_log_get(rs, &v, "shape"))
				return -1;
			if (v & 1) {
				if (v >> 1 >= c->nshapes)
					return rec_err(d->err, "body+%zu: no recent shape %llu",
						       at, (unsigned long long)(v >> 1));
				e->a = c->shapes[v >> 1][0];
				e->b = c->shapes[v >> 1][1];
				e->c = c->shapes[v >> 1][2];
				return 0;
			}
			if (rec_log_get(rs, &e->b, "shape") || rec_log_get(rs, &e->c, "shape"))
				return -1;
			e->a = v >> 1 ^ c->shape[0];
			e->b ^= c->shape[1];
			if (deter_shape_unpack(e->a, e->b, e->c, &sh))
				return rec_err(d->err, "body+%zu: malformed arrival shape", at);
			return 0;
		}
		if (rec_log_get(rs, &v, "net index") || rec_log_get(rs, &e->b, "net count"))
			return -1;
		e->a = c->rx_last + rec_zigzag_decode(v);
		return 0;
	case REC_LOG_CALLREF:
		if (rec_log_get(rs, &v, "call reference"))
			return -1;
		if (v >= c->ndict)
			return rec_err(d->err, "body+%zu: call reference %llu not in dictionary",
				       at, (unsigned long long)v);
		e->a = c->dict[v][0];
		e->b = c->dict[v][1];
		break;
	case DETER_EV_CALL:
		if (rec_log_get(rs, &e->a, "call bytes") || rec_log_get(rs, &e->b, "call flags"))
			return -1;
		rec_log_dict_add(c, e->a, e->b);
		break;
	case DETER_EV_CALL_DONE:
		return rec_log_dec_done(d, rs, e, at);
	case DETER_EV_SAMPLE:
		if (rec_log_get(rs, &v, "sample index"))
			return -1;
		e->a = c->smp_idx + v;
		if (rec_log_dec_sample_time(d, e, at) ||
		    rec_log_get_planes(&d->rd[RS_GAPLO], &d->rd[RS_GAPHI], &e->c, "sample gap"))
			return -1;
		if (rec_gap_unpack(e->c, &e->c))
			return rec_err(d->err, "body+%zu: sample gap out of range", at);
		return 0;
	case DETER_EV_STATE:
		return rec_log_dec_state(d, rs, e, st);
	default:
		return rec_err(d->err, "body+%zu: unknown event type %u", at, type);
	}
	/* A CALL, from the streams or the dictionary. */
	if (e->sub == DETER_ABI_CALL_SPLICE_READ && !rec_log_splice_read_ok(e->b >> 32))
		return rec_err(d->err, "body+%zu: bad flags %#llx on a splice read", at,
			       (unsigned long long)(e->b >> 32));
	return 0;
}

/* A RUN: the previous LOCK or RX, n more times. */
static int rec_log_dec_run(struct rec_log_dec *d, size_t at)
{
	struct rec_log_ctx *c = &d->c;
	struct rec_ev e;
	uint64_t n, i;

	if (!c->seq || d->gap || (c->prev.type != DETER_EV_LOCK && c->prev.type != DETER_EV_RX))
		return rec_err(d->err, "body+%zu: run without an event to repeat", at);
	if (rec_log_get(&d->rd[RS_MISC], &n, "run length"))
		return -1;
	if (n > d->nevents - d->log->nevs)
		return rec_err(d->err, "body+%zu: run of %llu exceeds the %u events in the header",
			       at, (unsigned long long)n, d->nevents);
	for (i = 0; i < n; i++) {
		e = c->prev;
		e.seq++;
		if (e.type == DETER_EV_RX)
			e.a = c->rx_expect;
		if (rec_log_push(d, &e))
			return -1;
		rec_log_ctx_after(c, &e, NULL);
	}
	return 0;
}

/* The record whose tag is next in RS_TAG, at body offset @at. */
static int rec_log_dec_record(struct rec_log_dec *d, size_t at)
{
	struct rec_log_rd *tag = &d->rd[RS_TAG];
	size_t used = rec_log_dec_used(d);
	struct rec_log_ctx *c = &d->c;
	struct rec_ev e = { 0 };
	struct rec_state st;
	unsigned int type;
	uint64_t v;

	type = tag->p[tag->off] >> 4;
	e.sub = tag->p[tag->off++] & 0xf;
	if (type == REC_LOG_SEQGAP) {
		if (d->gap)
			return rec_err(d->err, "body+%zu: two sequence gaps in a row", at);
		if (rec_log_get(&d->rd[RS_MISC], &v, "sequence gap"))
			return -1;
		if (v > UINT32_MAX - 2)
			return rec_err(d->err, "body+%zu: sequence gap too large", at);
		d->gap = v + 1;
		rec_log_stat(d->log, REC_LOG_SEQGAP, 0, used, rec_log_dec_used(d), 0);
		return 0;
	}
	if (type == REC_LOG_RUN) {
		v = d->log->nevs;
		if (rec_log_dec_run(d, at))
			return -1;
		rec_log_stat(d->log, REC_LOG_RUN, c->prev.type, used, rec_log_dec_used(d),
			     d->log->nevs - v);
		return 0;
	}
	if (type > DETER_EV_LAST && type != REC_LOG_CALLREF)
		return rec_err(d->err, "body+%zu: unknown event type %u", at, type);
	if (d->log->nevs == d->nevents)
		return rec_err(d->err, "body+%zu: more events than the %u in the header",
			       at, d->nevents);
	e.type = type == REC_LOG_CALLREF ? DETER_EV_CALL : type;
	v = 1 + d->gap;
	d->gap = 0;
	if (v > UINT32_MAX - c->seq)
		return rec_err(d->err, "body+%zu: sequence number does not advance", at);
	e.seq = c->seq + v;
	if ((e.type == DETER_EV_CALL || e.type == DETER_EV_CALL_DONE) &&
	    e.sub >= DETER_ABI_CALL_MAX)
		return rec_err(d->err, "body+%zu: unknown socket call %u", at, e.sub);
	if (rec_log_dec_fields(d, type, &e, &st, at))
		return -1;
	rec_log_ctx_after(c, &e, e.type == DETER_EV_STATE ? &st : NULL);
	if (rec_log_push(d, &e))
		return -1;
	rec_log_stat(d->log, type, e.sub, used, rec_log_dec_used(d), 1);
	return 0;
}

/**
 * rec_log_decode() - decode a log body
 * @buf: the decompressed body
 * @len: its length
 * @nevents: events the header promises
 * @log: filled: evs, nevs, states, nstates, stat, stat_index, nchunks
 *	 (the caller frees evs and states, also after an error)
 * @err: the error message ("body+N: ...")
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_decode(const uint8_t *buf, size_t len, uint32_t nevents,
		   struct rec_log *log, char **err)
{
	struct rec_log_dec *d = calloc(1, sizeof(*d));
	struct rec_log_rd *tag;
	size_t at = 0, end = len;
	unsigned int j;
	int ret = -1;

	if (!d)
		return rec_err(err, "out of memory");
	d->log = log;
	d->nevents = nevents;
	d->err = err;
	log->nchunks = 0;
	log->stat_index = 0;
	tag = &d->rd[RS_TAG];
	do {	/* each chunk, its context that of the last event */
		if (rec_log_dec_init(d, buf + at, len - at, at, &end))
			goto out;
		log->stat_index += d->rd[0].base - at;
		log->nchunks++;
		while (tag->off < tag->len)
			if (rec_log_dec_record(d, tag->base + tag->off))
				goto out;
		for (j = 1; j < RS_MAX; j++)
			if (d->rd[j].off != d->rd[j].len) {
				rec_err(err, "body+%zu: %zu bytes left in stream %u",
					d->rd[j].base + d->rd[j].off,
					d->rd[j].len - d->rd[j].off, j);
				goto out;
			}
		at = end;
	} while (at < len);
	if (d->gap)
		rec_err(err, "body+%zu: sequence gap at the end", tag->base + tag->off);
	else if (log->nevs != nevents)
		rec_err(err, "body+%zu: %zu events, header says %u",
			tag->base + tag->off, log->nevs, nevents);
	else
		ret = 0;
out:
	free(d);
	return ret;
}
