// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for what deter record keeps of its directory (rec_keep.c):
 * --max-size removes the oldest unflagged logs first, flagged ones only
 * once none is left; --max-age removes every log older than it; files
 * that are not logs, and part files, stay; the index is written anew
 * without the logs removed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Write connection @conn's log into @dir, ended at @end_s; its disk use. */
static uint64_t put(const char *dir, uint64_t conn, uint64_t end_s, int flagged,
		    int index)
{
	struct deter_log_header h = {
		.conn = conn, .real_ns = (end_s - 1) * SEC, .duration_ns = SEC,
		.total_retrans = flagged,
	};
	char *path = NULL, *err = NULL;
	struct stat st;

	UNIT_CHECK(rec_log_write(dir, &h, NULL, 0, NULL, &path, &err) == 0);
	if (index)
		UNIT_CHECK(rec_index_add(path, &h, &err) == 0);
	UNIT_CHECK(stat(path, &st) == 0);
	free(path);
	free(err);
	return (uint64_t)st.st_blocks * 512;
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
	k = rec_keep_open(dir, &lim, report, NULL, &err);
	UNIT_CHECK(k);
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
	k = rec_keep_open(dir, &lim, report, NULL, &err);
	UNIT_CHECK(k);
	if (!k)
		return;
	rec_keep_run(k, 100 * SEC);
	UNIT_CHECK(!log_there(dir, 4) && log_there(dir, 5) && log_there(dir, 10));
	rec_keep_free(k);

	/* Room for one log: every unflagged one goes, then conn 7, said once. */
	lim.max_bytes = each[8];
	k = rec_keep_open(dir, &lim, report, NULL, &err);
	UNIT_CHECK(k);
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
	k = rec_keep_open(dir, &lim, report, NULL, &err);
	UNIT_CHECK(k);
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
	k = rec_keep_open(dir, &lim, report, NULL, &err);
	UNIT_CHECK(k);
	if (!k)
		return;
	rec_keep_run(k, 80 * SEC);
	UNIT_CHECK_EQ(rec_index_records(dir), 11);
	UNIT_CHECK(rec_dir_scan(dir, 0, &e, &n, report, NULL, &err) == 0);
	UNIT_CHECK_EQ(n, 11);
	UNIT_CHECK(n && e[0].h.conn == 70);
	rec_entries_free(e, n);
	rec_keep_free(k);

	/* Fewer removals than logs left: the index stays as it was. */
	for (c = 81; c <= 90; c++)
		put(dir, c, c, 0, 1);
	k = rec_keep_open(dir, &lim, report, NULL, &err);
	UNIT_CHECK(k);
	if (!k)
		return;
	rec_keep_run(k, 85 * SEC);
	UNIT_CHECK_EQ(rec_index_records(dir), 21);
	rec_keep_free(k);
	free(err);
	rm_dir(dir);
}

int main(void)
{
	UNIT_RUN(test_max_size);
	UNIT_RUN(test_max_age);
	UNIT_RUN(test_index_pruned);
	return unit_done();
}
