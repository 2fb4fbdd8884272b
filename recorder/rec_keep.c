// SPDX-License-Identifier: GPL-2.0
/*
 * What an always-on deter record keeps of its log directory.
 *
 * Recording every connection of a host fills its disk, at a rate the
 * host's traffic sets (DETER: 2.8 GB per host and day). deter record can
 * hold the directory's logs to a disk budget and an age, the way a
 * journal is rotated, so that it can stay on:
 *
 *   --max-age AGE    a log goes once its connection ended AGE ago
 *   --max-size SIZE  while the logs take more than SIZE on disk, the
 *                    oldest goes: unflagged logs first (deter ls
 *                    --flagged: retransmissions, RTOs, drops, CE marks,
 *                    zero windows, incomplete or settings-changed), the
 *                    flagged ones only once no unflagged one is left
 *
 * "Oldest" is by the connection's end (start + duration), which is the
 * order deter record writes them in. Every log of the directory counts,
 * whoever wrote it; part files of connections still open do not, and
 * are never removed. Disk use is what the file system allocated (st_blocks,
 * as du counts), not the files' lengths: a 1 kB log takes a 4 KiB block.
 *
 * Logs are kept in two queues, unflagged and flagged, each oldest first,
 * so a removal is O(1). The directory's index keeps a record for every
 * log it ever had (rec_index.c); once as many logs were removed as are
 * kept, it is written anew from the records of the logs left.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_keep.h"
#include "rec_log.h"

/* The index is written anew after at least this many removals. */
#define REC_KEEP_PRUNE_MIN 64

struct rec_keep_log {
	char *path;
	uint64_t end_ns;	/* the connection's end, CLOCK_REALTIME */
	uint64_t bytes;		/* disk use */
};

/* Logs oldest first, in l[head] to l[n - 1]. */
struct rec_keep_queue {
	struct rec_keep_log *l;
	size_t head, n, cap;
};

struct rec_keep {
	char *dir;
	struct rec_keep_limits lim;
	struct rec_keep_queue q[2];	/* [0]: unflagged, [1]: flagged */
	struct rec_keep_stats st;
	uint64_t stale;			/* removed since the index was pruned */
	int said_flagged;
	int said_prune;
	rec_scan_report report;
	void *arg;
};

static void rec_keep_say(struct rec_keep *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rec_keep_say(struct rec_keep *k, const char *fmt, ...)
{
	char *msg;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	k->report(msg, k->arg);
	free(msg);
}

/* Add a log to @q, in order of its end (usually last). */
static int rec_keep_push(struct rec_keep_queue *q, const struct rec_keep_log *log)
{
	struct rec_keep_log *nl;
	size_t i;

	if (q->n == q->cap && q->head) {
		memmove(q->l, q->l + q->head, (q->n - q->head) * sizeof(*q->l));
		q->n -= q->head;
		q->head = 0;
	}
	if (q->n == q->cap) {
		nl = realloc(q->l, (q->cap ? q->cap * 2 : 64) * sizeof(*q->l));
		if (!nl)
			return -1;
		q->l = nl;
		q->cap = q->cap ? q->cap * 2 : 64;
	}
	for (i = q->n; i > q->head && q->l[i - 1].end_ns > log->end_ns; i--)
		q->l[i] = q->l[i - 1];
	q->l[i] = *log;
	q->n++;
	return 0;
}

static int rec_keep_insert(struct rec_keep *k, const char *path,
			   const struct deter_log_header *h, const struct stat *st)
{
	struct rec_keep_log log = {
		.end_ns = h->real_ns + h->duration_ns,
		.bytes = (uint64_t)st->st_blocks * 512,
	};

	log.path = strdup(path);
	if (!log.path || rec_keep_push(&k->q[rec_log_flagged(h)], &log)) {
		free(log.path);
		return -1;
	}
	k->st.logs++;
	k->st.bytes += log.bytes;
	return 0;
}

/**
 * rec_keep_open() - the logs of @dir, to be held to @lim
 * @dir: the log directory
 * @lim: the limits (copied)
 * @report: called with one line for each thing worth saying: a log that
 *	could not be read (not counted), one that could not be removed, the
 *	first removal of a flagged log
 * @arg: for @report
 * @err: the error message
 *
 * Return: the directory's logs, or NULL with *err set.
 */
struct rec_keep *rec_keep_open(const char *dir, const struct rec_keep_limits *lim,
			       rec_scan_report report, void *arg, char **err)
{
	struct rec_entry *e = NULL;
	struct rec_keep *k;
	struct stat st;
	size_t n = 0, i;

	k = calloc(1, sizeof(*k));
	if (k)
		k->dir = strdup(dir);
	if (!k || !k->dir) {
		free(k);
		rec_err(err, "out of memory");
		return NULL;
	}
	k->lim = *lim;
	k->report = report;
	k->arg = arg;
	if (rec_dir_scan(dir, 0, &e, &n, report, arg, err)) {
		rec_keep_free(k);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (stat(e[i].path, &st))
			continue;	/* gone since the scan */
		if (rec_keep_insert(k, e[i].path, &e[i].h, &st)) {
			rec_err(err, "out of memory");
			rec_entries_free(e, n);
			rec_keep_free(k);
			return NULL;
		}
	}
	rec_entries_free(e, n);
	/* An index many times the logs' number: what earlier removals left. */
	k->stale = rec_index_records(dir);
	k->stale = k->stale > k->st.logs ? k->stale - k->st.logs : 0;
	return k;
}

/**
 * rec_keep_add() - count a log deter record just wrote
 * @k: the directory's logs
 * @path: the log
 * @h: its header
 *
 * Return: 0, or -1 out of memory or when @path cannot be found (the log
 * is then not counted).
 */
int rec_keep_add(struct rec_keep *k, const char *path,
		 const struct deter_log_header *h)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	return rec_keep_insert(k, path, h, &st);
}

