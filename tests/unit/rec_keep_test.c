// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for what deter record keeps of its directory (rec_keep.c):
 * --max-size removes the oldest unflagged logs first, flagged ones only
 * once none is left; --max-age removes every log older than it; files
 * that are not logs, and part files, stay; the index is written anew
 * without the logs removed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rec_index.h"
#include "rec_keep.h"
#include "rec_log.h"
#include "unit.h"

#define SEC 1000000000ULL

static int said, said_flagged;

static void report(const char *msg, void *arg)
{
	(void)arg;
	said++;
	said_flagged += !!strstr(msg, "--max-size: no unflagged log left, flagged ones go");
}

/*
 * Write log @conn into @dir, ended at @end_s, an end of a connection of
 * its own (10.0.0.1:conn to 10.0.0.2:5201), or with @peer_of, the other
 * end of log @peer_of's; its disk use.
 */
static uint64_t put_end(const char *dir, uint64_t conn, uint64_t end_s, int flagged,
			int index, uint64_t peer_of)
{
	uint64_t c = peer_of ? peer_of : conn;
	struct deter_log_header h = {
		.conn = conn, .real_ns = end_s * SEC - SEC / 2, .duration_ns = SEC / 2,
		.total_retrans = flagged,
		.saddr = 0x0a000001, .daddr = 0x0a000002,
		.sport = 10000 + c, .dport = 5201,
		.iss = c * 1000, .irs = c * 7777, .flags = DETER_CONN_ACTIVE,
	};
	char *path = NULL, *err = NULL;
	struct stat st;

	if (peer_of) {
		h.flags = 0;
		h.saddr = 0x0a000002;
		h.daddr = 0x0a000001;
		h.sport = 5201;
		h.dport = 10000 + c;
		h.iss = c * 7777;
		h.irs = c * 1000;
	}

	UNIT_CHECK(rec_log_write(dir, &h, NULL, 0, NULL, &path, &err) == 0);
	if (index)
		UNIT_CHECK(rec_index_add(path, &h, &err) == 0);
	UNIT_CHECK(stat(path, &st) == 0);
	free(path);
	free(err);
	return (uint64_t)st.st_blocks * 512;
}

static uint64_t put(const char *dir, uint64_t conn, uint64_t end_s, int flagged,
		    int index)
{
	return put_end(dir, conn, end_s, flagged, index, 0);
}

/* Where rec_log_write() puts connection @conn's log. */
static const char *log_path(char *buf, size_t len, const char *dir, uint64_t conn)
{
	snprintf(buf, len, "%s/%016llx.dlog", dir, (unsigned long long)conn);
	return buf;
}

static int there(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !access(path, F_OK);
}

static int log_there(const char *dir, uint64_t conn)
{
	char path[256];

	return !access(log_path(path, sizeof(path), dir, conn), F_OK);
}

static void rm_dir(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	UNIT_CHECK(system(cmd) == 0);
}

static void touch(const char *dir, const char *name)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	UNIT_CHECK(f);
	if (f) {
		fputs("not a log\n", f);
		fclose(f);
	}
}

/* rec_keep_open() of @dir under @lim, reports to report(); checked. */
static struct rec_keep *keep_open(const char *dir, const struct rec_keep_limits *lim)
{
	struct rec_keep *k;
	char *err = NULL;

	k = rec_keep_open(dir, lim, report, NULL, &err);
	UNIT_CHECK(k);
	if (!k)
		printf("# rec_keep_open: %s\n", err ? err : "?");
	free(err);
	return k;
}

/*
 * Six unflagged logs (conn 1-6, ended at 11-16 s) and two flagged ones,
 * the oldest of all (conn 7, 10 s) and one between (conn 8, 13 s).
 */
static uint64_t put_eight(const char *dir, uint64_t *each)
{
	static const uint64_t end[9] = { 0, 11, 12, 13, 14, 15, 16, 10, 13 };
	uint64_t total = 0, c;

	for (c = 1; c <= 8; c++) {
		each[c] = put(dir, c, end[c], c >= 7, 0);
		total += each[c];
	}
	return total;
}

