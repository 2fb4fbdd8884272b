// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for recorder/rec_log.c: events survive encode + decode
 * exactly, runs and the call dictionary engage, and corrupt, truncated
 * or wrong-version input is rejected with file and offset; a connection
 * whose events say values were not recorded is written incomplete.
 */
#include "rec_log.h"
#include "rec_conn.h"
#include "rec_varint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "unit.h"

#define NEV 5000

static uint32_t unit_rand_state = 12345;

static uint32_t unit_rand(void)
{
	unit_rand_state = unit_rand_state * 1103515245 + 12345;
	return unit_rand_state >> 8;
}

/* A plausible connection: runs of RX and LOCK, calls, samples, states. */
static size_t make_events(struct rec_ev *evs, struct rec_state *states,
			  size_t *nstates)
{
	uint64_t rx = 40000, smp = 1000, ns = 5000000, clk = 0;
	uint32_t seq = 1;
	size_t n = 0, j;

	*nstates = 0;
	while (n < NEV - 2) {
		struct rec_ev *e = &evs[n];
		uint32_t r = unit_rand() % 16;

		memset(e, 0, sizeof(*e));
		e->seq = seq++;
		if (r < 6) {
			e->type = DETER_EV_RX;
			e->a = r == 0 ? rx + 3 : rx;
			e->b = r == 1 ? DETER_RX_OWNED : 0;
			e->c = 1 + (r == 2);
			rx = e->a + e->c;
		} else if (r < 8) {
			e->type = DETER_EV_LOCK;
			e->sub = unit_rand() % DETER_LOCK_MAX;
			e->a = unit_rand() % 2;
		} else if (r < 10) {
			e->type = DETER_EV_CALL;
			e->sub = unit_rand() % 2;
			e->a = r == 8 ? 16384 : unit_rand() % 100000;
			e->b = 105;
			evs[++n] = (struct rec_ev){ .seq = seq++, .type = DETER_EV_CALL_DONE,
						    .sub = e->sub, .a = (uint64_t)-11 };
		} else if (r < 12) {
			e->type = DETER_EV_SAMPLE;
			smp += 1 + unit_rand() % 50;
			ns += unit_rand() % 100000;
			e->a = smp;
			e->b = ns - (r == 11 ? 700 : 0);
			/* Most samples: some us after a clock read. */
			if (clk && unit_rand() % 4)
				e->b = clk + unit_rand() % 300 * 1000 +
				       (unit_rand() % 8 ? 0 : 123);
			/* Gaps deter.ko rounds, and the largest. */
			e->c = r == 10 ? (uint64_t)unit_rand() << 40 : unit_rand();
		} else if (r < 13) {
			e->type = DETER_EV_NET;
			e->sub = unit_rand() % DETER_NET_MAX;
			e->a = rx - unit_rand() % 5;
			e->b = 1 + unit_rand() % 3;
			if (e->sub == DETER_NET_ICMP) {
				e->a = 3 << 8 | 4;
				e->b = (uint64_t)1400 << 32 | unit_rand();
			}
		} else if (r < 14 && unit_rand() % 2) {
			e->type = DETER_EV_CONFIG;
			e->sub = unit_rand() % DETER_CFG_MAX;
			e->a = unit_rand();
		} else if (r < 14) {
			e->type = DETER_EV_VALUE;
			e->sub = unit_rand() % DETER_V_MAX;
			e->a = unit_rand() % 1000;
			if (e->sub == DETER_V_CLOCK) {
				/* Whole us as deter.ko logs them, or older ns. */
				e->a = unit_rand() % 5000 * (unit_rand() % 2 ? 1000 : 1);
				clk += e->a;
			}
			if (e->sub == DETER_V_MEM)
				e->b = unit_rand() % (2 * DETER_MEM_MAX);
			else if (deter_value_has_b(e->sub))
				e->b = unit_rand();
		} else {
			e->type = DETER_EV_STATE;
			e->sub = r == 15;
			e->a = *nstates;
			for (j = 0; j < DETER_ST_MAX; j++)
				states[*nstates].v[j] = unit_rand() % 1000000;
			(*nstates)++;
		}
		if (unit_rand() % 50 == 0)
			seq += 3;	/* a hole: events lost */
		n++;
	}
	return n;
}

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
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, n, &log, &err) == 0);
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
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 1000, &log, &err) == 0);
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
		if (rec_log_decode(buf, i, DETER_ABI_VERSION, n, &log, &err)) {
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
		rec_log_decode(c, len, DETER_ABI_VERSION, n, &log, &err);
		free(err);
		err = NULL;
		free(log.evs);
		free(log.states);
		free(c);
	}
	free(buf);
}

static void test_files(void)
{
	char dir[] = "/tmp/rec_log_test.XXXXXX", *path = NULL, *err = NULL, want[64];
	struct deter_log_header h = { .conn = 0x1234 };
	struct rec_log *log;
	size_t n, ns;
	FILE *f;

	UNIT_CHECK(mkdtemp(dir));
	n = make_events(evs, states, &ns);
	UNIT_CHECK(rec_log_write(dir, &h, evs, n, states, &path, &err) == 0);
	log = rec_log_read(path, &err);
	UNIT_CHECK(log && log->nevs == n);
	rec_log_free(log);

	/* Wrong version: named, with the offset of the field. */
	f = fopen(path, "r+");
	fseek(f, 8, SEEK_SET);
	fputc(DETER_ABI_VERSION + 1, f);
	fclose(f);
	UNIT_CHECK(!rec_log_read(path, &err));
	snprintf(want, sizeof(want), ".dlog:8: log format version %d,", DETER_ABI_VERSION + 1);
	UNIT_CHECK(err && strstr(err, want));
	free(err);
	err = NULL;

	/* Truncated file. */
	UNIT_CHECK(truncate(path, 300) == 0);
	UNIT_CHECK(!rec_log_read(path, &err));
	UNIT_CHECK(err && strstr(err, ".dlog:8:"));
	free(err);
	err = NULL;
	unlink(path);
	free(path);
	rmdir(dir);
}

