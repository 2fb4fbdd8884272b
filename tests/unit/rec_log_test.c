// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the log codec (log/rec_enc.c, log/rec_dec.c): events
 * survive encode + decode exactly, runs and the clock and sample streams
 * engage, and a body that is corrupt, truncated, or holds a value deter.ko
 * does not have is refused, naming the offset in the body.
 */
#include "rec_log.h"
#include "rec_codec.h"
#include "rec_varint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "rec_events.h"

static struct rec_ev evs[NEV];
static struct rec_state states[NEV];

static void test_roundtrip(void)
{
	struct rec_log log = { 0 };
	size_t n, ns, len, i;
	uint8_t *buf;
	char *err = NULL;

	uint64_t sbytes, sevents;
	int t, u;

	n = make_events(evs, states, &ns);
	UNIT_CHECK(rec_log_encode(evs, n, states, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, n, &log, &err) == 0);
	if (err)
		printf("# %s\n", err);
	UNIT_CHECK_EQ(log.nevs, n);
	/* deter show --stats: every event and every body byte, once. */
	sbytes = log.stat_index;
	sevents = 0;
	for (t = 0; t < 16; t++)
		for (u = 0; u < 16; u++) {
			sbytes += log.stat[t][u].bytes;
			sevents += log.stat[t][u].events;
		}
	UNIT_CHECK_EQ(sbytes, len);
	UNIT_CHECK_EQ(sevents, n);
	for (i = 0; i < n && i < log.nevs; i++) {
		const struct rec_ev *a = &evs[i], *b = &log.evs[i];

		if (a->seq != b->seq || a->type != b->type || a->sub != b->sub ||
		    (a->type != DETER_EV_STATE &&
		     (a->a != b->a || a->b != b->b || a->c != b->c))) {
			printf("# event %zu: type %u/%u seq %u/%u a %llu/%llu b %llu/%llu\n",
			       i, a->type, b->type, a->seq, b->seq,
			       (unsigned long long)a->a, (unsigned long long)b->a,
			       (unsigned long long)a->b, (unsigned long long)b->b);
			UNIT_CHECK(0);
			break;
		}
		if (a->type == DETER_EV_STATE)
			UNIT_CHECK(!memcmp(&states[a->a], &log.states[b->a], sizeof(states[0])));
	}
	/* Random events compress poorly; still well under their 32 bytes. */
	UNIT_CHECK(len < n * 12);
	free(buf);
	free(log.evs);
	free(log.states);
}

