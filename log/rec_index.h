/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The index of a log directory (DIR/index): every log's header in one
 * file, so that deter ls and the lookup of a connection's other end read
 * one file instead of every log. See rec_index.c.
 */
#ifndef _REC_INDEX_H
#define _REC_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "deter_abi.h"

#define REC_INDEX_NAME "index"
#define REC_INDEX_MAGIC "DETERIDX"
#define REC_INDEX_VERSION 1

/* The file starts with this, then holds records back to back. */
struct rec_index_hdr {
	char magic[8];		/* REC_INDEX_MAGIC, not NUL-terminated */
	uint32_t version;	/* REC_INDEX_VERSION */
	uint32_t rec_len;	/* sizeof(struct rec_index_rec) */
};

/* One log, as it was when indexed. */
struct rec_index_rec {
	struct deter_log_header h;	/* the log's header */
	uint64_t size;			/* its file's size, bytes */
	int64_t mtime_ns;		/* its file's mtime, ns since the epoch */
	int64_t ctime_ns;		/* its inode's change time, ns */
	uint64_t ino;			/* its inode number */
};

/* A log of a directory, as rec_dir_scan() found it. */
struct rec_entry {
	char *path;
	struct deter_log_header h;
};

/*
 * Called with one line (no newline) for each log or index that could not
 * be read; the scan goes on without it.
 */
typedef void (*rec_scan_report)(const char *msg, void *arg);

int rec_index_add(const char *path, const struct deter_log_header *h,
		  char **err);
int rec_index_rebuild(const char *dir, size_t *n, rec_scan_report report,
		      void *arg, char **err);
int rec_index_prune(const char *dir, size_t *kept, char **err);
size_t rec_index_records(const char *dir);
/* rec_dir_scan() also lists the part files of logs being written. */
#define REC_SCAN_PARTS 1

int rec_dir_scan(const char *dir, int flags, struct rec_entry **out, size_t *n,
		 rec_scan_report report, void *arg, char **err);
void rec_entries_free(struct rec_entry *e, size_t n);

#endif /* _REC_INDEX_H */