/* CONFIG SYSCTL: a known sysctl round-trips, signed; an unknown one is an error. */
static void test_sysctl(void)
{
	struct rec_ev ev[2] = {
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_TCP_ADV_WIN_SCALE << 32 | (uint32_t)-2 },
		{ .seq = 2, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_TCP_NOTSENT_LOWAT << 32 | 0xffffffffu },
	};
	struct rec_log log = { 0 };
	char *err = NULL;
	unsigned int id;
	uint8_t *buf;
	size_t len;

	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 2, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 2);
	if (log.nevs == 2) {
		UNIT_CHECK(rec_sysctl_value(log.evs[0].a) == -2);
		UNIT_CHECK(rec_sysctl_value(log.evs[1].a) == 0xffffffffLL);
		UNIT_CHECK(!strcmp(rec_sysctls[log.evs[0].a >> 32].name, "tcp_adv_win_scale"));
	}
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].a = (uint64_t)DETER_SYSCTL_MAX << 32 | 1;
	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 2, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown sysctl"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
	/* Every id has a name; the route's metrics say so. */
	for (id = 0; id < DETER_SYSCTL_MAX; id++)
		UNIT_CHECK(rec_sysctls[id].name);
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_ROUTE_INITCWND]), "route"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_CORE_RMEM_MAX]), "net.core"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_CUBIC_BETA]), "tcp_cubic"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_DCTCP_SHIFT_G]), "tcp_dctcp"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_BIC_BETA]), "tcp_bic"));
	UNIT_CHECK(!strcmp(rec_sysctls[DETER_SYSCTL_CDG_USE_TOLERANCE].name, "use_tolerance"));
	for (id = DETER_PARAM_FIRST; id < DETER_SYSCTL_MAX; id++)
		UNIT_CHECK(rec_sysctls[id].module);
}

/* Module parameters as sysfs shows them: numbers, and a bool's Y or N. */
static void test_param_parse(void)
{
	long long v = 7;

	UNIT_CHECK(rec_param_parse("819\n", &v) == 0 && v == 819);
	UNIT_CHECK(rec_param_parse("-3", &v) == 0 && v == -3);
	UNIT_CHECK(rec_param_parse("4294967295\n", &v) == 0 && v == 4294967295LL);
	UNIT_CHECK(rec_param_parse("Y\n", &v) == 0 && v == 1);
	UNIT_CHECK(rec_param_parse("N", &v) == 0 && v == 0);
	UNIT_CHECK(rec_param_parse("", &v) != 0);
	UNIT_CHECK(rec_param_parse("Yes\n", &v) != 0);
	UNIT_CHECK(rec_param_parse("12x\n", &v) != 0);
	UNIT_CHECK(rec_param_parse("4294967296\n", &v) != 0);
	UNIT_CHECK(rec_param_parse("-2147483649\n", &v) != 0);
}

/*
 * Format 5's events: memory decisions, an ICMP error and a setsockopt()
 * come back as they went; an unknown memory decision is an error.
 */
static void test_format5(void)
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
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 4, &log, &err) == 0);
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
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 4, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown memory decision"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
}

/*
 * Format 6: clock deltas in us (or ns when they are not whole us), samples
 * against the clock read before them; a steady delay costs one zero byte.
 * A reference to a clock value the log does not have is an error.
 */
static void test_format6(void)
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
	uint8_t *buf;
	size_t len, i;

	/* The same samples and clock values in format 7 (test_format7). */
	UNIT_CHECK(rec_log_encode(ev, 7, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 7, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 7);
	for (i = 0; i < log.nevs && i < 7; i++)
		UNIT_CHECK(log.evs[i].a == ev[i].a && log.evs[i].b == ev[i].b);
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));

	UNIT_CHECK(rec_log_encode_v(ev, 7, NULL, 6, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 6, 7, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 7);
	for (i = 0; i < log.nevs && i < 7; i++) {
		UNIT_CHECK_EQ(log.evs[i].type, ev[i].type);
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
		UNIT_CHECK_EQ(log.evs[i].b, ev[i].b);
		UNIT_CHECK_EQ(log.evs[i].c, ev[i].c);
	}
	/* The last stream holds the samples' references: none, 0, 0, 0 in ns. */
	UNIT_CHECK_EQ(buf[len - 4], 63);
	UNIT_CHECK_EQ(buf[len - 3], 0);
	UNIT_CHECK_EQ(buf[len - 2], 0);
	UNIT_CHECK_EQ(buf[len - 1], 0x80);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	buf[len - 4] = 5;	/* the first sample, before any clock read */
	UNIT_CHECK(rec_log_decode(buf, len, 6, 7, &log, &err) != 0);
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
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 2, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 2 && log.evs[1].b == ev[1].b && log.evs[0].a == 12);
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].b = (uint64_t)DETER_HOST_NOSPACE << 32 | 1;
	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 2, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 2 && log.evs[1].b == ev[1].b);
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].b = (uint64_t)DETER_HOST_MAX << 32;
	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 2, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown host answer 8"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
}

/*
 * Format 7: clock deltas as a low byte (RS_CLOCK) and the rest (RS_CLKHI,
 * the eleventh stream), whole us or an escape and ns; a format-6 body
 * read as 7 is an error, never other values. (Samples, split the same
 * way: test_format6.)
 */
static void test_format7(void)
{
	static const uint64_t clk[] = {
		10673015000ULL, 3772215, 537000, 0, 255000, 256000, 1000ULL << 40,
	};
	enum { n = ARRAY_SIZE(clk) };
	struct rec_ev ev[n];
	struct rec_log log = { 0 };
	uint64_t sl[15], v;
	char *err = NULL;
	size_t len, i, at, used;
	uint8_t *buf, *six;
	size_t sixlen;

	for (i = 0; i < n; i++)
		ev[i] = (struct rec_ev){ .seq = i + 1, .type = DETER_EV_VALUE,
					 .sub = DETER_V_CLOCK, .a = clk[i] };
	UNIT_CHECK(rec_log_encode_v(ev, n, NULL, 7, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 7, n, &log, &err) == 0);
	UNIT_CHECK_EQ(log.nevs, n);
	for (i = 0; i < log.nevs && i < n; i++)
		UNIT_CHECK_EQ(log.evs[i].a, clk[i]);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	/* 15 streams; the clock's low bytes one per value: 1 + us, or 0. */
	for (i = 0, at = 0; i < 15; i++) {
		UNIT_CHECK(rec_varint_get(buf + at, len - at, &sl[i], &used) == 0);
		at += used;
	}
	for (i = 0, v = at; i < 6; i++)
		v += sl[i];
	UNIT_CHECK_EQ(sl[6], n);
	UNIT_CHECK_EQ(buf[v + 1], 0);			/* 3772215 ns: escape */
	UNIT_CHECK_EQ(buf[v + 3], 1);			/* 0 us */
	UNIT_CHECK_EQ(buf[v + 4], 0);			/* 256 = 1 << 8 | 0 */
	UNIT_CHECK_EQ(buf[v + 5], 1);			/* 257 */
	UNIT_CHECK_EQ(sl[10], 3 + 1 + 4 + 1 + 1 + 1 + 1 + 5);
	/* The same events in format 6 are not a format-7 body. */
	UNIT_CHECK(rec_log_encode_v(ev, n, NULL, 6, &six, &sixlen, &err) == 0);
	UNIT_CHECK(rec_log_decode(six, sixlen, 7, n, &log, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "body+", 5));
	free(err);
	err = NULL;
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	UNIT_CHECK(rec_log_encode_v(ev, n, NULL, 5, &six, &sixlen, &err) != 0);
	free(err);
	free(six);
	free(buf);
}