static void test_runs(void)
{
	struct rec_ev e[1000];
	struct rec_log log = { 0 };
	size_t len, i;
	uint8_t *buf;
	char *err = NULL;

	for (i = 0; i < 1000; i++)
		e[i] = (struct rec_ev){ .seq = i + 1, .type = DETER_EV_RX,
					.a = 7 + i, .c = 1 };
	UNIT_CHECK(rec_log_encode(e, 1000, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(len < 28);	/* the 19 streams' lengths, a tag, a run */
	UNIT_CHECK(rec_log_decode(buf, len, 1000, &log, &err) == 0);
	UNIT_CHECK_EQ(log.nevs, 1000);
	UNIT_CHECK_EQ(log.evs[999].a, 1006);
	free(buf);
	free(log.evs);
}

static void test_corrupt(void)
{
	struct rec_log log = { 0 };
	size_t n, ns, len, i, fails = 0;
	uint8_t *buf;
	char *err = NULL;

	n = make_events(evs, states, &ns);
	UNIT_CHECK(rec_log_encode(evs, n, states, &buf, &len, &err) == 0);
	/* Every truncation is an error, never a crash or a short success. */
	for (i = 0; i < len; i += 1 + len / 300) {
		memset(&log, 0, sizeof(log));
		if (rec_log_decode(buf, i, n, &log, &err)) {
			UNIT_CHECK(err && !strncmp(err, "body+", 5));
			fails++;
		}
		free(err);
		err = NULL;
		free(log.evs);
		free(log.states);
	}
	UNIT_CHECK(fails > 0);
	/* Flipped bytes: errors or other events, never a crash. */
	for (i = 0; i < 2000; i++) {
		uint8_t *c = malloc(len);
		size_t k = unit_rand() % len;

		memcpy(c, buf, len);
		c[k] ^= 1 + unit_rand() % 255;
		memset(&log, 0, sizeof(log));
		rec_log_decode(c, len, n, &log, &err);
		free(err);
		err = NULL;
		free(log.evs);
		free(log.states);
		free(c);
	}
	free(buf);
}

/*
 * Two shapes alternating, as a driver's buffers do: each comes back as
 * it went, and a repeat costs a byte, not the shape again.
 */
static void test_shape_alternate(const struct rec_ev *s1, const struct rec_ev *s2)
{
	struct rec_ev ev[40];
	struct rec_log log = { 0 };
	size_t len2, len40, i;
	char *err = NULL;
	uint8_t *buf;

	for (i = 0; i < 40; i++) {
		ev[i] = i % 4 < 2 ? *s1 : *s2;
		ev[i].seq = i + 1;
		if (i % 2) {	/* an arrival after each shape */
			memset(&ev[i], 0, sizeof(ev[i]));
			ev[i].seq = i + 1;
			ev[i].type = DETER_EV_RX;
			ev[i].a = 1000 + i;
			ev[i].c = 1;
		}
	}
	UNIT_CHECK(rec_log_encode(ev, 4, NULL, &buf, &len2, &err) == 0);
	free(buf);
	UNIT_CHECK(rec_log_encode(ev, 40, NULL, &buf, &len40, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len40, 40, &log, &err) == 0);
	for (i = 0; i < log.nevs && i < 40; i++) {
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
		UNIT_CHECK_EQ(log.evs[i].b, ev[i].b);
		UNIT_CHECK_EQ(log.evs[i].c, ev[i].c);
	}
	/* 18 more shapes, each a tag and an index; 18 arrivals of 4 bytes. */
	UNIT_CHECK(len40 - len2 <= 18 * 2 + 18 * 4);
	free(buf);
	free(log.evs);
	free(log.states);
}

/*
 * Arrival shapes come back as they went, each against the one before
 * it, around an arrival; a shape with bits no shape sets is an error
 * naming the offset.
 */
static void test_shape(void)
{
	struct deter_shape s1 = {
		.truesize = 2816, .end_offset = 384, .headroom = 98, .headlen = 94,
		.nr_frags = 1, .runs = 1,
	}, s2 = s1, back = { 0 };
	__u64 a, b, c;
	struct rec_ev ev[3] = {
		{ .seq = 1, .type = DETER_EV_NET, .sub = DETER_NET_SHAPE },
		{ .seq = 2, .type = DETER_EV_RX, .a = 500, .c = 3 },
		{ .seq = 3, .type = DETER_EV_NET, .sub = DETER_NET_SHAPE },
	};
	struct rec_log log = { 0 };
	char *err = NULL;
	uint8_t *buf;
	size_t len, i;

	s2.truesize = 66304;
	s2.nr_frags = 17;
	s2.runs = 3;
	s2.frag_list = 28;
	s2.gso_size = 1448;
	s2.flags = DETER_SHAPE_F_HEAD_FRAG | DETER_SHAPE_F_CONT;
	deter_shape_pack(&s1, &a, &b, &c);
	ev[0].a = a;
	ev[0].b = b;
	s2.run_len[0] = 4344;
	s2.run_len[1] = 1448;
	deter_shape_pack(&s2, &a, &b, &c);
	ev[2].a = a;
	ev[2].b = b;
	ev[2].c = c;
	UNIT_CHECK(rec_log_encode(ev, 3, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 3, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 3);
	for (i = 0; i < log.nevs && i < 3; i++) {
		UNIT_CHECK_EQ(log.evs[i].type, ev[i].type);
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
		UNIT_CHECK_EQ(log.evs[i].b, ev[i].b);
		UNIT_CHECK_EQ(log.evs[i].c, ev[i].c);
	}
	UNIT_CHECK(log.nevs == 3);
	if (log.nevs == 3)
		UNIT_CHECK(!deter_shape_unpack(log.evs[2].a, log.evs[2].b, log.evs[2].c, &back));
	UNIT_CHECK_EQ(back.frag_list, 28);
	UNIT_CHECK_EQ(back.run_len[1], 1448);
	UNIT_CHECK_EQ(back.flags, DETER_SHAPE_F_HEAD_FRAG | DETER_SHAPE_F_CONT);
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	test_shape_alternate(&ev[0], &ev[2]);
	ev[2].a |= 1ULL << 62;
	UNIT_CHECK(rec_log_encode(ev, 3, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 3, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "body+") && strstr(err, "malformed arrival shape"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
}

/*
 * Memory decisions, an ICMP error and a setsockopt() come back as they
 * went; an unknown memory decision is an error.
 */
static void test_mem_icmp(void)
{
	struct rec_ev ev[4] = {
		{ .seq = 1, .type = DETER_EV_VALUE, .sub = DETER_V_MEM,
		  .a = 0, .b = DETER_MEM_PRESSURE << 1 | 1 },
		{ .seq = 2, .type = DETER_EV_NET, .sub = DETER_NET_ICMP,
		  .a = 3 << 8 | 4, .b = (uint64_t)1000 << 32 | 2896 },
		{ .seq = 3, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SETSOCKOPT,
		  .a = (uint32_t)-1, .b = (uint64_t)12 << 32 | 77 },
		{ .seq = 4, .type = DETER_EV_VALUE, .sub = DETER_V_MEM,
		  .a = 41, .b = DETER_MEM_SUPPRESS << 1 },
	};
	struct rec_log log = { 0 };
	char *err = NULL;
	uint8_t *buf;
	size_t len, i;

	UNIT_CHECK(rec_log_encode(ev, 4, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 4, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 4);
	for (i = 0; i < log.nevs && i < 4; i++) {
		UNIT_CHECK_EQ(log.evs[i].type, ev[i].type);
		UNIT_CHECK_EQ(log.evs[i].sub, ev[i].sub);
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
		UNIT_CHECK_EQ(log.evs[i].b, ev[i].b);
	}
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[3].b = DETER_MEM_MAX << 1;
	UNIT_CHECK(rec_log_encode(ev, 4, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 4, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown memory decision"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
}

/*
 * Where stream @k of the one-chunk body @buf starts; *@sl_k: its length.
 * (All 0 if the lengths do not decode.)
 */
static size_t stream_at(const uint8_t *buf, size_t len, int k, uint64_t *sl_k)
{
	uint64_t sl[RS_MAX];
	size_t at = 0, used, off;
	int i;

	*sl_k = 0;
	for (i = 0; i < RS_MAX; i++) {
		UNIT_CHECK(rec_varint_get(buf + at, len - at, &sl[i], &used) == 0);
		if (used == 0 || at + used > len)
			return 0;
		at += used;
	}
	for (i = 0, off = at; i < k; i++)
		off += sl[i];
	*sl_k = sl[k];
	return off;
}

/*
 * Clock deltas in us (or ns when they are not whole us), samples against
 * the clock read before them; a steady delay costs one zero byte. A
 * reference to a clock value the log does not have is an error.
 */
static void test_samples(void)
{
	struct rec_ev ev[7] = {
		{ .seq = 1, .type = DETER_EV_SAMPLE, .a = 10, .b = 9000000000ULL },
		{ .seq = 2, .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK,
		  .a = 10673015000ULL },
		{ .seq = 3, .type = DETER_EV_SAMPLE, .a = 12, .b = 10674027000ULL,
		  .c = 3 << 20 },
		{ .seq = 4, .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 3772215 },
		{ .seq = 5, .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 537000 },
		{ .seq = 6, .type = DETER_EV_SAMPLE, .a = 14,
		  .b = 10673015000ULL + 3772215 + 537000 + 1012000 },
		{ .seq = 7, .type = DETER_EV_SAMPLE, .a = 15,
		  .b = 10673015000ULL + 3772215 + 537000 + 1012345 },
	};
	struct rec_log log = { 0 };
	char *err = NULL;
	size_t len, i, ref;
	uint8_t *buf;
	uint64_t sl;

	UNIT_CHECK(rec_log_encode(ev, 7, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 7, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 7);
	for (i = 0; i < log.nevs && i < 7; i++) {
		UNIT_CHECK_EQ(log.evs[i].type, ev[i].type);
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
		UNIT_CHECK_EQ(log.evs[i].b, ev[i].b);
		UNIT_CHECK_EQ(log.evs[i].c, ev[i].c);
	}
	/* The samples' references: none, 0, 0, 0 in ns. */
	ref = stream_at(buf, len, RS_SMPREF, &sl);
	UNIT_CHECK_EQ(sl, 4);
	UNIT_CHECK_EQ(buf[ref], 63);
	UNIT_CHECK_EQ(buf[ref + 1], 0);
	UNIT_CHECK_EQ(buf[ref + 2], 0);
	UNIT_CHECK_EQ(buf[ref + 3], 0x80);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	buf[ref] = 5;	/* the first sample, before any clock read */
	UNIT_CHECK(rec_log_decode(buf, len, 7, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "sample refers to clock value 5 of 0"));
	free(err);
	err = NULL;
	free(buf);
	free(log.evs);
	free(log.states);

	/* The host's unusual answers: known kinds only. */
	memset(&log, 0, sizeof(log));
	ev[0] = (struct rec_ev){ .seq = 1, .type = DETER_EV_VALUE, .sub = DETER_V_HOST,
				 .a = 12, .b = (uint64_t)DETER_HOST_XMIT << 32 | 1 };
	ev[1] = (struct rec_ev){ .seq = 2, .type = DETER_EV_VALUE, .sub = DETER_V_HOST,
				 .a = 0, .b = (uint64_t)DETER_HOST_TIMEOUT << 32 };
	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 2, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 2 && log.evs[1].b == ev[1].b && log.evs[0].a == 12);
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].b = (uint64_t)DETER_HOST_NOSPACE << 32 | 1;
	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 2, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 2 && log.evs[1].b == ev[1].b);
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].b = (uint64_t)DETER_HOST_MAX << 32;
	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 2, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown host answer 9"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
}

/*
 * Clock deltas: a code, 1 + us or 0 for an escape and ns, as a low byte
 * (RS_CLOCK) and the rest (RS_CLKHI). (Samples, split the same way:
 * test_samples.)
 */
static void test_clock_planes(void)
{
	static const uint64_t clk[] = {
		10673015000ULL, 3772215, 537000, 0, 255000, 256000, 1000ULL << 40,
	};
	enum { n = ARRAY_SIZE(clk) };
	struct rec_ev ev[n];
	struct rec_log log = { 0 };
	char *err = NULL;
	size_t len, i, v;
	uint64_t sl;
	uint8_t *buf;

	for (i = 0; i < n; i++)
		ev[i] = (struct rec_ev){ .seq = i + 1, .type = DETER_EV_VALUE,
					 .sub = DETER_V_CLOCK, .a = clk[i] };
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, n, &log, &err) == 0);
	UNIT_CHECK_EQ(log.nevs, n);
	for (i = 0; i < log.nevs && i < n; i++)
		UNIT_CHECK_EQ(log.evs[i].a, clk[i]);
	free(log.evs);
	free(log.states);
	/* The clock's low bytes one per value: 1 + us, or 0. */
	v = stream_at(buf, len, RS_CLOCK, &sl);
	UNIT_CHECK_EQ(sl, n);
	UNIT_CHECK_EQ(buf[v + 1], 0);			/* 3772215 ns: escape */
	UNIT_CHECK_EQ(buf[v + 3], 1);			/* 0 us */
	UNIT_CHECK_EQ(buf[v + 4], 0);			/* 256 = 1 << 8 | 0 */
	UNIT_CHECK_EQ(buf[v + 5], 1);			/* 257 */
	stream_at(buf, len, RS_CLKHI, &sl);
	UNIT_CHECK_EQ(sl, 3 + 1 + 4 + 1 + 1 + 1 + 1 + 5);
	free(buf);
}

/*
 * A clock delta goes to RS_CLOCK/RS_CLKHI when the last other event was
 * a segment (RX, NET; and at the start), to RS_CLOCK_LOCK/RS_CLKHI_LOCK
 * after a LOCK, to RS_CLOCK_OTHER/RS_CLKHI_OTHER after anything else;
 * runs and further clock values keep the pair.
 */
static void test_clock_streams(void)
{
	struct rec_ev ev[] = {
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 1000 },	/* start */
		{ .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },		/* a run */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 2000 },	/* LOCK */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 300000 },	/* LOCK */
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 200 },
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 4500 },	/* OTHER: ns */
		{ .type = DETER_EV_RX, .a = 7, .c = 1 },
		{ .type = DETER_EV_RX, .a = 8, .c = 1 },			/* a run */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 5000 },	/* segment */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_JIFFIES, .a = 1 },
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 6000 },	/* OTHER */
	};
	enum { n = ARRAY_SIZE(ev) };
	static const uint64_t want[RS_MAX] = {
		[RS_CLOCK] = 2, [RS_CLKHI] = 2, [RS_CLOCK_LOCK] = 2, [RS_CLKHI_LOCK] = 2,
		[RS_CLOCK_OTHER] = 2, [RS_CLKHI_OTHER] = 4,
	};
	struct rec_log log = { 0 };
	char *err = NULL;
	size_t len, i;
	uint8_t *buf;
	uint64_t sl;

	for (i = 0; i < n; i++)
		ev[i].seq = i + 1;
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	for (i = 0; i < RS_MAX; i++) {
		stream_at(buf, len, i, &sl);
		if (want[i] || i >= RS_CLOCK_LOCK)
			UNIT_CHECK_EQ(sl, want[i]);
	}
	UNIT_CHECK(rec_log_decode(buf, len, n, &log, &err) == 0);
	UNIT_CHECK_EQ(log.nevs, n);
	for (i = 0; i < log.nevs && i < n; i++) {
		UNIT_CHECK_EQ(log.evs[i].type, ev[i].type);
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
	}
	free(log.evs);
	free(log.states);
	free(buf);
}

