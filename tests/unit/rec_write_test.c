// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for writing and reading log files (log/rec_write.c,
 * log/rec_read.c, log/rec_rewrite.c, recorder/rec_conn.c): a log of
 * another format is refused with file and offset; a connection written as
 * it goes becomes chunks spilled to a part file, which a killed
 * recorder's recovery turns into a log and deter compact into one chunk;
 * the connection table writes events in sequence, waits for holes, cuts a
 * log at its limits, and marks a log incomplete when its events say
 * values were not recorded.
 */
#include "rec_log.h"
#include "rec_codec.h"
#include "rec_conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "unit.h"
#include "rec_events.h"

static struct rec_ev evs[NEV];
static struct rec_state states[NEV];

static void test_files(void)
{
	char dir[] = "/tmp/rec_write_test.XXXXXX", *path = NULL, *err = NULL, want[64];
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

	/* Another format: refused, with the offset of the field. */
	f = fopen(path, "r+");
	fseek(f, 8, SEEK_SET);
	fputc(DETER_ABI_VERSION + 1, f);
	fclose(f);
	UNIT_CHECK(!rec_log_read(path, &err));
	snprintf(want, sizeof(want), ".dlog:8: log format %d is not supported",
		 DETER_ABI_VERSION + 1);
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

/*
 * A log of any other format is refused whole, header or log, in one line
 * naming the file, the offset of the field, its format and this deter's.
 */
static void test_version(void)
{
	static const unsigned int others[] = { 0, 2, DETER_ABI_VERSION - 1,
					       DETER_ABI_VERSION + 1, 255 };
	char dir[] = "/tmp/rec_write_test.XXXXXX", *path = NULL, *err = NULL, want[256];
	struct deter_log_header h = { .conn = 0x1234 };
	struct rec_ev ev = { .seq = 1, .type = DETER_EV_LOCK };
	struct rec_log *log;
	size_t i;
	FILE *f;

	UNIT_CHECK(mkdtemp(dir));
	UNIT_CHECK(rec_log_write(dir, &h, &ev, 1, NULL, &path, &err) == 0);
	if (!path)
		return;
	for (i = 0; i < ARRAY_SIZE(others); i++) {
		f = fopen(path, "r+");
		UNIT_CHECK(f && fseek(f, 8, SEEK_SET) == 0 && fputc(others[i], f) >= 0);
		if (f)
			fclose(f);
		snprintf(want, sizeof(want),
			 "%s:8: log format %u is not supported (this deter reads format %d)",
			 path, others[i], DETER_ABI_VERSION);
		UNIT_CHECK(rec_log_read_header(path, &h, &err) != 0);
		UNIT_CHECK(err && !strcmp(err, want));
		free(err);
		err = NULL;
		UNIT_CHECK(!rec_log_read(path, &err));
		UNIT_CHECK(err && !strcmp(err, want));
		free(err);
		err = NULL;
	}
	/* This deter's own. */
	f = fopen(path, "r+");
	UNIT_CHECK(f && fseek(f, 8, SEEK_SET) == 0 && fputc(DETER_ABI_VERSION, f) >= 0);
	if (f)
		fclose(f);
	log = rec_log_read(path, &err);
	UNIT_CHECK(log && log->nevs == 1 && log->hdr.version == DETER_ABI_VERSION);
	rec_log_free(log);
	unlink(path);
	free(path);
	rmdir(dir);
}

/*
 * A passive end whose handshake values were lost (DETER_V_MISSING) is
 * whole and closed, yet its log is incomplete, and says why; so is one
 * whose calls went through a layer above TCP (MISSING CALLS).
 */
static void check_missing(uint64_t why, uint32_t status, const char *str)
{
	char dir[] = "/tmp/rec_write_test.XXXXXX", path[64], st[64], line[64], *err = NULL;
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
	check_missing(DETER_MISSING_SYNACK_TIMER, DETER_LOG_MISSING_VALUES,
		      "incomplete,missing-values");
	/* Not incomplete: the log has every event, and the change. */
	check_missing(DETER_MISSING_SETTINGS, DETER_LOG_SETTINGS_CHANGED,
		      "complete,settings-changed");
}

/*
 * Events handed to the table out of order, a few places (the insertion
 * sort) and far (qsort), are written in sequence; a connection not yet
 * whole is not written.
 */
static void test_order(void)
{
	char dir[] = "/tmp/rec_write_test.XXXXXX", path[64], *err = NULL;
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
 * A connection written as it goes (rec_log_writer_add() in
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
	char dir[] = "/tmp/rec_write_test.XXXXXX", *path = NULL, *one = NULL, *err = NULL;
	char dir2[] = "/tmp/rec_write_test.XXXXXX", *rpath = NULL, rpart[128];
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
		struct rec_log_enc *enc = rec_log_enc_new();
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
		UNIT_CHECK(rec_log_decode(body, l1 + l2, 200, &dl, &err) == 0);
		UNIT_CHECK_EQ(dl.nevs, 200);
		UNIT_CHECK_EQ(dl.nchunks, 2);
		free(dl.evs);
		free(dl.states);
		memset(&dl, 0, sizeof(dl));
		UNIT_CHECK(rec_log_decode(body, l1 + l2 - 1, 200, &dl, &err) != 0);
		UNIT_CHECK(err && strstr(err, "overruns the body"));
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
	char dir[] = "/tmp/rec_write_test.XXXXXX", path[64], ipath[64], *err = NULL;
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
	char dir[] = "/tmp/rec_write_test.XXXXXX", path[64], ipath[64], *err = NULL;
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
	char dir[] = "/tmp/rec_write_test.XXXXXX";
	size_t chunk = rec_conn_chunk_events, cb = rec_log_chunk_bytes;
	size_t sp = rec_log_spill_bytes;
	struct rec_table *t;
	struct rec_log *log;
	int k;

	rec_conn_chunk_events = 4;
	rec_log_chunk_bytes = 16;
	rec_log_spill_bytes = 16;
	for (k = 0; k < 2; k++) {
		UNIT_CHECK(mkdtemp(memcpy(dir, "/tmp/rec_write_test.XXXXXX", sizeof(dir))));
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
		UNIT_CHECK(mkdtemp(memcpy(dir, "/tmp/rec_write_test.XXXXXX", sizeof(dir))));
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
	UNIT_RUN(test_files);
	UNIT_RUN(test_version);
	UNIT_RUN(test_missing);
	UNIT_RUN(test_chunks);
	UNIT_RUN(test_table_stream);
	UNIT_RUN(test_order);
	return unit_done();
}
