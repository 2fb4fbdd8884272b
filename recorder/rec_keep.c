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
 * order deter record writes them in. Where both ends of a connection are
 * in the directory (deter replay needs both), they go together, when the
 * first of them would; under --max-size a pair with a flagged end counts
 * as flagged. Every log of the directory counts,
 * whoever wrote it; part files of connections still open do not, and
 * are never removed. Disk use is what the file system allocated (st_blocks,
 * as du counts), not the files' lengths: a 1 kB log takes a 4 KiB block.
 *
 * Logs are kept in two queues, unflagged and flagged, each oldest first,
 * so a removal is O(1); a log is paired with its peer through a hash of
 * the logs whose peer has not come (yet). The directory's index keeps a
 * record for every log it ever had (rec_index.c); once as many logs were
 * removed as are kept, a thread writes it anew from the records of the
 * logs left (rec_index_prune()), so that draining never waits for it.
 */
#include "rec_keep.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_log.h"

/* The index is written anew after at least this many removals. */
size_t rec_keep_prune_min = 64;

/* struct rec_keep's pruning: not, in a thread, or in the caller. */
#define REC_KEEP_PRUNE_THREAD 1
#define REC_KEEP_PRUNE_HERE 2

/*
 * One log. A queue slot holds it (in_queue) until it is popped; a log
 * popped while its peer must stay (an unflagged log whose peer is
 * flagged) is held by the peer's link alone, and goes with it.
 */
struct rec_keep_log {
	char *path;		/* NULL once removed */
	uint64_t end_ns;	/* the connection's end, CLOCK_REALTIME */
	uint64_t bytes;		/* disk use */
	struct rec_keep_log *peer;	/* the other end's log, in this directory */
	struct rec_keep_log *next;	/* in its hash chain */
	uint32_t saddr, daddr, iss, irs;
	uint16_t sport, dport;
	uint8_t flagged;
	uint8_t in_queue;
	uint8_t active;		/* this end called connect() */
};

/* Logs oldest first, in l[head] to l[n - 1]. */
struct rec_keep_queue {
	struct rec_keep_log **l;
	size_t head, n, cap;
};