/*
 * Number @ev's @n events 1 on, encode them into *@buf (the caller frees
 * it) and check that they decode back exactly, a, b and c.
 */
static void check_roundtrip(struct rec_ev *ev, size_t n, uint8_t **buf, size_t *len)
{
	struct rec_log log = { 0 };
	char *err = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		ev[i].seq = i + 1;
	UNIT_CHECK(rec_log_encode(ev, n, NULL, buf, len, &err) == 0);
	UNIT_CHECK(rec_log_decode(*buf, *len, n, &log, &err) == 0);
	UNIT_CHECK_EQ(log.nevs, n);
	for (i = 0; i < log.nevs && i < n; i++) {
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
		UNIT_CHECK_EQ(log.evs[i].b, ev[i].b);
		UNIT_CHECK_EQ(log.evs[i].c, ev[i].c);
	}
	free(log.evs);
	free(log.states);
}

/*
 * Decoding @buf (@n events) must fail, naming an offset in the body and
 * saying @want.
 */
static void check_refused(const uint8_t *buf, size_t len, size_t n, const char *want)
{
	struct rec_log log = { 0 };
	char *err = NULL;

	UNIT_CHECK(rec_log_decode(buf, len, n, &log, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "body+", 5) && strstr(err, want));
	free(err);
	free(log.evs);
	free(log.states);
}

