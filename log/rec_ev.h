/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for a connection's events in memory, as the log library
 * decodes them and the recorder and the replay use them: struct rec_ev,
 * the values of its checkpoints (struct rec_state) and a whole log
 * (struct rec_log). Plain data; no locking.
 */
#ifndef _REC_EV_H
#define _REC_EV_H

#include <stddef.h>
#include <stdint.h>

#include "deter_abi.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* One event of a connection, in memory. */
struct rec_ev {
	uint32_t seq;		/* per-socket sequence number */
	uint16_t type;		/* enum deter_ev_type, or DETER_EV_STATE */
	uint16_t sub;		/* type-specific, see deter_abi.h */
	uint64_t a, b, c;	/* type-specific; STATE: a indexes states */
};

/* The values of a STATE event (enum deter_state_field). */
struct rec_state {
	uint64_t v[DETER_ST_MAX];
};

/* A record's tag is type << 4 | sub: an event type, or one of these. */
enum {
	REC_LOG_RUN = 0,	/* repeat the previous; sub: its event type */
	REC_LOG_SEQGAP = 14,	/* the next record's seq skips */
	REC_LOG_CALLREF = 15,	/* a CALL from the dictionary */
};

/*
 * Where a log body's bytes go, per record tag (stat[type][sub]): records,
 * the events they stand for, and their encoded bytes.
 */
struct rec_log_stat {
	uint32_t records;	/* records of this tag */
	uint32_t events;	/* events they stand for */
	uint64_t bytes;		/* their encoded bytes, all streams */
};

enum {
	/* No log may claim more events than this (a 32-bit seq space). */
	REC_LOG_MAX_EVENTS = 1 << 28,
};

/* A log, read and decoded whole (rec_log_read()). */
struct rec_log {
	struct deter_log_header hdr;	/* as the file has it */
	struct rec_ev *evs;		/* every event, in sequence */
	size_t nevs;
	struct rec_state *states;	/* the values STATE events index */
	size_t nstates;
	struct rec_log_stat stat[16][16]; /* body bytes by record tag */
	uint32_t stat_index;	/* bytes of the body's stream lengths */
	uint32_t nchunks;	/* chunks of the body */
};

#endif /* _REC_EV_H */
