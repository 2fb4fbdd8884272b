/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the log body's encoder (rec_enc.c): events in, chunks
 * of a body out, a context going on from one chunk to the next. An
 * encoder belongs to one thread; errors come back in *err (rec_err.h).
 */
#ifndef _REC_ENC_H
#define _REC_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "rec_ev.h"

struct rec_log_enc;

struct rec_log_enc *rec_log_enc_new(void);
int rec_log_enc_add(struct rec_log_enc *enc, const struct rec_ev *evs, size_t n,
		    const struct rec_state *states, char **err);
size_t rec_log_enc_pending(const struct rec_log_enc *enc);
int rec_log_enc_empty(const struct rec_log_enc *enc);
int rec_log_enc_chunk(struct rec_log_enc *enc, uint8_t **out, size_t *len,
		      char **err);
void rec_log_enc_free(struct rec_log_enc *enc);
int rec_log_encode(const struct rec_ev *evs, size_t n,
		   const struct rec_state *states, uint8_t **out, size_t *len,
		   char **err);

#endif /* _REC_ENC_H */