/* Remove the oldest log of queue @qi. */
static void rec_keep_remove(struct rec_keep *k, int qi)
{
	struct rec_keep_queue *q = &k->q[qi];
	struct rec_keep_log *log = &q->l[q->head++];

	k->st.logs--;
	k->st.bytes -= log->bytes;
	if (!unlink(log->path)) {
		k->st.removed++;
		k->st.removed_flagged += qi;
		k->st.removed_bytes += log->bytes;
		k->stale++;
	} else if (errno != ENOENT) {
		/* Not ours to keep counting: the others are held to the limits. */
		rec_keep_say(k, "%s: cannot remove: %s; left, no longer counted",
			     log->path, strerror(errno));
	}
	free(log->path);
	log->path = NULL;
}

static int rec_keep_empty(const struct rec_keep_queue *q)
{
	return q->head == q->n;
}

/**
 * rec_keep_run() - remove the logs the limits no longer allow
 * @k: the directory's logs
 * @now_ns: the time, CLOCK_REALTIME
 *
 * First every log older than the age limit, then, while the logs take
 * more than the size limit, the oldest unflagged one, or, with none
 * left, the oldest flagged one. Writes the index anew once as many logs
 * went as are left.
 */
void rec_keep_run(struct rec_keep *k, uint64_t now_ns)
{
	struct rec_keep_queue *q;
	char *err = NULL;
	size_t n;
	int qi;

	if (k->lim.max_age_ns && now_ns > k->lim.max_age_ns) {
		for (qi = 0; qi < 2; qi++) {
			q = &k->q[qi];
			while (!rec_keep_empty(q) &&
			       q->l[q->head].end_ns < now_ns - k->lim.max_age_ns)
				rec_keep_remove(k, qi);
		}
	}
	while (k->lim.max_bytes && k->st.bytes > k->lim.max_bytes) {
		qi = rec_keep_empty(&k->q[0]) ? 1 : 0;
		if (rec_keep_empty(&k->q[qi]))
			break;
		if (qi && !k->said_flagged++)
			rec_keep_say(k, "%s: --max-size: no unflagged log left, flagged ones go",
				     k->dir);
		rec_keep_remove(k, qi);
	}
	if (k->stale < REC_KEEP_PRUNE_MIN || k->stale < k->st.logs)
		return;
	if (rec_index_prune(k->dir, &n, k->report, k->arg, &err) && !k->said_prune++)
		rec_keep_say(k, "%s (said once)", err);
	free(err);
	k->stale = 0;
}

/** rec_keep_stats() - what rec_keep_run() removed, and what is left */
void rec_keep_stats(const struct rec_keep *k, struct rec_keep_stats *s)
{
	*s = k->st;
}

void rec_keep_free(struct rec_keep *k)
{
	size_t i;
	int qi;

	if (!k)
		return;
	for (qi = 0; qi < 2; qi++) {
		for (i = k->q[qi].head; i < k->q[qi].n; i++)
			free(k->q[qi].l[i].path);
		free(k->q[qi].l);
	}
	free(k->dir);
	free(k);
}