static void test_max_size(void)
{
	const struct deter_log_header h10 = {
		.conn = 10, .real_ns = 14 * SEC, .duration_ns = SEC,
	};
	char dir[] = "/tmp/rec_keep_test.XXXXXX", path[256];
	struct rec_keep_limits lim = { 0 };
	struct rec_keep_stats st;
	struct rec_keep *k;
	uint64_t each[9], total, c;
	char *err = NULL;

	UNIT_CHECK(mkdtemp(dir));
	total = put_eight(dir, each);
	touch(dir, "notes.txt");
	touch(dir, ".0000000000000009.dlog.part");

	/* Room for all but the three oldest unflagged logs. */
	lim.max_bytes = total - each[1] - each[2] - each[3];
	said = 0;
	said_flagged = 0;
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.logs, 8);
	UNIT_CHECK_EQ(st.bytes, total);
	rec_keep_run(k, 100 * SEC);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.removed, 3);
	UNIT_CHECK_EQ(st.removed_flagged, 0);
	UNIT_CHECK_EQ(st.removed_bytes, each[1] + each[2] + each[3]);
	UNIT_CHECK_EQ(st.logs, 5);
	for (c = 1; c <= 8; c++)
		UNIT_CHECK_EQ(log_there(dir, c), c > 3);
	UNIT_CHECK_EQ(said, 0);

	/* A new log, ended before the newest: counted, in its place. */
	put(dir, 10, 15, 0, 0);
	UNIT_CHECK(rec_keep_add(k, "/nonexistent/x.dlog", &h10) == -1);
	UNIT_CHECK(rec_keep_add(k, log_path(path, sizeof(path), dir, 10), &h10) == 0);
	/* Room for one log less: the oldest unflagged, conn 4, goes. */
	lim.max_bytes = st.bytes;
	rec_keep_free(k);
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 100 * SEC);
	UNIT_CHECK(!log_there(dir, 4) && log_there(dir, 5) && log_there(dir, 10));
	rec_keep_free(k);

	/* Room for one log: every unflagged one goes, then conn 7, said once. */
	lim.max_bytes = each[8];
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 100 * SEC);
	rec_keep_run(k, 100 * SEC);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.logs, 1);
	UNIT_CHECK_EQ(st.removed_flagged, 1);
	UNIT_CHECK(log_there(dir, 8) && !log_there(dir, 7));
	UNIT_CHECK(!log_there(dir, 6) && !log_there(dir, 10));
	UNIT_CHECK_EQ(said_flagged, 1);
	rec_keep_free(k);

	/* What is not a log stays. */
	UNIT_CHECK(there(dir, "notes.txt"));
	UNIT_CHECK(there(dir, ".0000000000000009.dlog.part"));
	free(err);
	rm_dir(dir);
}

static void test_max_age(void)
{
	char dir[] = "/tmp/rec_keep_test.XXXXXX";
	struct rec_keep_limits lim = { .max_age_ns = 3 * SEC };
	struct rec_keep_stats st;
	struct rec_keep *k;
	uint64_t each[9], c;
	char *err = NULL;

	UNIT_CHECK(mkdtemp(dir));
	put_eight(dir, each);
	k = keep_open(dir, &lim);
	if (!k)
		return;
	/* At 16.5 s, logs that ended before 13.5 s go, flagged ones too. */
	rec_keep_run(k, 16 * SEC + SEC / 2);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.removed, 5);
	UNIT_CHECK_EQ(st.removed_flagged, 2);
	for (c = 1; c <= 8; c++)
		UNIT_CHECK_EQ(log_there(dir, c), c >= 4 && c <= 6);
	/* Time going back removes nothing. */
	rec_keep_run(k, 2 * SEC);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.logs, 3);
	rec_keep_free(k);

	/*
	 * A log without its identity (no start time) ages from when it was
	 * written, not from 1970: kept 1 s on, gone 10 s on.
	 */
	{
		struct deter_log_header h = { .conn = 9, .duration_ns = SEC };
		char *path = NULL;
		struct timespec now;

		UNIT_CHECK(rec_log_write(dir, &h, NULL, 0, NULL, &path, &err) == 0);
		free(path);
		clock_gettime(CLOCK_REALTIME, &now);
		k = keep_open(dir, &lim);
		if (!k)
			return;
		rec_keep_run(k, (now.tv_sec + 1) * SEC);
		UNIT_CHECK(log_there(dir, 9));
		rec_keep_run(k, (now.tv_sec + 10) * SEC);
		UNIT_CHECK(!log_there(dir, 9));
		rec_keep_free(k);

		/* Two such logs are not a pair: the old one goes alone. */
		h.conn = 19;
		UNIT_CHECK(rec_log_write(dir, &h, NULL, 0, NULL, &path, &err) == 0);
		{
			struct timespec t[2] = { { now.tv_sec - 3600, 0 },
						 { now.tv_sec - 3600, 0 } };

			UNIT_CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
		}
		free(path);
		h.conn = 29;
		h.flags = DETER_CONN_ACTIVE;	/* as if the other end */
		UNIT_CHECK(rec_log_write(dir, &h, NULL, 0, NULL, &path, &err) == 0);
		free(path);
		k = keep_open(dir, &lim);
		if (!k)
			return;
		rec_keep_run(k, (now.tv_sec + 1) * SEC);
		UNIT_CHECK(!log_there(dir, 19) && log_there(dir, 29));
		rec_keep_free(k);
	}
	free(err);
	rm_dir(dir);
}

