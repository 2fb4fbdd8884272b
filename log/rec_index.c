// SPDX-License-Identifier: GPL-2.0
/*
 * The index of a log directory.
 *
 * DIR/index holds the header of every log deter wrote into DIR, so that
 * deter ls, and deter replay looking for a connection's other end, read
 * one file instead of opening every log:
 *
 *   "DETERIDX" | version u32 | record length u32 | record | record | ...
 *   record = the log's header | its file's size u64, mtime and ctime (ns,
 *            s64 each) and inode number u64
 *
 * deter record appends a record for each log it writes, deter compact for
 * each log it rewrites (O_APPEND, under flock(), 0600); deter index writes
 * the file anew from the logs. A record speaks for its log only while the
 * log's file has the size, mtime, ctime and inode it names: any change
 * to the file, even one that kept its size and mtime, moves its ctime (a
 * connection's log that was rewritten has a record for each version;
 * the current one's counts).
 * deter record, removing logs (--max-size, --max-age), prunes the index:
 * the records of logs still there are copied into a new one, renamed over
 * it (rec_index_prune()).
 * Every other log in DIR (copied in, changed since, or its record
 * never appended) has its header read from the log itself, and
 * a record whose log is gone lists nothing: a stale, damaged or missing
 * index costs time, never a wrong listing. A record cut short at the end
 * (a writer killed mid-append) is ignored, and cut off by the next append.
 */
#include "rec_index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_err.h"
#include "rec_read.h"

static int64_t rec_index_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* What @st says of a file, into @r. */
static void rec_index_stamp(struct rec_index_rec *r, const struct stat *st)
{
	r->size = st->st_size;
	r->mtime_ns = rec_index_ns(&st->st_mtim);
	r->ctime_ns = rec_index_ns(&st->st_ctim);
	r->ino = st->st_ino;
}

/* Whether @r was written for the file @st describes (rec_index_stamp()). */
static int rec_index_stamp_ok(const struct rec_index_rec *r, const struct stat *st)
{
	return r->size == (uint64_t)st->st_size && r->ino == st->st_ino &&
	       r->mtime_ns == rec_index_ns(&st->st_mtim) &&
	       r->ctime_ns == rec_index_ns(&st->st_ctim);
}

/* DIR/index for the directory of @path (a log), malloc'd. */
static char *rec_index_path_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *p;

	if (!slash)
		return strdup(REC_INDEX_NAME);
	if (asprintf(&p, "%.*s/%s", (int)(slash - path), path, REC_INDEX_NAME) < 0)
		return NULL;
	return p;
}

static int rec_index_hdr_ok(const struct rec_index_hdr *ih)
{
	return !memcmp(ih->magic, REC_INDEX_MAGIC, sizeof(ih->magic)) &&
	       ih->version == REC_INDEX_VERSION &&
	       ih->rec_len == sizeof(struct rec_index_rec);
}

/* What is wrong with an index's first bytes, for an error message. */
static const char *rec_index_hdr_why(const struct rec_index_hdr *ih, size_t got)
{
	if (got < sizeof(*ih))
		return "truncated header";
	if (memcmp(ih->magic, REC_INDEX_MAGIC, sizeof(ih->magic)))
		return "not a deter index (bad magic)";
	if (ih->version != REC_INDEX_VERSION)
		return "unknown index version";
	return "unexpected record length";
}

/**
 * rec_index_add() - index a log just written
 * @path: the log; the index is the one of its directory
 * @h: its header, as written
 * @err: the error message
 *
 * Return: 0, or -1 with *err set (the log itself is not affected).
 */
