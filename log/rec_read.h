/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for reading log files (rec_read.c): a header checked, or a
 * whole log decoded; and what deter ls makes of a header. Reentrant;
 * errors come back in *err as "FILE:OFFSET: what" (rec_err.h).
 */
#ifndef _REC_READ_H
#define _REC_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rec_ev.h"

int rec_log_is_part(const char *path);
int rec_log_check_header(const char *path, const struct deter_log_header *h,
			 off_t size, char **err);
int rec_log_read_header(const char *path, struct deter_log_header *hdr,
			char **err);
struct rec_log *rec_log_read(const char *path, char **err);
void rec_log_free(struct rec_log *log);
const char *rec_log_status_str(uint32_t status, char *buf, size_t len);
int rec_log_flagged(const struct deter_log_header *h);

#endif /* _REC_READ_H */
