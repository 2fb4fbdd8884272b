/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an always-on deter record keeps of its log directory: at most so
 * many bytes of logs (--max-size), none older than so long (--max-age).
 * See rec_keep.c.
 */
#ifndef _REC_KEEP_H
#define _REC_KEEP_H

#include <stdint.h>

#include "deter_abi.h"
#include "rec_index.h"

struct rec_keep;

/* Removals before the index is pruned (tests: DETER_RECORD_PRUNE_MIN). */
extern size_t rec_keep_prune_min;

struct rec_keep_limits {
	uint64_t max_bytes;	/* the logs' disk use, bytes; 0: no limit */
	uint64_t max_age_ns;	/* since a connection ended; 0: no limit */
};

/* What rec_keep_run() removed so far, and what the directory keeps. */
struct rec_keep_stats {
	uint64_t removed;		/* logs removed */
	uint64_t removed_flagged;	/* of those, flagged ones */
	uint64_t removed_bytes;		/* their disk use */
	uint64_t logs;			/* logs kept */
	uint64_t bytes;			/* their disk use */
};

struct rec_keep *rec_keep_open(const char *dir, const struct rec_keep_limits *lim,
			       rec_scan_report report, void *arg, char **err);
int rec_keep_add(struct rec_keep *k, const char *path,
		 const struct deter_log_header *h);
void rec_keep_run(struct rec_keep *k, uint64_t now_ns);
void rec_keep_stop(struct rec_keep *k, uint64_t now_ns);
void rec_keep_stats(const struct rec_keep *k, struct rec_keep_stats *s);
void rec_keep_free(struct rec_keep *k);

#endif /* _REC_KEEP_H */