struct rec_keep {
	char *dir;
	struct rec_keep_limits lim;
	struct rec_keep_queue q[2];	/* [0]: unflagged, [1]: flagged */
	struct rec_keep_log **hash;	/* logs without a peer yet, by pair */
	size_t nhash;			/* buckets, a power of 2 */
	size_t nunpaired;
	struct rec_keep_stats st;
	uint64_t stale;			/* removed since the index was pruned */
	pthread_t prune;		/* rec_index_prune(), while pruning */
	int pruning;			/* REC_KEEP_PRUNE_*, or 0 */
	int pruned;			/* the thread is done (atomic) */
	char *prune_err;		/* and what it said */
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
static int rec_keep_push(struct rec_keep_queue *q, struct rec_keep_log *log)
{
	struct rec_keep_log **nl;
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
	for (i = q->n; i > q->head && q->l[i - 1]->end_ns > log->end_ns; i--)
		q->l[i] = q->l[i - 1];
	q->l[i] = log;
	q->n++;
	log->in_queue = 1;
	return 0;
}

/*
 * Both ends of a connection hash alike: the two (address, port, ISN)
 * endpoints, the smaller first.
 */
static size_t rec_keep_hash(const struct rec_keep_log *l)
{
	uint64_t a = (uint64_t)l->saddr << 16 | l->sport;
	uint64_t b = (uint64_t)l->daddr << 16 | l->dport;
	uint64_t x, y, h;

	if (a < b || (a == b && l->iss < l->irs)) {
		x = a ^ (uint64_t)l->iss << 32;
		y = b ^ (uint64_t)l->irs << 32;
	} else {
		x = b ^ (uint64_t)l->irs << 32;
		y = a ^ (uint64_t)l->iss << 32;
	}
	h = (x ^ (y * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

/* The other end of the connection, as deter replay pairs them. */
static int rec_keep_is_peer(const struct rec_keep_log *a, const struct rec_keep_log *b)
{
	return a->saddr == b->daddr && a->daddr == b->saddr &&
	       a->sport == b->dport && a->dport == b->sport &&
	       a->iss == b->irs && a->irs == b->iss && a->active != b->active;
}

static int rec_keep_hash_grow(struct rec_keep *k)
{
	size_t n = k->nhash ? k->nhash * 2 : 256, i;
	struct rec_keep_log **nh, **b, *l, *next;

	nh = calloc(n, sizeof(*nh));
	if (!nh)
		return -1;
	for (i = 0; i < k->nhash; i++)
		for (l = k->hash[i]; l; l = next) {
			next = l->next;
			b = &nh[rec_keep_hash(l) & (n - 1)];
			l->next = *b;
			*b = l;
		}
	free(k->hash);
	k->hash = nh;
	k->nhash = n;
	return 0;
}

/*
 * Take @l's peer out of the hash if it is there, else put @l in. A log
 * without its identity (all zero) has no peer.
 */
static int rec_keep_pair(struct rec_keep *k, struct rec_keep_log *l,
			 const struct deter_log_header *h)
{
	struct rec_keep_log **bucket, **pp;

	if (h->status & DETER_LOG_NO_IDENTITY || !h->real_ns)
		return 0;
	if (k->nunpaired >= k->nhash && rec_keep_hash_grow(k))
		return -1;
	bucket = &k->hash[rec_keep_hash(l) & (k->nhash - 1)];
	for (pp = bucket; *pp; pp = &(*pp)->next)
		if (rec_keep_is_peer(l, *pp)) {
			l->peer = *pp;
			(*pp)->peer = l;
			*pp = (*pp)->next;
			l->peer->next = NULL;
			k->nunpaired--;
			return 0;
		}
	l->next = *bucket;
	*bucket = l;
	k->nunpaired++;
	return 0;
}

/* Take @l, removed, out of the hash of logs without a peer, if there. */
static void rec_keep_unhash(struct rec_keep *k, struct rec_keep_log *l)
{
	struct rec_keep_log **pp;

	if (l->peer || !k->nhash)
		return;
	for (pp = &k->hash[rec_keep_hash(l) & (k->nhash - 1)]; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			k->nunpaired--;
			return;
		}
}

static int rec_keep_insert(struct rec_keep *k, const char *path,
			   const struct deter_log_header *h, const struct stat *st)
{
	struct rec_keep_log *l = calloc(1, sizeof(*l));

	if (!l)
		return -1;
	*l = (struct rec_keep_log){
		/* A log without its identity has no start: when it was written. */
		.end_ns = h->real_ns ? h->real_ns + h->duration_ns :
			  (uint64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.bytes = (uint64_t)st->st_blocks * 512,
		.saddr = h->saddr, .daddr = h->daddr, .sport = h->sport,
		.dport = h->dport, .iss = h->iss, .irs = h->irs,
		.flagged = rec_log_flagged(h),
		.active = !!(h->flags & DETER_CONN_ACTIVE),
	};
	l->path = strdup(path);
	if (!l->path || rec_keep_pair(k, l, h)) {
		free(l->path);
		free(l);
		return -1;
	}
	if (rec_keep_push(&k->q[l->flagged], l)) {
		rec_keep_unhash(k, l);
		if (l->peer)
			l->peer->peer = NULL;
		free(l->path);
		free(l);
		return -1;
	}
	k->st.logs++;
	k->st.bytes += l->bytes;
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

/* Remove @l's file; it stays allocated while a queue slot holds it. */
static void rec_keep_unlink(struct rec_keep *k, struct rec_keep_log *l)
{
	k->st.logs--;
	k->st.bytes -= l->bytes;
	if (!unlink(l->path)) {
		k->st.removed++;
		k->st.removed_flagged += l->flagged;
		k->st.removed_bytes += l->bytes;
		k->stale++;
	} else if (errno != ENOENT) {
		/* Not ours to keep counting: the others are held to the limits. */
		rec_keep_say(k, "%s: cannot remove: %s; left, no longer counted",
			     l->path, strerror(errno));
	}
	rec_keep_unhash(k, l);
	free(l->path);
	l->path = NULL;
}

static void rec_keep_release(struct rec_keep_log *l)
{
	if (!l->in_queue && !l->path)
		free(l);
}

/*
 * Pop the oldest log of queue @qi and remove it with its peer; with
 * @hold, not an unflagged log whose peer is flagged, which then goes with
 * its peer.
 *
 * Return: 1 if something was popped, 0 if @qi is empty.
 */
static int rec_keep_pop(struct rec_keep *k, int qi, int hold)
{
	struct rec_keep_queue *q = &k->q[qi];
	struct rec_keep_log *l, *peer;

	if (q->head == q->n)
		return 0;
	l = q->l[q->head++];
	l->in_queue = 0;
	if (!l->path) {		/* went with its peer */
		rec_keep_release(l);
		return 1;
	}
	peer = l->peer;
	if (hold && !qi && peer && peer->path && peer->flagged) {
		/*
		 * Held by its peer's link: the pair ages by its earlier end
		 * (the two are microseconds to milliseconds apart, so the
		 * flagged queue stays as good as in order).
		 */
		if (l->end_ns < peer->end_ns)
			peer->end_ns = l->end_ns;
		return 1;
	}
	rec_keep_unlink(k, l);
	if (peer && peer->path)
		rec_keep_unlink(k, peer);
	if (peer) {
		peer->peer = NULL;
		rec_keep_release(peer);
	}
	rec_keep_release(l);
	return 1;
}

static uint64_t rec_keep_head_end(const struct rec_keep_queue *q)
{
	return q->l[q->head]->end_ns;
}

/*
 * The index is pruned in a thread of its own (it stats a file per record:
 * seconds for a million logs), while deter record goes on draining.
 */
static void *rec_keep_prune_main(void *arg)
{
	struct rec_keep *k = arg;
	size_t n;

	if (rec_index_prune(k->dir, &n, &k->prune_err) && !k->prune_err)
		k->prune_err = strdup("pruning the index: out of memory");
	__atomic_store_n(&k->pruned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait for the prune to end, and say what went wrong, once. */
static void rec_keep_prune_join(struct rec_keep *k)
{
	if (!k->pruning)
		return;
	if (k->pruning == REC_KEEP_PRUNE_THREAD)
		pthread_join(k->prune, NULL);
	k->pruning = 0;
	if (k->prune_err && !k->said_prune) {
		rec_keep_say(k, "%s (said once)", k->prune_err);
		k->said_prune = 1;
	}
	free(k->prune_err);
	k->prune_err = NULL;
}

/* Remove what the limits no longer allow. */
static void rec_keep_remove_over(struct rec_keep *k, uint64_t now_ns)
{
	struct rec_keep_queue *q;
	int qi;

	if (k->lim.max_age_ns && now_ns > k->lim.max_age_ns) {
		for (qi = 0; qi < 2; qi++) {
			q = &k->q[qi];
			while (q->head < q->n &&
			       rec_keep_head_end(q) < now_ns - k->lim.max_age_ns)
				rec_keep_pop(k, qi, 0);
		}
	}
	while (k->lim.max_bytes && k->st.bytes > k->lim.max_bytes) {
		if (rec_keep_pop(k, 0, 1))
			continue;
		if (k->q[1].head == k->q[1].n)
			break;
		if (!k->said_flagged) {
			rec_keep_say(k, "%s: --max-size: no unflagged log left, flagged ones go",
				     k->dir);
			k->said_flagged = 1;
		}
		rec_keep_pop(k, 1, 1);
	}
}

/**
 * rec_keep_run() - remove the logs the limits no longer allow
 * @k: the directory's logs
 * @now_ns: the time, CLOCK_REALTIME
 *
 * First every log older than the age limit, then, while the logs take
 * more than the size limit, the oldest unflagged one, or, with none
 * left, the oldest flagged one. Starts writing the index anew once as
 * many logs went as are left.
 */
void rec_keep_run(struct rec_keep *k, uint64_t now_ns)
{
	sigset_t all, old;
	int made;

	rec_keep_remove_over(k, now_ns);
	if (k->pruning && __atomic_load_n(&k->pruned, __ATOMIC_ACQUIRE))
		rec_keep_prune_join(k);
	if (k->pruning || k->stale < rec_keep_prune_min || k->stale < k->st.logs)
		return;
	k->stale = 0;
	k->pruned = 0;
	/* Signals are the recorder's (sigtimedwait()), never the thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	made = !pthread_create(&k->prune, NULL, rec_keep_prune_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (made) {
		k->pruning = REC_KEEP_PRUNE_THREAD;
		return;
	}
	/* No thread: here, then. */
	rec_keep_prune_main(k);
	k->pruning = REC_KEEP_PRUNE_HERE;
	rec_keep_prune_join(k);
}

/**
 * rec_keep_stop() - the last removals, when recording stops
 * @k: the directory's logs
 * @now_ns: the time, CLOCK_REALTIME
 *
 * As rec_keep_run(), but a prune of the index is not started (a running
 * one is waited for): the next deter record in the directory does it.
 */
void rec_keep_stop(struct rec_keep *k, uint64_t now_ns)
{
	rec_keep_remove_over(k, now_ns);
	rec_keep_prune_join(k);
}

/** rec_keep_stats() - what rec_keep_run() removed, and what is left */
void rec_keep_stats(const struct rec_keep *k, struct rec_keep_stats *s)
{
	*s = k->st;
}

void rec_keep_free(struct rec_keep *k)
{
	struct rec_keep_log *l;
	size_t i;
	int qi;

	if (!k)
		return;
	rec_keep_prune_join(k);
	/* Each live log is in a queue, or linked from a peer that is. */
	for (qi = 0; qi < 2; qi++) {
		for (i = k->q[qi].head; i < k->q[qi].n; i++) {
			l = k->q[qi].l[i];
			if (l->peer && !l->peer->in_queue) {
				free(l->peer->path);
				free(l->peer);
			} else if (l->peer) {
				l->peer->peer = NULL;
			}
			free(l->path);
			free(l);
		}
		free(k->q[qi].l);
	}
	free(k->hash);
	free(k->dir);
	free(k);
}