/*
 * Format 8: a clock delta goes to RS_CLOCK/RS_CLKHI (streams 6 and 10)
 * when the last other event was a segment (RX, NET; and at the start),
 * to streams 15 and 16 after a LOCK, to 17 and 18 after anything else;
 * runs and further clock values keep the pair. Read as format 7, the
 * body is an error.
 */
static void test_format8(void)
{
	struct rec_ev ev[] = {
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 1000 },	/* start: 6 */
		{ .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },		/* a run */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 2000 },	/* 15 */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 300000 },	/* 15 */
		{ .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 200 },
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 4500 },	/* 17: ns */
		{ .type = DETER_EV_RX, .a = 7, .c = 1 },
		{ .type = DETER_EV_RX, .a = 8, .c = 1 },			/* a run */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 5000 },	/* 6 */
		{ .type = DETER_EV_VALUE, .sub = DETER_V_JIFFIES, .a = 1 },
		{ .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK, .a = 6000 },	/* 17 */
	};
	enum { n = ARRAY_SIZE(ev) };
	static const uint64_t want[19] = {
		[6] = 2, [10] = 2, [15] = 2, [16] = 2, [17] = 2, [18] = 4,
	};
	struct rec_log log = { 0 };
	uint64_t sl[19];
	char *err = NULL;
	size_t len, i, at, used;
	uint8_t *buf;

	for (i = 0; i < n; i++)
		ev[i].seq = i + 1;
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	for (i = 0, at = 0; i < 19; i++) {
		UNIT_CHECK(rec_varint_get(buf + at, len - at, &sl[i], &used) == 0);
		at += used;
	}
	for (i = 0; i < 19; i++)
		if (want[i] || i >= 15)
			UNIT_CHECK_EQ(sl[i], want[i]);
	UNIT_CHECK(rec_log_decode(buf, len, 8, n, &log, &err) == 0);
	UNIT_CHECK_EQ(log.nevs, n);
	for (i = 0; i < log.nevs && i < n; i++) {
		UNIT_CHECK_EQ(log.evs[i].type, ev[i].type);
		UNIT_CHECK_EQ(log.evs[i].a, ev[i].a);
	}
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	UNIT_CHECK(rec_log_decode(buf, len, 7, n, &log, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "body+", 5));
	free(err);
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
	UNIT_CHECK(rec_log_decode(*buf, *len, DETER_ABI_VERSION, n, &log, &err) == 0);
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
 * Decoding @buf (@n events) as format @version must fail, naming an
 * offset in the body and saying @want.
 */
static void check_refused(const uint8_t *buf, size_t len, unsigned int version, size_t n,
			  const char *want)
{
	struct rec_log log = { 0 };
	char *err = NULL;

	UNIT_CHECK(rec_log_decode(buf, len, version, n, &log, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "body+", 5) && strstr(err, want));
	free(err);
	free(log.evs);
	free(log.states);
}

/*
 * Format 11: an RX CTL (the peer's time-wait answer) keeps its TS value
 * in c and leaves the IP ID series where it was: the segment after it
 * is expected at the same index, and the log says so back exactly. A
 * format 10 log has no CTL bit: refused, naming the offset.
 */
static void test_rx_ctl(void)
{
	struct rec_ev ev[] = {
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
	check_refused(buf, len, 10, n, ": unknown rx flags 0x10");
	free(buf);
}

/*
 * A spliced send's pages (format 12) round-trip in its CALL_DONE, other
 * returns cost nothing more; format 11 drops them. Pages on a return
 * that is no send's cannot be encoded; unknown bits are refused.
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
	struct rec_log log = { 0 };
	size_t len, len11, i;
	uint8_t *buf, *b11;
	char *err = NULL;

	check_roundtrip(ev, n, &buf, &len);
	UNIT_CHECK(rec_log_encode_v(ev, n, NULL, 11, &b11, &len11, &err) == 0);
	/* Three pages' varints of 3 bytes each, nothing else. */
	UNIT_CHECK_EQ(len, len11 + 9);
	UNIT_CHECK(rec_log_decode(b11, len11, 11, n, &log, &err) == 0);
	for (i = 0; i < log.nevs && i < n; i++)
		UNIT_CHECK_EQ(log.evs[i].b, ev[i].type == DETER_EV_CALL ? ev[i].b : 0);
	free(log.evs);
	free(log.states);
	free(b11);
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
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, n, &log, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "body+", 5) &&
		   strstr(err, ": bad bits 0x90000 on a send's return"));
	free(err);
	free(log.evs);
	free(log.states);
	free(buf);
}

/*
 * Format 13: what a send put on the error queue round-trips in its
 * return, alone or with its pages, and the error queue's reads are
 * calls; format 12 has neither.
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
	/* As format 12 has it: the bits and the call are unknown. */
	check_refused(buf, len, 12, n, ": bad bits 0x100000 on a send's return");
	free(buf);
	ev[1].b = 0;
	ev[3].b = DETER_SPLICE_KNOWN | 100;
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	check_refused(buf, len, 12, n, ": unknown socket call 6");
	free(buf);
}

/*
 * A splice read's pipe room and socket mode (format 14) come back; a
 * format 13 log with them, or a format 14 one with unknown bits, is
 * refused naming the flags.
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
	check_refused(buf, len, 13, n, ": bad flags 0x3100 on a splice read");
	free(buf);
	ev[0].b = (uint64_t)0x200 << 32 | 7;	/* bits 9-11: none */
	UNIT_CHECK(rec_log_encode(ev, n, NULL, &buf, &len, &err) == 0);
	check_refused(buf, len, DETER_ABI_VERSION, n, ": bad flags 0x200 on a splice read");
	free(buf);
}

