/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for writing log files (rec_write.c): a connection's log
 * whole (rec_log_write()) or as it goes (struct rec_log_writer), and
 * the compression and file writing rec_rewrite.c reuses. Not
 * thread-safe: one compression context serves every log written (free
 * it with rec_log_write_end()). Errors come back in *err (rec_err.h).
 */
#ifndef _REC_WRITE_H
#define _REC_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "rec_ev.h"

/* zstd level of the logs rec_log_write() writes; 0: deter's default. */
extern int rec_log_zstd_level;
/*
 * A log written while its connection goes on; bounded memory: a chunk
 * (a zstd frame) per rec_log_chunk_bytes encoded, the frames moved to a
 * part file per rec_log_spill_bytes (test knobs).
 */
extern size_t rec_log_chunk_bytes, rec_log_spill_bytes;
/* What one log holds at most (test knobs): events, encoded bytes. */
extern size_t rec_log_max_events;
extern uint64_t rec_log_max_raw;

void rec_log_write_end(void);
int rec_log_write(const char *dir, struct deter_log_header *hdr,
		  const struct rec_ev *evs, size_t n,
		  const struct rec_state *states, char **path, char **err);

struct rec_log_writer;
struct rec_log_writer *rec_log_writer_new(void);
int rec_log_writer_full(const struct rec_log_writer *w, size_t n);
int rec_log_writer_add(struct rec_log_writer *w, const char *dir,
		       const struct deter_log_header *hdr,
		       const struct rec_ev *evs, size_t n,
		       const struct rec_state *states, char **err);
int rec_log_writer_finish(struct rec_log_writer *w, const char *dir,
			  struct deter_log_header *hdr, char **path, char **err);
void rec_log_writer_free(struct rec_log_writer *w);
void rec_log_writer_drop(struct rec_log_writer *w);

/* For rec_rewrite.c: a body compressed, a log file put, a log's name. */
struct ZSTD_CCtx_s;	/* zstd.h's ZSTD_CCtx */
size_t rec_log_zbound(size_t rawlen);
size_t rec_log_zcompress(struct ZSTD_CCtx_s *cctx, void *z, size_t zcap,
			 const uint8_t *raw, size_t rawlen);
int rec_log_put(const char *dst, const struct deter_log_header *hdr,
		const void *z, size_t zlen, char **err);
char *rec_log_new_name(const char *dir, uint64_t conn);

#endif /* _REC_WRITE_H */
