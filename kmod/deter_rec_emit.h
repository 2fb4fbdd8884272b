/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for recording's emit path: a recorded connection's events,
 * batched per connection, and its records that are not events (identity,
 * checkpoints, summary, discard), as trace events (deter_trace.h).
 *
 * Callable from any context, the socket lock held or not: a connection's
 * batch has a spinlock of its own (ev_lock, IRQs off). Nothing sleeps or
 * allocates.
 */
#ifndef _DETER_REC_EMIT_H
#define _DETER_REC_EMIT_H

#include <linux/types.h>

struct deter_sock;
struct sock;

u32 deter_rec_emit(struct deter_sock *ds, u16 type, u16 sub, u64 a, u64 b,
		   u64 c);
u32 deter_rec_state_ev(struct deter_sock *ds, struct sock *sk, u32 kind,
		       u32 rx_zero_wnd);
void deter_rec_conn_ev(struct deter_sock *ds, struct sock *sk, u32 flags);
void deter_rec_flush_all(void);
u64 deter_rec_events_total(void);

#endif /* _DETER_REC_EMIT_H */