/* CONFIG CC and TCP: names and values back; an unknown option is refused. */
static void test_tcpopt(void)
{
	struct rec_ev ev[3] = {
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_CC,
		  .a = 'h' | 'i' << 8 | (uint64_t)'g' << 16 | (uint64_t)'h' << 24 |
		       (uint64_t)'s' << 32 | (uint64_t)'p' << 40 | (uint64_t)'e' << 48 |
		       (uint64_t)'e' << 56 },
		{ .seq = 2, .type = DETER_EV_CONFIG, .sub = DETER_CFG_TCP,
		  .a = DETER_TCPOPT_PACK(DETER_TCPOPT_LINGER2, (uint32_t)-1) },
		{ .seq = 3, .type = DETER_EV_CONFIG, .sub = DETER_CFG_TCP,
		  .a = DETER_TCPOPT_PACK(DETER_TCPOPT_MAX_PACING_RATE, DETER_TCPOPT_RATE_MAX) },
	};
	char name[DETER_CC_BYTES + 1];
	struct rec_log log = { 0 };
	char *err = NULL;
	uint8_t *buf;
	size_t len;

	UNIT_CHECK(rec_log_encode(ev, 3, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 3, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 3);
	if (log.nevs == 3) {
		rec_cc_name(log.evs[0].a, name);
		UNIT_CHECK(!strcmp(name, "highspee"));
		UNIT_CHECK(rec_tcpopt_value(log.evs[1].a) == -1);
		UNIT_CHECK(!strcmp(rec_tcpopts[DETER_TCPOPT_ID(log.evs[1].a)], "linger2_s"));
		UNIT_CHECK((uint64_t)rec_tcpopt_value(log.evs[2].a) == UINT64_MAX);
	}
	rec_cc_name('r' | 'e' << 8 | 'n' << 16 | 'o' << 24, name);
	UNIT_CHECK(!strcmp(name, "reno"));
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].a = DETER_TCPOPT_PACK(DETER_TCPOPT_MAX, 1);
	UNIT_CHECK(rec_log_encode(ev, 3, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, DETER_ABI_VERSION, 3, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown TCP option"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
}

/*
 * A passive end whose handshake values were lost (DETER_V_MISSING) is
 * whole and closed, yet its log is incomplete, and says why; so is one
 * whose calls went through a layer above TCP (MISSING CALLS).
 */
static void check_missing(uint64_t why, uint32_t status, const char *str)
{
	char dir[] = "/tmp/rec_log_test.XXXXXX", path[64], st[64], line[64], *err = NULL;
	struct rec_conn_id id = { .seq = 1, .sport = 5201, .dport = 40000 };
	struct rec_ev ev = {
		.seq = 2, .type = DETER_EV_VALUE, .sub = DETER_V_MISSING, .a = why,
	};
	struct rec_state fin = { { 0 } };
	struct rec_table *t;
	unsigned int w, inc, open;
	struct rec_log *log;

	UNIT_CHECK(mkdtemp(dir));
	t = rec_table_new(dir, "h");
	UNIT_CHECK(t);
	UNIT_CHECK(rec_table_conn(t, 7, 1, &id) == 0);
	UNIT_CHECK(rec_table_events(t, 7, 2, &ev, 1) == 0);
	UNIT_CHECK(rec_table_state(t, 7, 3, 3, 1, &fin) == 0);
	rec_table_flush(t, 0, 0);
	rec_table_counts(t, &w, &inc, &open);
	UNIT_CHECK_EQ(w, 1);
	UNIT_CHECK_EQ(inc, !!(status & DETER_LOG_INCOMPLETE));
	UNIT_CHECK_EQ(rec_table_settings_changed(t), !!(status & DETER_LOG_SETTINGS_CHANGED));
	UNIT_CHECK_EQ(open, 0);
	/* deter record's closing line: " (1 missing-values)", or nothing. */
	rec_table_incomplete_why(t, line, sizeof(line));
	if (inc)
		snprintf(st, sizeof(st), " (1 %s)", strchr(str, ',') + 1);
	else
		st[0] = '\0';
	UNIT_CHECK(!strcmp(line, st));
	rec_table_free(t);
	snprintf(path, sizeof(path), "%s/%016x.dlog", dir, 7);
	log = rec_log_read(path, &err);
	UNIT_CHECK(log);
	if (log) {
		UNIT_CHECK_EQ(log->hdr.status, status);
		rec_log_status_str(log->hdr.status, st, sizeof(st));
		UNIT_CHECK(!strcmp(st, str));
	}
	rec_log_free(log);
	unlink(path);
	rmdir(dir);
}

static void test_missing(void)
{
	check_missing(DETER_MISSING_HANDSHAKE, DETER_LOG_MISSING_VALUES,
		      "incomplete,missing-values");
	check_missing(DETER_MISSING_CALLS, DETER_LOG_UNSEEN_CALLS, "incomplete,unseen-calls");
	check_missing(DETER_MISSING_FASTOPEN, DETER_LOG_MISSING_VALUES,
		      "incomplete,missing-values");
	/* Not incomplete: the log has every event, and the change. */
	check_missing(DETER_MISSING_SETTINGS, DETER_LOG_SETTINGS_CHANGED,
		      "complete,settings-changed");
}

#define SC(id, v) { .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL, \
		    .a = (uint64_t)(id) << 32 | (uint32_t)(v) }
#define MISSING_SETTINGS { .type = DETER_EV_VALUE, .sub = DETER_V_MISSING, \
			   .a = DETER_MISSING_SETTINGS }

/*
 * What a MISSING SETTINGS says changed: the settings logged after it
 * against those before it, since the start or the previous one; one
 * absent from either set is at its default (a module parameter's is
 * known).
 */