/*
 * An RX CTL (the peer's time-wait answer) and an RX SYN (a SYN-ACK) keep
 * their TS value in c and leave the IP ID series where it was: the
 * segment after it is expected at the same index, and the log says so
 * back exactly. A flag deter.ko does not have is refused, naming the
 * offset.
 */
static void test_rx_ctl(void)
{
	struct rec_ev ev[] = {
		{ .type = DETER_EV_RX, .b = DETER_RX_SYN, .c = 4195426723ULL },
		{ .type = DETER_EV_RX, .a = 65534, .c = 1 },
		{ .type = DETER_EV_RX, .a = 65535, .c = 1 },
		{ .type = DETER_EV_RX, .a = 65536, .b = DETER_RX_CTL, .c = 4195426723ULL },
		{ .type = DETER_EV_RX, .a = 65536, .c = 1 },
		{ .type = DETER_EV_RX, .a = 65537, .b = DETER_RX_CTL | DETER_RX_OWNED },
		{ .type = DETER_EV_RX, .a = 65537, .b = DETER_RX_CTL | DETER_RX_OWNED },
	};
	enum { n = ARRAY_SIZE(ev) };
	uint8_t *buf;
	size_t len;

	check_roundtrip(ev, n, &buf, &len);
	free(buf);
	ev[4].b = DETER_RX_FLAGS + 1;
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, NULL) == 0);
	check_refused(buf, len, n, ": unknown rx flags 0x20");
	free(buf);
}

