/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the recorder's connection table: events arrive from
 * several CPUs' buffers in any order; the table gathers them per
 * connection and writes a connection's log once it has ended and every
 * event up to its summary is present. Single-threaded.
 */
#ifndef _REC_CONN_H
#define _REC_CONN_H

#include <stdint.h>

#include "rec_log.h"

struct rec_table;

/* Fields of a deter_conn trace event, as the recorder reads them. */
struct rec_conn_id {
	uint64_t real_ns, mono_ns;
	uint32_t seq, saddr, daddr, netns, iss, irs, ipid, flags, mss;
	uint32_t wscale, tsoffset;
	uint16_t sport, dport;
	char cc[16];
};

struct rec_table *rec_table_new(const char *dir, const char *host);
void rec_table_free(struct rec_table *t);
struct rec_keep;
void rec_table_keep(struct rec_table *t, struct rec_keep *k);
int rec_table_conn(struct rec_table *t, uint64_t conn, uint64_t ts,
		   const struct rec_conn_id *id);
int rec_table_events(struct rec_table *t, uint64_t conn, uint64_t ts,
		     const struct rec_ev *ev, size_t n);
int rec_table_state(struct rec_table *t, uint64_t conn, uint64_t ts,
		    uint32_t seq, int final, const struct rec_state *st);
unsigned int rec_table_unwritten(const struct rec_table *t);
unsigned int rec_table_settings_changed(const struct rec_table *t);
/* Events a connection holds before they are encoded; a test knob. */
extern size_t rec_conn_chunk_events;
void rec_table_flush(struct rec_table *t, int stopping, unsigned int lost);
const char *rec_table_incomplete_why(const struct rec_table *t, char *buf, size_t len);
void rec_table_counts(const struct rec_table *t, unsigned int *written,
		      unsigned int *incomplete, unsigned int *open);

#endif /* _REC_CONN_H */