static void test_settings_changed(void)
{
	struct rec_ev ev[] = {
		SC(DETER_SYSCTL_TCP_WMEM2, 65536), SC(DETER_SYSCTL_TCP_ECN, 1),
		SC(DETER_SYSCTL_CUBIC_BETA, 512),
		{ .type = DETER_EV_LOCK },
		MISSING_SETTINGS,			/* 4 */
		SC(DETER_SYSCTL_TCP_WMEM2, 4194304), SC(DETER_SYSCTL_TCP_ECN, 1),
		{ .type = DETER_EV_SAMPLE },
		SC(DETER_SYSCTL_CUBIC_BETA, 512), SC(DETER_SYSCTL_ROUTE_RTO_MIN, 5),
		SC(DETER_SYSCTL_VEGAS_ALPHA, 3),
		MISSING_SETTINGS,			/* 11 */
		SC(DETER_SYSCTL_TCP_WMEM2, 4194304), SC(DETER_SYSCTL_TCP_ECN, 1),
		SC(DETER_SYSCTL_ROUTE_RTO_MIN, 5),
		MISSING_SETTINGS,			/* 15 */
		SC(DETER_SYSCTL_TCP_WMEM2, 4194304), SC(DETER_SYSCTL_TCP_ECN, 1),
		SC(DETER_SYSCTL_ROUTE_RTO_MIN, 5),
	};
	struct rec_log log = { .evs = ev, .nevs = ARRAY_SIZE(ev) };
	const char *first = "net.ipv4.tcp_wmem[2] 65536 -> 4194304, route.rto_min default -> 5";
	char buf[256], small[24];

	/* cubic, and dctcp set later (TCP_CONGESTION) */
	memcpy(log.hdr.cc, "cubic", 6);
	ev[3] = (struct rec_ev){ .type = DETER_EV_CONFIG, .sub = DETER_CFG_CC,
				 .a = 0x7063746364ULL };	/* "dctcp" */

	rec_settings_changed(&log, 4, buf, sizeof(buf));
	UNIT_CHECK(!strcmp(buf, first));
	/* Not tcp_vegas's alpha: neither cubic nor dctcp reads it. */
	rec_settings_changed(&log, 11, buf, sizeof(buf));
	UNIT_CHECK(!strcmp(buf, "tcp_cubic.beta 512 -> 717"));
	/* Changed and back before deter.ko logged them again. */
	rec_settings_changed(&log, 15, buf, sizeof(buf));
	UNIT_CHECK(!strcmp(buf, ""));
	/* Cut short, never past the buffer. */
	rec_settings_changed(&log, 4, small, sizeof(small));
	UNIT_CHECK_EQ(strlen(small), sizeof(small) - 1);
}

#undef SC
#undef MISSING_SETTINGS

/*
 * Events handed to the table out of order, a few places (the insertion
 * sort) and far (qsort), are written in sequence; a connection not yet
 * whole is not written.
 */
