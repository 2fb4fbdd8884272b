/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the log body's decoder (rec_dec.c): a decompressed body
 * in, its events or an error naming the offset ("body+N: what", in
 * *err, rec_err.h) out. Reentrant: the state is the caller's.
 */
#ifndef _REC_DEC_H
#define _REC_DEC_H

#include <stddef.h>
#include <stdint.h>

#include "rec_ev.h"

int rec_log_decode(const uint8_t *buf, size_t len, uint32_t nevents,
		   struct rec_log *log, char **err);

#endif /* _REC_DEC_H */