/*
 * A spliced send's pages round-trip in its CALL_DONE, other returns cost
 * nothing more. Pages on a return that is no send's cannot be encoded;
 * unknown bits are refused.
 */
static void test_splice_pages(void)
{
	const uint64_t flags = (uint64_t)DETER_MSG_SPLICE_PAGES << 32 | 7;
	struct rec_ev ev[] = {
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 64536, .b = flags },
		{ .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG, .a = 64536,
		  .b = DETER_SPLICE_KNOWN | 1000 },
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000, .b = flags },
		{ .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG, .a = (uint64_t)-11,
		  .b = DETER_SPLICE_KNOWN | DETER_SPLICE_CONT | 4095 },
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000, .b = flags },
		{ .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000,
		  .b = DETER_SPLICE_KNOWN | DETER_SPLICE_OTHER },
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_RECVMSG, .a = 100, .b = 7 },
		{ .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_RECVMSG, .a = 0 },
	};
	enum { n = ARRAY_SIZE(ev) };
	struct rec_ev none[ARRAY_SIZE(ev)];
	struct rec_log log = { 0 };
	size_t len, len0, i;
	uint8_t *buf, *b0;
	char *err = NULL;

	check_roundtrip(ev, n, &buf, &len);
	/* Against the same returns without pages: three varints of 3 bytes. */
	for (i = 0; i < n; i++) {
		none[i] = ev[i];
		if (ev[i].type == DETER_EV_CALL_DONE)
			none[i].b = 0;
	}
	check_roundtrip(none, n, &b0, &len0);
	UNIT_CHECK_EQ(len, len0 + 9);
	free(b0);
	free(buf);
	/* Pages on a recv's return. */
	ev[7].b = DETER_SPLICE_KNOWN;
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) != 0);
	UNIT_CHECK(err && strstr(err, "event 7 (seq 8): cannot encode type 5 sub 1"));
	free(err);
	err = NULL;
	/* A bit no layout has. */
	ev[7].b = 0;
	ev[1].b = DETER_SPLICE_KNOWN | 1ULL << 19;
	memset(&log, 0, sizeof(log));
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, n, &log, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "body+", 5) &&
		   strstr(err, ": bad bits 0x90000 on a send's return"));
	free(err);
	free(log.evs);
	free(log.states);
	free(buf);
}