static void test_order(void)
{
	char dir[] = "/tmp/rec_log_test.XXXXXX", path[64], *err = NULL;
	struct rec_conn_id id = { .seq = 1, .sport = 5201, .dport = 40000 };
	struct rec_state fin = { { 0 } };
	unsigned int w, inc, open, far;
	enum { n = 600 };		/* seq 2 .. n + 1 */
	uint32_t seq[n];
	struct rec_table *t;
	struct rec_log *log;
	size_t i;

	UNIT_CHECK(mkdtemp(dir));
	for (far = 0; far < 2; far++) {
		/* pairs swapped; with far, seq 10 moved to the end */
		for (i = 0; i < n; i++)
			seq[i] = 2 + (i ^ 1);
		if (far) {
			memmove(&seq[9], &seq[10], (n - 10) * sizeof(seq[0]));
			seq[n - 1] = 10;
		}
		t = rec_table_new(dir, "h");
		UNIT_CHECK(t);
		UNIT_CHECK(rec_table_conn(t, 7, 1, &id) == 0);
		for (i = 0; i < n; i++) {
			struct rec_ev ev = {
				.seq = seq[i], .type = DETER_EV_CONFIG,
				.sub = DETER_CFG_SNDBUF, .a = seq[i],
			};

			UNIT_CHECK(rec_table_events(t, 7, 2, &ev, 1) == 0);
			if (i == n / 2) {
				rec_table_flush(t, 0, 0);
				rec_table_counts(t, &w, &inc, &open);
				UNIT_CHECK_EQ(w, 0);
			}
		}
		UNIT_CHECK(rec_table_state(t, 7, 3, n + 2, 1, &fin) == 0);
		rec_table_flush(t, 0, 0);
		rec_table_counts(t, &w, &inc, &open);
		UNIT_CHECK_EQ(w, 1);
		UNIT_CHECK_EQ(inc, 0);
		rec_table_free(t);
		snprintf(path, sizeof(path), "%s/%016x.dlog", dir, 7);
		log = rec_log_read(path, &err);
		UNIT_CHECK(log);
		if (log) {
			UNIT_CHECK_EQ(log->nevs, n + 1);
			for (i = 0; i < n && i < log->nevs; i++)
				UNIT_CHECK_EQ(log->evs[i].a, i + 2);
		}
		rec_log_free(log);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * Format 9: a connection written as it goes (rec_log_writer_add() in
 * batches) becomes several chunks, each its own zstd frame, with the
 * compressed frames spilled to DIR/.ID.dlog.part on the way; the log
 * decodes to exactly the events added, as a one-chunk body of the same
 * events does; deter compact makes it one chunk again, same events. A
 * chunk cut short is an error naming its offset.
 */
#define CHUNK_BATCHES 12

static struct rec_ev all_evs[CHUNK_BATCHES * NEV];
static struct rec_state all_states[CHUNK_BATCHES * NEV];

static void test_chunks(void)
{
	char dir[] = "/tmp/rec_log_test.XXXXXX", *path = NULL, *one = NULL, *err = NULL;
	char dir2[] = "/tmp/rec_log_test.XXXXXX", *rpath = NULL, rpart[128];
	struct deter_log_header rh;
	int copied = 0;
	struct deter_log_header h = { .conn = 0xc4c4 }, h1 = { .conn = 0xc4c5 };
	struct rec_log_writer *w = rec_log_writer_new();
	struct rec_log *log, *log1;
	size_t n, ns, total = 0, nstates = 0, i, j, before, after;
	char part[64];
	uint32_t base = 0;
	int k, frames = 0, spilled = 0;
	FILE *f;

	UNIT_CHECK(mkdtemp(dir) && mkdtemp(dir2) && w);
	snprintf(part, sizeof(part), "%s/.%016llx.dlog.part", dir, 0xc4c4ULL);
	for (k = 0; k < CHUNK_BATCHES; k++) {
		n = make_events(evs, states, &ns);
		for (i = 0; i < n; i++) {
			struct rec_ev *e = &all_evs[total + i];

			evs[i].seq += base;
			*e = evs[i];
			if (e->type == DETER_EV_STATE) {
				all_states[nstates + e->a] = states[e->a];
				e->a += nstates;
			}
		}
		UNIT_CHECK(rec_log_writer_add(w, dir, &h, evs, n, states, &err) == 0);
		spilled |= !access(part, F_OK);
		/* Halfway, the recorder is killed: a copy of its part file. */
		if (k == CHUNK_BATCHES / 2 && spilled) {
			char cmd[256];

			snprintf(cmd, sizeof(cmd),
				 "cp %s %s/ && printf 'a frame cut short' >> %s/%s", part,
				 dir2, dir2, strrchr(part, '/') + 1);
			UNIT_CHECK(system(cmd) == 0);
			copied = 1;
		}
		base = evs[n - 1].seq + 1;
		total += n;
		nstates += ns;
	}
	UNIT_CHECK(spilled);
	UNIT_CHECK(rec_log_writer_finish(w, dir, &h, &path, &err) == 0);
	rec_log_writer_free(w);
	UNIT_CHECK(access(part, F_OK) != 0);	/* the log took it in */
	UNIT_CHECK(rec_log_write(dir, &h1, all_evs, total, all_states, &one, &err) == 0);

	log = rec_log_read(path, &err);
	log1 = rec_log_read(one, &err);
	UNIT_CHECK(log && log1);
	if (!log || !log1)
		return;
	UNIT_CHECK_EQ(log->hdr.version, DETER_ABI_VERSION);
	UNIT_CHECK_EQ(log->nevs, total);
	UNIT_CHECK_EQ(log1->nevs, total);
	for (i = 0; i < total && i < log->nevs && i < log1->nevs; i++) {
		const struct rec_ev *e = &log->evs[i], *x = &all_evs[i];

		if (e->seq != x->seq || e->type != x->type || e->sub != x->sub ||
		    (x->type != DETER_EV_STATE && (e->a != x->a || e->b != x->b ||
						   e->c != x->c)) ||
		    memcmp(e, &log1->evs[i], sizeof(*e))) {
			UNIT_CHECK_EQ(i, total);	/* the first that differs */
			break;
		}
		if (x->type == DETER_EV_STATE)
			for (j = 0; j < DETER_ST_MAX; j++)
				UNIT_CHECK_EQ(log->states[e->a].v[j], all_states[x->a].v[j]);
	}
	/* Several frames, as the one-chunk body is one. */
	{
		static uint8_t buf[1 << 20];
		size_t at = 0, flen;

		f = fopen(path, "rb");
		UNIT_CHECK(f && fseek(f, sizeof(h), SEEK_SET) == 0);
		while (f && at < log->hdr.body_len && frames < 1000) {
			UNIT_CHECK(fseek(f, sizeof(h) + at, SEEK_SET) == 0);
			flen = fread(buf, 1, sizeof(buf), f);
			flen = ZSTD_findFrameCompressedSize(buf, flen);
			UNIT_CHECK(!ZSTD_isError(flen));
			if (ZSTD_isError(flen))
				break;
			at += flen;
			frames++;
		}
		if (f)
			fclose(f);
	}
	UNIT_CHECK(frames > 2);
	UNIT_CHECK_EQ(log->nchunks, frames);
	UNIT_CHECK_EQ(log->stat_index > log1->stat_index, 1);

	/* deter compact: one chunk, the same events. */
	UNIT_CHECK(rec_log_compact(path, 19, &before, &after, &err) == 0);
	UNIT_CHECK(after < before);
	rec_log_free(log);
	log = rec_log_read(path, &err);
	UNIT_CHECK(log && log->nevs == total && log->hdr.body_raw_len == log1->hdr.body_raw_len);
	for (i = 0; log && i < total && i < log->nevs; i++)
		if (memcmp(&log->evs[i], &log1->evs[i], sizeof(log->evs[i]))) {
			UNIT_CHECK_EQ(i, total);
			break;
		}
	rec_log_free(log);

	/* The second chunk's stream lengths overrun: named with its offset. */
	{
		struct rec_log_enc *enc = rec_log_enc_new(9);
		uint8_t *c1, *c2, *body;
		size_t l1, l2;
		struct rec_log dl = { 0 };

		UNIT_CHECK(rec_log_enc_add(enc, all_evs, 100, all_states, &err) == 0);
		UNIT_CHECK(rec_log_enc_chunk(enc, &c1, &l1, &err) == 0);
		UNIT_CHECK(rec_log_enc_add(enc, all_evs + 100, 100, all_states, &err) == 0);
		UNIT_CHECK(rec_log_enc_chunk(enc, &c2, &l2, &err) == 0);
		body = malloc(l1 + l2);
		memcpy(body, c1, l1);
		memcpy(body + l1, c2, l2);
		UNIT_CHECK(rec_log_decode(body, l1 + l2, 9, 200, &dl, &err) == 0);
		UNIT_CHECK_EQ(dl.nevs, 200);
		free(dl.evs);
		free(dl.states);
		memset(&dl, 0, sizeof(dl));
		UNIT_CHECK(rec_log_decode(body, l1 + l2 - 1, 9, 200, &dl, &err) != 0);
		UNIT_CHECK(err && strstr(err, "overruns the body"));
		free(err);
		err = NULL;
		/* Format 8 has one chunk: what follows it is an error. */
		UNIT_CHECK(rec_log_decode(body, l1 + l2, 8, 200, &dl, &err) != 0);
		UNIT_CHECK(err && strstr(err, "after the last stream"));
		free(err);
		free(dl.evs);
		free(dl.states);
		free(body);
		free(c1);
		free(c2);
		rec_log_enc_free(enc);
	}
	/* The killed recorder's part file: a log of what it had spilled. */
	UNIT_CHECK(copied);
	snprintf(rpart, sizeof(rpart), "%s/%s", dir2, strrchr(part, '/') + 1);
	UNIT_CHECK(rec_log_recover(rpart, &rpath, &rh, &err) == 0);
	UNIT_CHECK(rpath && access(rpart, F_OK) != 0);
	log = rpath ? rec_log_read(rpath, &err) : NULL;
	UNIT_CHECK(log && log->nevs > 0 && log->nevs < total);
	UNIT_CHECK(log && !memcmp(&rh, &log->hdr, sizeof(rh)));
	UNIT_CHECK(log && log->hdr.status == DETER_LOG_NOT_CLOSED && log->hdr.conn == h.conn);
	for (i = 0; log && i < log->nevs; i++)
		if (memcmp(&log->evs[i], &log1->evs[i], sizeof(log->evs[i])) &&
		    log->evs[i].type != DETER_EV_STATE) {
			UNIT_CHECK_EQ(i, log->nevs);
			break;
		}
	rec_log_free(log);
	if (rpath)
		unlink(rpath);
	free(rpath);
	rmdir(dir2);

	rec_log_free(log1);
	unlink(path);
	unlink(one);
	free(path);
	free(one);
	rmdir(dir);
}

/*
 * The table encodes a connection as its events come (rec_conn_encode()),
 * here in chunks of 4 events, 64-byte chunks and 128-byte spills: events
 * and checkpoints handed over out of order, and one held back long after
 * the rest (a hole the table waits for), make a complete log with every
 * event, and every checkpoint's values, in sequence; held back too long,
 * that one is lost, and only it, and the log is marked incomplete.
 */
static void table_stream(unsigned int late_at, uint32_t want_status)
{
	char dir[] = "/tmp/rec_log_test.XXXXXX", path[64], ipath[64], *err = NULL;
	struct rec_conn_id id = { .seq = 1, .sport = 5201, .dport = 40000 };
	size_t chunk = rec_conn_chunk_events, cb = rec_log_chunk_bytes;
	size_t sp = rec_log_spill_bytes, i, j, k;
	enum { N = 400, LATE = 50 };
	size_t lost = want_status ? 1 : 0;
	uint32_t order[N];
	struct rec_table *t;
	struct rec_log *log;
	struct rec_state st;

	rec_conn_chunk_events = 4;
	rec_log_chunk_bytes = 64;
	rec_log_spill_bytes = 128;
	UNIT_CHECK(mkdtemp(dir));
	t = rec_table_new(dir, "h");
	UNIT_CHECK(t && rec_table_conn(t, 7, 1, &id) == 0);
	/* Sequence numbers 2 .. N + 1, reversed in windows of 8, LATE's last. */
	for (i = 0, k = 0; i < N; i += 8)
		for (j = i + 8 > N ? N : i + 8; j-- > i;) {
			if (j + 2 != LATE)
				order[k++] = j + 2;
			if (k == late_at)
				order[k++] = LATE;
		}
	for (i = 0; i < N; i++) {
		uint32_t seq = order[i];

		if (seq % 3 == 0) {	/* a checkpoint */
			for (j = 0; j < DETER_ST_MAX; j++)
				st.v[j] = seq * 1000 + j;
			UNIT_CHECK(rec_table_state(t, 7, 2 + i, seq, 0, &st) == 0);
		} else {
			struct rec_ev ev = {
				.seq = seq, .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK,
				.a = (uint64_t)(seq * 7919 % 1000) * 1000,
			};

			UNIT_CHECK(rec_table_events(t, 7, 2 + i, &ev, 1) == 0);
		}
	}
	memset(&st, 0, sizeof(st));
	UNIT_CHECK(rec_table_state(t, 7, N + 2, N + 2, 1, &st) == 0);
	rec_table_flush(t, 0, 0);
	rec_table_free(t);
	snprintf(path, sizeof(path), "%s/%016x.dlog", dir, 7);
	log = rec_log_read(path, &err);
	UNIT_CHECK(log);
	if (log) {
		UNIT_CHECK_EQ(log->hdr.status, want_status);
		UNIT_CHECK_EQ(log->nevs, N + 1 - lost);
		UNIT_CHECK(log->nchunks > 10);
		for (i = 0; i < log->nevs; i++) {
			const struct rec_ev *e = &log->evs[i];
			uint32_t want = i + 2 + (lost && i + 2 >= LATE);

			UNIT_CHECK_EQ(e->seq, want);
			if (e->seq != want)
				break;
			if (e->type == DETER_EV_STATE && !e->sub)
				UNIT_CHECK_EQ(log->states[e->a].v[3], e->seq * 1000 + 3);
			else if (e->type != DETER_EV_STATE)
				UNIT_CHECK_EQ(e->a, (uint64_t)(e->seq * 7919 % 1000) * 1000);
		}
	}
	rec_log_free(log);
	unlink(path);
	snprintf(ipath, sizeof(ipath), "%s/index", dir);
	unlink(ipath);
	UNIT_CHECK(rmdir(dir) == 0);	/* no part file left */
	rec_conn_chunk_events = chunk;
	rec_log_chunk_bytes = cb;
	rec_log_spill_bytes = sp;
}

/*
 * Checkpoints 12 and 11 arrive in that order and are still waiting when
 * 2..5 are encoded: each keeps its own values.
 */
static void table_states_reversed(void)
{
	char dir[] = "/tmp/rec_log_test.XXXXXX", path[64], ipath[64], *err = NULL;
	static const uint32_t order[] = { 2, 3, 4, 12, 11, 5, 6, 7, 8, 9, 10 };
	struct rec_conn_id id = { .seq = 1 };
	size_t chunk = rec_conn_chunk_events, i, j;
	struct rec_table *t;
	struct rec_log *log;
	struct rec_state st;

	rec_conn_chunk_events = 4;
	UNIT_CHECK(mkdtemp(dir));
	t = rec_table_new(dir, "h");
	UNIT_CHECK(t && rec_table_conn(t, 7, 1, &id) == 0);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		struct rec_ev ev = { .seq = order[i], .type = DETER_EV_LOCK };

		for (j = 0; j < DETER_ST_MAX; j++)
			st.v[j] = order[i] * 100 + j;
		if (order[i] >= 11)
			UNIT_CHECK(rec_table_state(t, 7, 2 + i, order[i], 0, &st) == 0);
		else
			UNIT_CHECK(rec_table_events(t, 7, 2 + i, &ev, 1) == 0);
	}
	UNIT_CHECK(rec_table_state(t, 7, 20, 13, 1, &st) == 0);
	rec_table_flush(t, 0, 0);
	rec_table_free(t);
	snprintf(path, sizeof(path), "%s/%016x.dlog", dir, 7);
	log = rec_log_read(path, &err);
	UNIT_CHECK(log && log->nevs == 12 && log->hdr.status == 0);
	for (i = 0; log && i < log->nevs; i++)
		if (log->evs[i].type == DETER_EV_STATE && !log->evs[i].sub)
			UNIT_CHECK_EQ(log->states[log->evs[i].a].v[0], log->evs[i].seq * 100);
	rec_log_free(log);
	unlink(path);
	snprintf(ipath, sizeof(ipath), "%s/index", dir);
	unlink(ipath);
	rmdir(dir);
	rec_conn_chunk_events = chunk;
}

/*
 * Connections 7 and 8 stream 2..99 in 4-event chunks and 16-byte spills.
 * @cut_events / @cut_raw: what one log holds (0: the default); @break_at:
 * after that many events, 8's part file is replaced by a directory.
 */
static struct rec_table *table_two(const char *dir, size_t cut_events,
				   uint64_t cut_raw, size_t break_at)
{
	size_t max_evs = rec_log_max_events, i;
	uint64_t raw = rec_log_max_raw;
	struct rec_conn_id id = { .seq = 1 };
	struct rec_state st = { { 0 } };
	struct rec_table *t;
	char part[96];
	uint64_t conn;

	if (cut_events)
		rec_log_max_events = cut_events;
	if (cut_raw)
		rec_log_max_raw = cut_raw;
	t = rec_table_new(dir, "h");
	for (conn = 7; conn <= 8; conn++)
		UNIT_CHECK(t && rec_table_conn(t, conn, 1, &id) == 0);
	for (i = 2; t && i < 100; i++) {
		for (conn = 7; conn <= 8; conn++) {
			struct rec_ev ev = {
				.seq = i, .type = DETER_EV_VALUE, .sub = DETER_V_CLOCK,
				.a = i * 1000,
			};

			UNIT_CHECK(rec_table_events(t, conn, i, &ev, 1) == 0);
		}
		if (i == break_at) {
			snprintf(part, sizeof(part), "%s/.%016x.dlog.part", dir, 8);
			UNIT_CHECK(unlink(part) == 0 && mkdir(part, 0700) == 0);
		}
	}
	for (conn = 7; t && conn <= 8; conn++)
		UNIT_CHECK(rec_table_state(t, conn, 100 + conn, 100, 1, &st) == 0);
	rec_log_max_events = max_evs;
	rec_log_max_raw = raw;
	return t;
}

/* Read DIR/ID.dlog: events 2.. in sequence, each its own clock value. */
static struct rec_log *table_two_log(const char *dir, uint64_t conn)
{
	char *err = NULL, path[96];
	struct rec_log *log;
	size_t i;

	snprintf(path, sizeof(path), "%s/%016llx.dlog", dir, (unsigned long long)conn);
	log = rec_log_read(path, &err);
	UNIT_CHECK(log);
	free(err);
	for (i = 0; log && i < log->nevs; i++) {
		if (log->evs[i].type == DETER_EV_STATE)
			continue;
		UNIT_CHECK_EQ(log->evs[i].seq, i + 2);
		UNIT_CHECK_EQ(log->evs[i].a, (i + 2) * 1000);
	}
	unlink(path);
	return log;
}

static void table_two_end(const char *dir)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/.%016x.dlog.part", dir, 8);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/index", dir);
	unlink(path);
	UNIT_CHECK(rmdir(dir) == 0);
}