int rec_index_add(const char *path, const struct deter_log_header *h,
		  char **err)
{
	struct rec_index_hdr ih = { .version = REC_INDEX_VERSION,
				    .rec_len = sizeof(struct rec_index_rec) };
	struct rec_index_rec r = { .h = *h };
	char *ipath = rec_index_path_of(path);
	struct stat st, ist;
	int fd = -1, ret = -1;
	off_t at;

	if (!ipath)
		return rec_err(err, "out of memory");
	if (stat(path, &st)) {
		rec_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	rec_index_stamp(&r, &st);
	for (;;) {
		fd = open(ipath, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 || flock(fd, LOCK_EX) || fstat(fd, &ist)) {
			rec_err(err, "%s: %s", ipath, strerror(errno));
			goto out;
		}
		/* Written anew (deter index, a prune) while we waited: that one. */
		if (!stat(ipath, &st) && st.st_ino == ist.st_ino && st.st_dev == ist.st_dev)
			break;
		close(fd);
	}
	if (!ist.st_size) {
		memcpy(ih.magic, REC_INDEX_MAGIC, sizeof(ih.magic));
		if (write(fd, &ih, sizeof(ih)) != (ssize_t)sizeof(ih)) {
			rec_err(err, "%s: %s", ipath, strerror(errno));
			goto out;
		}
	} else {
		ssize_t got = pread(fd, &ih, sizeof(ih), 0);

		if (got < 0 || (size_t)got < sizeof(ih) || !rec_index_hdr_ok(&ih)) {
			rec_err(err, "%s:0: %s; left as it is (deter index writes it anew)",
				ipath, got < 0 ? strerror(errno) :
				rec_index_hdr_why(&ih, got));
			goto out;
		}
		/* A record a killed writer left half-written goes. */
		at = (ist.st_size - sizeof(ih)) % sizeof(r);
		if (at && ftruncate(fd, ist.st_size - at)) {
			rec_err(err, "%s: %s", ipath, strerror(errno));
			goto out;
		}
	}
	if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
		rec_err(err, "%s: %s", ipath, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(ipath);
	return ret;
}

/* The index's records, sorted by connection id. */
struct rec_index_map {
	struct rec_index_rec *r;
	size_t n;
};

static int rec_index_rec_cmp(const void *a, const void *b)
{
	const struct rec_index_rec *x = a, *y = b;

	return x->h.conn < y->h.conn ? -1 : x->h.conn > y->h.conn;
}

static void rec_index_map_free(struct rec_index_map *m)
{
	free(m->r);
	m->r = NULL;
	m->n = 0;
}

/*
 * Read @dir's index into @m; none (an empty map) when there is none or
 * it cannot be used, which is reported. Return: -1 only out of memory.
 */
static int rec_index_load(const char *dir, struct rec_index_map *m,
			  rec_scan_report report, void *arg)
{
	struct rec_index_hdr ih;
	char *ipath, *msg;
	size_t nrec;
	struct stat st;
	ssize_t got;
	FILE *f;

	m->r = NULL;
	m->n = 0;
	if (asprintf(&ipath, "%s/%s", dir, REC_INDEX_NAME) < 0)
		return -1;
	f = fopen(ipath, "rb");
	if (!f) {
		if (errno != ENOENT && asprintf(&msg, "%s: %s; reading every log's header",
						ipath, strerror(errno)) >= 0) {
			report(msg, arg);
			free(msg);
		}
		free(ipath);
		return 0;
	}
	got = fread(&ih, 1, sizeof(ih), f);
	if (fstat(fileno(f), &st) || !st.st_size)
		goto done;	/* created, not written yet: as good as none */
	if ((size_t)got < sizeof(ih) || !rec_index_hdr_ok(&ih)) {
		if (asprintf(&msg, "%s:0: %s; reading every log's header", ipath,
			     rec_index_hdr_why(&ih, got)) >= 0) {
			report(msg, arg);
			free(msg);
		}
		goto done;
	}
	nrec = (st.st_size - sizeof(ih)) / sizeof(*m->r);
	m->r = malloc((nrec ? nrec : 1) * sizeof(*m->r));
	if (!m->r) {
		fclose(f);
		free(ipath);
		return -1;
	}
	m->n = fread(m->r, sizeof(*m->r), nrec, f);
	qsort(m->r, m->n, sizeof(*m->r), rec_index_rec_cmp);
done:
	fclose(f);
	free(ipath);
	return 0;
}

/* A record that still speaks for its log @path, whose file has @st. */
static int rec_index_rec_ok(const struct rec_index_rec *r, const char *path,
			    const struct stat *st)
{
	return rec_index_stamp_ok(r, st) &&
	       !rec_log_check_header(path, &r->h, st->st_size, NULL);
}

/*
 * The record of connection @conn that speaks for its log as @st finds
 * it now (of several, the one written for this version of the file).
 */
static const struct deter_log_header *
rec_index_find(const struct rec_index_map *m, uint64_t conn, const char *path,
	       const struct stat *st)
{
	struct rec_index_rec key = { .h.conn = conn };
	const struct rec_index_rec *r;

	if (!m->n || !conn)
		return NULL;
	r = bsearch(&key, m->r, m->n, sizeof(*r), rec_index_rec_cmp);
	if (!r)
		return NULL;
	while (r > m->r && r[-1].h.conn == conn)
		r--;
	for (; r < m->r + m->n && r->h.conn == conn; r++)
		if (rec_index_rec_ok(r, path, st))
			return &r->h;
	return NULL;
}

/* The connection id of a log named as deter record names them, or 0. */
static uint64_t rec_index_name_conn(const char *name)
{
	unsigned long long conn;
	int len = 0;

	if (sscanf(name, "%16llx.dlog%n", &conn, &len) != 1 || len != 21 || name[len] ||
	    strspn(name, "0123456789abcdef") != 16)
		return 0;
	return conn;
}

static int rec_entry_cmp(const void *a, const void *b)
{
	const struct rec_entry *x = a, *y = b;

	if (x->h.real_ns != y->h.real_ns)
		return x->h.real_ns < y->h.real_ns ? -1 : 1;
	return x->h.conn < y->h.conn ? -1 : x->h.conn > y->h.conn;
}

/* A name rec_scan() lists: a log, or with @parts a log being written. */
static int rec_scan_name(const char *name, int parts)
{
	size_t len = strlen(name);

	if (len > 5 && name[0] != '.' && !strcmp(name + len - 5, ".dlog"))
		return 1;
	return parts && rec_log_is_part(name);
}

static int rec_scan(const char *dir, int use_index, int parts, struct rec_entry **out,
		    size_t *n, struct stat **stats,
		    rec_scan_report report, void *arg, char **err)
{
	struct rec_index_map m = { 0 };
	const struct deter_log_header *ih;
	struct rec_entry *e = NULL, *ne;
	struct stat st, *sts = NULL, *ns;
	char *rerr = NULL;
	struct dirent *d;
	size_t cap = 0;
	DIR *dp;

	*n = 0;
	dp = opendir(dir);
	if (!dp)
		return rec_err(err, "%s: %s", dir, strerror(errno));
	if (use_index && rec_index_load(dir, &m, report, arg))
		goto oom;
	while ((d = readdir(dp))) {
		if (!rec_scan_name(d->d_name, parts))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			ne = realloc(e, cap * sizeof(*e));
			if (!ne)
				goto oom;
			e = ne;
			if (stats) {
				ns = realloc(sts, cap * sizeof(*sts));
				if (!ns)
					goto oom;
				sts = ns;
			}
		}
		if (asprintf(&e[*n].path, "%s/%s", dir, d->d_name) < 0)
			goto oom;
		if (stat(e[*n].path, &st)) {
			rec_err(&rerr, "%s: %s", e[*n].path, strerror(errno));
		} else {
			ih = rec_index_find(&m, rec_index_name_conn(d->d_name), e[*n].path,
					    &st);
			if (ih)
				e[*n].h = *ih;
			else if (rec_log_read_header(e[*n].path, &e[*n].h, &rerr) && !rerr)
				rerr = strdup("unreadable log");
		}
		/* Removed since readdir() (deter record --max-size): not listed. */
		if (rerr && lstat(e[*n].path, &st) && errno == ENOENT) {
			free(rerr);
			rerr = NULL;
			free(e[*n].path);
			continue;
		}
		if (rerr) {
			report(rerr, arg);
			free(rerr);
			rerr = NULL;
			free(e[*n].path);
			continue;
		}
		if (stats)
			sts[*n] = st;
		(*n)++;
	}
	closedir(dp);
	rec_index_map_free(&m);
	if (!stats)
		qsort(e, *n, sizeof(*e), rec_entry_cmp);
	else
		*stats = sts;
	*out = e;
	return 0;
oom:
	closedir(dp);
	rec_index_map_free(&m);
	rec_entries_free(e, *n);
	free(sts);
	*n = 0;
	return rec_err(err, "out of memory");
}

/**
 * rec_dir_scan() - every log of a directory, with its header
 * @dir: the directory
 * @flags: REC_SCAN_PARTS: also the part files of logs being written
 * @out: the logs, oldest first (rec_entries_free() them)
 * @n: how many
 * @report: called with a line for each log (or index) that could not be
 *	read; the scan leaves it out and goes on
 * @arg: for @report
 * @err: the error message
 *
 * Return: 0, or -1 with *err set (@dir unreadable, out of memory).
 */
int rec_dir_scan(const char *dir, int flags, struct rec_entry **out, size_t *n,
		 rec_scan_report report, void *arg, char **err)
{
	return rec_scan(dir, 1, flags & REC_SCAN_PARTS, out, n, NULL, report, arg, err);
}

/**
 * rec_index_rebuild() - write @dir's index anew from its logs' headers
 * @dir: the directory
 * @n: set to how many logs it indexes
 * @report: called for each log that could not be read (left out)
 * @arg: for @report
 * @err: the error message
 *
 * Written to a temporary file renamed over the old index: a reader sees
 * the old one or the new one.
 *
 * Return: 0, or -1 with *err set.
 */
int rec_index_rebuild(const char *dir, size_t *n, rec_scan_report report,
		      void *arg, char **err)
{
	struct rec_index_hdr ih = { .version = REC_INDEX_VERSION,
				    .rec_len = sizeof(struct rec_index_rec) };
	struct rec_entry *e = NULL;
	struct stat *sts = NULL;
	char *tmp = NULL, *dst = NULL;
	int fd = -1, lock = -1, ret = -1;
	FILE *f = NULL;
	size_t i;

	*n = 0;
	memcpy(ih.magic, REC_INDEX_MAGIC, sizeof(ih.magic));
	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, REC_INDEX_NAME) < 0 ||
	    asprintf(&dst, "%s/%s", dir, REC_INDEX_NAME) < 0) {
		rec_err(err, "out of memory");
		goto out;
	}
	/*
	 * The old index stays locked until the new one replaces it: a record
	 * appended meanwhile (rec_index_add()) is not lost with it.
	 */
	lock = open(dst, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (lock >= 0 && flock(lock, LOCK_EX)) {
		close(lock);
		lock = -1;
	}
	if (rec_scan(dir, 0, 0, &e, n, &sts, report, arg, err)) {
		free(tmp);
		tmp = NULL;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (fchmod(fd, 0600)) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	f = fdopen(fd, "wb");
	if (!f) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	fwrite(&ih, sizeof(ih), 1, f);
	for (i = 0; i < *n; i++) {
		struct rec_index_rec r = { .h = e[i].h };

		rec_index_stamp(&r, &sts[i]);
		fwrite(&r, sizeof(r), 1, f);
	}
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fclose(f)) {
		f = NULL;
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	f = NULL;
	if (rename(tmp, dst)) {
		rec_err(err, "%s: %s", dst, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (ret && tmp)
		unlink(tmp);
	if (lock >= 0)
		close(lock);
	free(tmp);
	free(dst);
	rec_entries_free(e, *n);
	free(sts);
	return ret;
}

/*
 * Copy @f's records from offset @from to @to into @out; with @check only
 * those whose log (DIR/ID.dlog) is still as they name it. Return: 0,
 * with *kept counting those copied, or -1 with *err set.
 */
static int rec_index_copy(const char *dir, FILE *f, off_t from, off_t to, int check,
			  FILE *out, size_t *kept, const char *ipath, char **err)
{
	struct rec_index_rec r;
	struct stat st;
	char path[PATH_MAX];

	if (fseeko(f, from, SEEK_SET))
		return rec_err(err, "%s: %s", ipath, strerror(errno));
	for (; from + (off_t)sizeof(r) <= to; from += sizeof(r)) {
		if (fread(&r, sizeof(r), 1, f) != 1)
			return rec_err(err, "%s:%lld: %s", ipath, (long long)from,
				       ferror(f) ? strerror(errno) : "truncated record");
		if (check) {
			snprintf(path, sizeof(path), "%s/%016llx.dlog", dir,
				 (unsigned long long)r.h.conn);
			if (stat(path, &st) || !rec_index_stamp_ok(&r, &st))
				continue;
		}
		if (fwrite(&r, sizeof(r), 1, out) != 1)
			return rec_err(err, "%s: %s", ipath, strerror(errno));
		(*kept)++;
	}
	return 0;
}

/**
 * rec_index_prune() - write @dir's index anew without the logs gone
 * @dir: the directory
 * @kept: set to how many records it keeps
 * @err: the error message
 *
 * The records that still speak for their logs (named DIR/ID.dlog, with
 * the size, times and inode they say) are copied one by one into a new
 * index; no log is read, and the directory is not listed. The old index
 * is locked only at the end, to copy what was appended meanwhile
 * (rec_index_add()) and rename the new one over it: deter record can
 * prune from a thread of its own while it goes on appending.
 *
 * Return: 0 (also with no index), or -1 with *err set.
 */
int rec_index_prune(const char *dir, size_t *kept, char **err)
{
	struct rec_index_hdr ih;
	char *ipath = NULL, *tmp = NULL;
	FILE *f = NULL, *out = NULL;
	struct stat st, now;
	size_t got;
	off_t end;
	int fd, ret = -1;

	*kept = 0;
	if (asprintf(&ipath, "%s/%s", dir, REC_INDEX_NAME) < 0) {
		ipath = NULL;
		rec_err(err, "out of memory");
		goto out;
	}
	f = fopen(ipath, "rb");
	if (!f) {
		ret = errno == ENOENT ? 0 : rec_err(err, "%s: %s", ipath, strerror(errno));
		goto out;
	}
	got = fread(&ih, 1, sizeof(ih), f);
	if (fstat(fileno(f), &st)) {
		rec_err(err, "%s: %s", ipath, strerror(errno));
		goto out;
	}
	if (!st.st_size) {	/* created, not written yet */
		ret = 0;
		goto out;
	}
	if (got < sizeof(ih) || !rec_index_hdr_ok(&ih)) {
		rec_err(err, "%s:0: %s; left as it is (deter index writes it anew)", ipath,
			rec_index_hdr_why(&ih, got));
		goto out;
	}
	/* Whole records: a killed writer's half one is cut by the next. */
	end = sizeof(ih) + (st.st_size - sizeof(ih)) / sizeof(struct rec_index_rec) *
			   sizeof(struct rec_index_rec);
	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, REC_INDEX_NAME) < 0) {
		tmp = NULL;
		rec_err(err, "out of memory");
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	out = fdopen(fd, "wb");
	if (!out || fchmod(fd, 0600)) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		if (!out)
			close(fd);
		goto out_unlink;
	}
	if (fwrite(&ih, sizeof(ih), 1, out) != 1) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	if (rec_index_copy(dir, f, sizeof(ih), end, 1, out, kept, ipath, err))
		goto out_unlink;
	/* What was appended since, under the lock, then the new one in place. */
	if (flock(fileno(f), LOCK_EX) || fstat(fileno(f), &st) || stat(ipath, &now)) {
		rec_err(err, "%s: %s", ipath, strerror(errno));
		goto out_unlink;
	}
	/* deter index wrote it anew meanwhile: that one stands. */
	if (now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
		ret = 0;
		goto out_unlink;
	}
	if (rec_index_copy(dir, f, end, st.st_size, 0, out, kept, ipath, err))
		goto out_unlink;
	if (fflush(out) || fsync(fileno(out))) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	if (rename(tmp, ipath)) {
		rec_err(err, "%s: %s", ipath, strerror(errno));
		goto out_unlink;
	}
	ret = 0;
	goto out;
out_unlink:
	unlink(tmp);
out:
	if (out)
		fclose(out);
	if (f)
		fclose(f);	/* and the lock */
	free(tmp);
	free(ipath);
	return ret;
}

/** rec_index_records() - how many records @dir's index holds (0: none) */
size_t rec_index_records(const char *dir)
{
	struct stat st;
	char *ipath;
	size_t n = 0;

	if (asprintf(&ipath, "%s/%s", dir, REC_INDEX_NAME) < 0)
		return 0;
	if (!stat(ipath, &st) && (size_t)st.st_size > sizeof(struct rec_index_hdr))
		n = (st.st_size - sizeof(struct rec_index_hdr)) / sizeof(struct rec_index_rec);
	free(ipath);
	return n;
}

void rec_entries_free(struct rec_entry *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(e[i].path);
	free(e);
}