/*
 * What a send put on the error queue round-trips in its return, alone or
 * with its pages, and the error queue's reads are calls; a call deter.ko
 * does not have is refused.
 */
static void test_send_errqueue(void)
{
	struct rec_ev ev[] = {
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000,
		  .b = (uint64_t)0x4000000 << 32 | 7 },
		{ .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000,
		  .b = DETER_SEND_ZEROCOPY },
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000, .b = 7 },
		{ .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000,
		  .b = DETER_SEND_TXSTAMP | DETER_SPLICE_KNOWN | 100 },
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_RECV_ERRQUEUE, .a = 0,
		  .b = (uint64_t)0x2040 << 32 | 7 },
		{ .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_RECV_ERRQUEUE,
		  .a = (uint64_t)-11 },
	};
	enum { n = ARRAY_SIZE(ev) };
	uint8_t *buf;
	char *err = NULL;
	size_t len;

	check_roundtrip(ev, n, &buf, &len);
	free(buf);
	ev[4].sub = DETER_ABI_CALL_MAX;
	ev[5].sub = DETER_ABI_CALL_MAX;
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	check_refused(buf, len, n, ": unknown socket call 7");
	free(buf);
}

/*
 * A splice read's pipe room and socket mode come back; one with bits
 * deter.ko does not have is refused naming the flags.
 */
static void test_splice_read_room(void)
{
	const uint64_t f0 = 3 << DETER_SPLICE_RD_ROOM_SHIFT | DETER_SPLICE_RD_NONBLOCK;
	const uint64_t f1 = DETER_SPLICE_RD_ROOM_MAX << DETER_SPLICE_RD_ROOM_SHIFT | 0x4;
	const unsigned int rd = DETER_ABI_CALL_SPLICE_READ;
	struct rec_ev ev[] = {
		{ .type = DETER_EV_CALL, .sub = rd, .a = 16384, .b = f0 << 32 | 7 },
		{ .type = DETER_EV_CALL_DONE, .sub = rd, .a = 4344 },
		{ .type = DETER_EV_CALL, .sub = rd, .a = 65536, .b = f1 << 32 | 7 },
		{ .type = DETER_EV_CALL_DONE, .sub = rd, .a = (uint64_t)-11 },
	};
	enum { n = ARRAY_SIZE(ev) };
	uint8_t *buf;
	char *err = NULL;
	size_t len;

	check_roundtrip(ev, n, &buf, &len);
	free(buf);
	ev[0].b = (uint64_t)0x200 << 32 | 7;	/* bits 9-11: none */
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	check_refused(buf, len, n, ": bad flags 0x200 on a splice read");
	free(buf);
}

int main(void)
{
	UNIT_RUN(test_roundtrip);
	UNIT_RUN(test_runs);
	UNIT_RUN(test_corrupt);
	UNIT_RUN(test_mem_icmp);
	UNIT_RUN(test_shape);
	UNIT_RUN(test_samples);
	UNIT_RUN(test_clock_planes);
	UNIT_RUN(test_clock_streams);
	UNIT_RUN(test_rx_ctl);
	UNIT_RUN(test_splice_pages);
	UNIT_RUN(test_send_errqueue);
	UNIT_RUN(test_splice_read_room);
	return unit_done();
}