/*
 * A connection past what a log holds (events, or bytes) ends its log
 * there: a log marked cut, its events a whole prefix. One whose part file
 * cannot be written to (here: replaced by a directory), mid-connection or
 * at its end, is said and counted, and the other connection's log is
 * written all the same.
 */
static void table_limits(void)
{
	char dir[] = "/tmp/rec_log_test.XXXXXX";
	size_t chunk = rec_conn_chunk_events, cb = rec_log_chunk_bytes;
	size_t sp = rec_log_spill_bytes;
	struct rec_table *t;
	struct rec_log *log;
	int k;

	rec_conn_chunk_events = 4;
	rec_log_chunk_bytes = 16;
	rec_log_spill_bytes = 16;
	for (k = 0; k < 2; k++) {
		UNIT_CHECK(mkdtemp(memcpy(dir, "/tmp/rec_log_test.XXXXXX", sizeof(dir))));
		t = k ? table_two(dir, 0, 1000, 0) : table_two(dir, 40, 0, 0);
		rec_table_flush(t, 0, 0);
		UNIT_CHECK_EQ(rec_table_unwritten(t), 0);
		rec_table_free(t);
		log = table_two_log(dir, 7);
		UNIT_CHECK(log && log->hdr.status == DETER_LOG_CUT);
		UNIT_CHECK(log && log->nevs > (k ? 10 : 30) && log->nevs <= (k ? 90 : 40));
		UNIT_CHECK(log && log->hdr.body_raw_len <= (k ? 1000 : UINT32_MAX));
		UNIT_CHECK(log && log->hdr.nevents == log->nevs);
		rec_log_free(log);
		rec_log_free(table_two_log(dir, 8));
		table_two_end(dir);
	}

	/* Mid-connection (after 30 events), and at the end (after the last). */
	for (k = 0; k < 2; k++) {
		UNIT_CHECK(mkdtemp(memcpy(dir, "/tmp/rec_log_test.XXXXXX", sizeof(dir))));
		t = table_two(dir, 0, 0, k ? 99 : 30);
		rec_table_flush(t, 0, 0);
		UNIT_CHECK_EQ(rec_table_unwritten(t), 1);
		rec_table_free(t);
		log = table_two_log(dir, 7);
		UNIT_CHECK(log && log->hdr.status == 0 && log->nevs == 99);
		rec_log_free(log);
		table_two_end(dir);
	}

	rec_conn_chunk_events = chunk;
	rec_log_chunk_bytes = cb;
	rec_log_spill_bytes = sp;
}

static void test_table_stream(void)
{
	table_limits();
	table_states_reversed();
	/* Seq 50 comes 200 events late: within the 256 a hole may hold. */
	table_stream(250, 0);
	/* It comes last: given up for lost, only it; the log says so. */
	table_stream(400, DETER_LOG_LOST_EVENTS);
}

int main(void)
{
	UNIT_RUN(test_roundtrip);
	UNIT_RUN(test_runs);
	UNIT_RUN(test_corrupt);
	UNIT_RUN(test_files);
	UNIT_RUN(test_missing);
	UNIT_RUN(test_settings_changed);
	UNIT_RUN(test_sysctl);
	UNIT_RUN(test_param_parse);
	UNIT_RUN(test_format5);
	UNIT_RUN(test_format6);
	UNIT_RUN(test_format7);
	UNIT_RUN(test_format8);
	UNIT_RUN(test_rx_ctl);
	UNIT_RUN(test_splice_pages);
	UNIT_RUN(test_send_errqueue);
	UNIT_RUN(test_splice_read_room);
	UNIT_RUN(test_chunks);
	UNIT_RUN(test_table_stream);
	UNIT_RUN(test_tcpopt);
	UNIT_RUN(test_order);
	return unit_done();
}
