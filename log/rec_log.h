/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's connection logs, the log library that the
 * recorder and the replay share: everything below in one include.
 *
 *   rec_ev.h       a connection's events in memory (struct rec_ev, rec_log)
 *   rec_err.h      errors: -1 and a message "FILE:OFFSET: what" in *err
 *   rec_enc.h      events -> a log body (chunks of streams)
 *   rec_dec.h      a log body -> events, strictly
 *   rec_write.h    log files written: whole, or as a connection goes on
 *   rec_read.h     log files read: the header checked, the body decoded
 *   rec_rewrite.h  part files recovered, logs compacted
 *   rec_names.h    names of calls, options, congestion controls
 *   rec_sysctl.h   the host-wide settings a log records
 *
 * The directory's index (rec_index.h) and the varint codec
 * (rec_varint.h) are included where used. Each object belongs to one
 * thread; writing logs is not thread-safe at all (one compression
 * context, rec_write.h).
 */
#ifndef _REC_LOG_H
#define _REC_LOG_H

#include "rec_ev.h"
#include "rec_err.h"
#include "rec_enc.h"
#include "rec_dec.h"
#include "rec_write.h"
#include "rec_read.h"
#include "rec_rewrite.h"
#include "rec_names.h"
#include "rec_sysctl.h"

#endif /* _REC_LOG_H */
