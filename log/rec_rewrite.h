/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for rewriting logs in place (rec_rewrite.c): a killed
 * recorder's part file made a log, a log compressed again. One caller
 * per file at a time; errors come back in *err (rec_err.h).
 */
#ifndef _REC_REWRITE_H
#define _REC_REWRITE_H

#include <stddef.h>

#include "rec_ev.h"

int rec_log_recover(const char *part, char **path, struct deter_log_header *hdr,
		    char **err);
int rec_log_compact(const char *path, int level, size_t *before, size_t *after,
		    char **err);

#endif /* _REC_REWRITE_H */
