/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for reading deter.ko's trace events: a dedicated tracefs
 * instance "deter" with only deter's events enabled, read from the
 * per-CPU raw ring buffers (mapped, or with libtracefs where they cannot
 * be) and parsed with libtraceevent into a struct rec_table.
 * Single-threaded.
 */
#ifndef _REC_TRACE_H
#define _REC_TRACE_H

struct rec_table;
struct rec_trace;

extern int rec_trace_mmap;

struct rec_trace *rec_trace_open(unsigned int buffer_kb, char **err);
int rec_trace_poll(struct rec_trace *t, struct rec_table *table, char **err);
unsigned long long rec_trace_lost(struct rec_trace *t);
unsigned long long rec_trace_events(const struct rec_trace *t);
void rec_trace_close(struct rec_trace *t);

#endif /* _REC_TRACE_H */