/*
 * Both ends of a connection in the directory go together; an unflagged
 * end whose peer is flagged stays as long as its peer.
 */
static void test_pairs(void)
{
	char dir[] = "/tmp/rec_keep_test.XXXXXX";
	struct rec_keep_limits lim = { 0 };
	struct rec_keep_stats st;
	struct rec_keep *k;
	uint64_t one;
	char *err = NULL;

	UNIT_CHECK(mkdtemp(dir));
	/*
	 * Connection 1: logs 1 (ended at 10 s) and 11 (12 s), unflagged;
	 * connection 2: logs 2 (11 s, flagged) and 12 (11 s, not);
	 * connections 3 and 4: logs 3 and 4 (13 s, 14 s), one end each.
	 */
	one = put(dir, 1, 10, 0, 0);
	put_end(dir, 11, 12, 0, 0, 1);
	put(dir, 2, 11, 1, 0);
	put_end(dir, 12, 11, 0, 0, 2);
	put(dir, 3, 13, 0, 0);
	put(dir, 4, 14, 0, 0);

	/* Room for all but one log: connection 1's two go. */
	lim.max_bytes = 5 * one;
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 100 * SEC);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.removed, 2);
	UNIT_CHECK(!log_there(dir, 1) && !log_there(dir, 11));
	UNIT_CHECK(log_there(dir, 2) && log_there(dir, 12) && log_there(dir, 3));

	/* Room for 3: log 12 stays with its flagged peer; 3 goes. */
	rec_keep_free(k);
	lim.max_bytes = 3 * one;
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 100 * SEC);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.logs, 3);
	UNIT_CHECK(log_there(dir, 2) && log_there(dir, 12) && !log_there(dir, 3));
	UNIT_CHECK(log_there(dir, 4));

	/* Room for 1: 4 goes, then connection 2, both ends, said once. */
	lim.max_bytes = one;
	said_flagged = 0;
	rec_keep_free(k);
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 100 * SEC);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.logs, 0);
	UNIT_CHECK_EQ(st.removed, 3);
	UNIT_CHECK_EQ(st.removed_flagged, 1);
	UNIT_CHECK(!log_there(dir, 2) && !log_there(dir, 12));
	UNIT_CHECK_EQ(said_flagged, 1);
	rec_keep_free(k);

	/*
	 * Held, then aged: log 6 (ended at 30 s) is held by its flagged peer
	 * 16 (31 s) while log 7 (32 s) goes for room; at 130.5 s, with a
	 * 100 s age limit, the pair goes by its earlier end.
	 */
	put(dir, 6, 30, 0, 0);
	put_end(dir, 16, 31, 1, 0, 6);
	put(dir, 7, 32, 0, 0);
	lim.max_bytes = 2 * one;
	lim.max_age_ns = 100 * SEC;
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 33 * SEC);
	UNIT_CHECK(log_there(dir, 6) && log_there(dir, 16) && !log_there(dir, 7));
	rec_keep_run(k, 130 * SEC + SEC / 2);
	UNIT_CHECK(!log_there(dir, 6) && !log_there(dir, 16));
	rec_keep_free(k);

	/* A peer written later pairs with one kept; freed with both queued. */
	put(dir, 5, 20, 0, 0);
	lim.max_bytes = 0;
	lim.max_age_ns = 5 * SEC;
	k = keep_open(dir, &lim);
	if (!k)
		return;
	put_end(dir, 15, 21, 1, 0, 5);
	{
		struct deter_log_header h = {
			.conn = 15, .real_ns = 20 * SEC, .duration_ns = SEC,
			.total_retrans = 1,
			.saddr = 0x0a000002, .daddr = 0x0a000001, .sport = 5201,
			.dport = 10005, .iss = 5 * 7777, .irs = 5 * 1000,
		};
		char path[256];

		UNIT_CHECK(rec_keep_add(k, log_path(path, sizeof(path), dir, 15), &h) == 0);
	}
	/* At 25.5 s log 5 is too old, and goes with its flagged peer. */
	rec_keep_run(k, 25 * SEC + SEC / 2);
	rec_keep_stats(k, &st);
	UNIT_CHECK_EQ(st.removed, 2);
	UNIT_CHECK(!log_there(dir, 5) && !log_there(dir, 15));
	rec_keep_free(k);
	free(err);
	rm_dir(dir);
}

static void test_index_pruned(void)
{
	char dir[] = "/tmp/rec_keep_test.XXXXXX";
	struct rec_keep_limits lim = { .max_age_ns = 10 * SEC };
	struct rec_entry *e = NULL;
	struct rec_keep *k;
	char *err = NULL;
	uint64_t c;
	size_t n = 0;

	UNIT_CHECK(mkdtemp(dir));
	/* 80 logs, 69 of which the age limit removes (ended before 70 s). */
	for (c = 1; c <= 80; c++)
		put(dir, c, c, 0, 1);
	UNIT_CHECK_EQ(rec_index_records(dir), 80);
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 80 * SEC);
	rec_keep_free(k);	/* waits for the prune's thread */
	UNIT_CHECK_EQ(rec_index_records(dir), 11);
	UNIT_CHECK(rec_dir_scan(dir, 0, &e, &n, report, NULL, &err) == 0);
	UNIT_CHECK_EQ(n, 11);
	UNIT_CHECK(n && e[0].h.conn == 70);
	rec_entries_free(e, n);

	/* Fewer removals than logs left: the index stays as it was. */
	for (c = 81; c <= 90; c++)
		put(dir, c, c, 0, 1);
	k = keep_open(dir, &lim);
	if (!k)
		return;
	rec_keep_run(k, 85 * SEC);
	rec_keep_free(k);
	UNIT_CHECK_EQ(rec_index_records(dir), 21);
	free(err);
	rm_dir(dir);
}

struct adder {
	const char *path;
	struct deter_log_header h;
	int n;
	int done;
};

static void *add_records(void *arg)
{
	struct adder *a = arg;
	char *err = NULL;
	int i;

	for (i = 0; i < a->n; i++)
		if (rec_index_add(a->path, &a->h, &err))
			break;
	free(err);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * rec_index_prune() keeps the records of logs as they are, drops those of
 * logs removed or changed, and loses none appended while it runs.
 */
static void test_prune(void)
{
	struct deter_log_header h = { .conn = 1 };
	char dir[] = "/tmp/rec_keep_test.XXXXXX", path[256], *err = NULL;
	struct adder a = { .n = 2000 };
	struct timespec t[2] = { { 0, 0 }, { 0, 0 } };
	pthread_t th;
	size_t kept, rounds = 0;
	uint64_t c;

	UNIT_CHECK(mkdtemp(dir));
	for (c = 1; c <= 300; c++)
		put(dir, c, 10, 0, 1);
	UNIT_CHECK(unlink(log_path(path, sizeof(path), dir, 2)) == 0);
	UNIT_CHECK(utimensat(AT_FDCWD, log_path(path, sizeof(path), dir, 3), t, 0) == 0);
	UNIT_CHECK(rec_index_prune(dir, &kept, &err) == 0);
	UNIT_CHECK_EQ(kept, 298);
	UNIT_CHECK_EQ(rec_index_records(dir), 298);

	/* Prune over and over while another thread appends 2000 records. */
	a.path = log_path(path, sizeof(path), dir, 1);
	a.h = h;
	UNIT_CHECK(pthread_create(&th, NULL, add_records, &a) == 0);
	while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
		UNIT_CHECK(rec_index_prune(dir, &kept, &err) == 0);
		rounds++;
	}
	pthread_join(th, NULL);
	UNIT_CHECK(rec_index_prune(dir, &kept, &err) == 0);
	UNIT_CHECK_EQ(rec_index_records(dir), 298 + 2000);
	printf("# %zu prunes while 2000 records were appended\n", rounds);

	/* A half record a killed writer left at the end is not copied. */
	snprintf(path, sizeof(path), "%s/index", dir);
	{
		FILE *f = fopen(path, "ab");
		struct stat st;

		UNIT_CHECK(f);
		if (f) {
			fwrite("half a record", 13, 1, f);
			fclose(f);
		}
		UNIT_CHECK(rec_index_prune(dir, &kept, &err) == 0);
		UNIT_CHECK_EQ(kept, 298 + 2000);
		UNIT_CHECK(stat(path, &st) == 0);
		UNIT_CHECK_EQ((st.st_size - sizeof(struct rec_index_hdr)) %
			      sizeof(struct rec_index_rec), 0);
	}

	/* No index: nothing to do. */
	snprintf(path, sizeof(path), "%s/index", dir);
	UNIT_CHECK(unlink(path) == 0);
	UNIT_CHECK(rec_index_prune(dir, &kept, &err) == 0);
	UNIT_CHECK_EQ(kept, 0);
	free(err);
	rm_dir(dir);
}

int main(void)
{
	UNIT_RUN(test_max_size);
	UNIT_RUN(test_max_age);
	UNIT_RUN(test_pairs);
	UNIT_RUN(test_index_pruned);
	UNIT_RUN(test_prune);
	return unit_done();
}
