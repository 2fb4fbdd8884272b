/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for replay's sequencer: a loaded script (struct deter_rpl),
 * the classification of its events, and the cursors that walk it.
 *
 * Locking: a script's cursors and state are under rpl->lock (a spinlock
 * taken with BH off, or from softirq); the functions marked "under
 * rpl->lock" expect it held. The event array and header never change
 * once loaded, so the inline predicates need no lock. Nothing here
 * sleeps or allocates.
 */
#ifndef _DETER_REPLAY_SEQ_H
#define _DETER_REPLAY_SEQ_H

#include <linux/list.h>
#include <linux/pid.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "../include/deter_abi.h"
#include "deter_shape.h"

struct deter_sock;
struct sock;
struct task_struct;

/* A bound on a script's events, checked before anything is sized by it. */
#define DETER_RPL_MAX_EVENTS	BIT(24)
/*
 * Events searched ahead for a segment that came early, or a batch the
 * owner takes: a bound on a hook's work, wider than any reordering seen.
 */
#define DETER_RPL_LOOKAHEAD	8192

/* A reason, in words, that goes into a divergence's message. */
#define DETER_RPL_WHY_LEN	128
/* Segments held back per socket: a window's worth at 1 KiB MSS. */
#define DETER_RPL_MAX_HELD	1024

enum deter_rpl_state {
	DETER_RPL_LOADED,	/* loaded, no socket bound yet */
	DETER_RPL_RUNNING,	/* bound: its socket is replayed */
	DETER_RPL_DONE,		/* its socket closed at the log's end */
	DETER_RPL_DIVERGED,	/* stopped at a difference, rpl->msg */
};

/*
 * A timing-dependent value the log lists only where it is not the usual
 * one (a test that found true, a backlog that was not empty), each after
 * the run of usual ones before it.
 */
struct deter_rpl_rare {
	const struct deter_replay_ev *ev;	/* the next true one */
	u32 cursor;				/* just past it */
	u32 seq;				/* the last one's event */
};

struct deter_rpl {
	struct list_head node;		/* deter_rpl_list, RCU */
	struct pid *owner;		/* the process that loaded it */
	bool armed;			/* its owner said "replay" */
	struct deter_replay_hdr hdr;	/* as loaded; never changes */
	struct deter_replay_ev *ev;	/* hdr.nevents, by sequence */
	u64 *states;			/* hdr.nstates x DETER_ST_MAX */

	spinlock_t lock;		/* cursors and state below */
	enum deter_rpl_state state;
	struct sock *sk;		/* bound socket, held */
	struct deter_sock *ds;		/* its state; NULL once closed */
	u32 ctx, clk, call, synack, rnd; /* cursors: event indices */
	struct deter_rpl_rare tsq;	/* TSQ_FULL */
	struct deter_rpl_rare autocork;	/* AUTOCORK */
	struct deter_rpl_rare hostq;	/* HOST_QUEUED */
	struct deter_rpl_rare bl;	/* BACKLOG_LEN */
	struct deter_rpl_rare pf;	/* PAGE_FRAG */
	struct deter_rpl_rare mem;	/* MEM: the next change */
	struct deter_rpl_rare busy;	/* HOST_BUSY: the next change */
	struct deter_rpl_rare host;	/* HOST */
	u32 sig;			/* the next HOST SIGNAL, or past the end */
	u32 ptw;			/* the next RX CTL for the peer's time-wait */
	u32 ctx_seq;			/* seq of the last non-owned context */
	u32 app_woken;			/* ctx + 1 of the last app wake-up */
	u64 rx_last;			/* highest index a segment's RX logs */
	u64 clock;			/* last CLOCK value handed out */
	unsigned long jiffies;		/* jiffies TCP reads */
	u32 jif;			/* JIFFIES events before it applied */
	bool ipid_given;		/* the first IP ID was handed out */
	u32 diverged_nr;		/* deter_rpl_diverged at its divergence */
	char msg[192];			/* why it diverged */
	/* why the first arrival of a passive end was not made as logged */
	char child_why[DETER_RPL_WHY_LEN];
	/* a passive end's request socket: the peer's segments, timeouts run */
	u32 req_rx, req_timeouts;

	/*
	 * Arrivals rebuilt in their logged shape (deter_shape.c), when the
	 * script logs shapes (NET SHAPE): the segments of the one being
	 * rebuilt, its RX event and the index of its next segment.
	 */
	bool shaped;			/* the script has NET SHAPE events */
	u32 shape_ev;			/* 1 + the last NET SHAPE ctx passed, or 0 */
	struct sk_buff_head frames;
	u32 frames_ev;
	u64 frames_next;
	u32 frames_segs;
	struct deter_shape_pages pages;	/* rebuilt fragments' bytes */
	struct deter_shape_tails tail;	/* rebuilt arrivals' last fragments */

	struct sk_buff_head held;	/* segments not yet due */
	u32 held_unlogged;		/* control segments not in the log, ever held */
	bool ended;			/* held ones go to TCP: hold no more */
	u32 dead_from;			/* RX from here died in the backlog, or 0 */
	struct task_struct *driver;	/* the worker inside lock_sock() */
	wait_queue_head_t wq;		/* apps waiting for their turn */
	struct delayed_work work;	/* the handler caller */
	atomic_t users;			/* processes sleeping on wq */
};

extern const char *const deter_rpl_lock_names[DETER_LOCK_MAX];

/* Event @i of @rpl's script, or NULL past its end. */
static inline const struct deter_replay_ev *
deter_rpl_at(const struct deter_rpl *rpl, u32 i)
{
	return i < rpl->hdr.nevents ? &rpl->ev[i] : NULL;
}

/* The log's number of script event @e; past the end, one past its last. */
static inline u32 deter_rpl_seq(const struct deter_rpl *rpl,
				const struct deter_replay_ev *e)
{
	if (e)
		return e->seq;
	return rpl->hdr.nevents ? rpl->ev[rpl->hdr.nevents - 1].seq + 1 : 0;
}

static inline bool deter_rpl_is_icmp(const struct deter_replay_ev *e)
{
	return e->type == DETER_EV_NET && e->sub == DETER_NET_ICMP;
}

static inline bool deter_rpl_is_shape(const struct deter_replay_ev *e)
{
	return e->type == DETER_EV_NET && e->sub == DETER_NET_SHAPE;
}

/* A context event: one that takes the socket (LOCK, RX, an ICMP error). */
static inline bool deter_rpl_is_ctx(const struct deter_replay_ev *e)
{
	return e->type == DETER_EV_LOCK || e->type == DETER_EV_RX ||
	       deter_rpl_is_icmp(e);
}

/* An event that happened while a process owned the socket. */
static inline bool deter_rpl_is_owned(const struct deter_replay_ev *e)
{
	if (e->type == DETER_EV_RX)
		return e->b & DETER_RX_OWNED;
	if (deter_rpl_is_icmp(e))
		return e->a & DETER_ICMP_F_OWNED;
	return e->type == DETER_EV_LOCK && e->sub != DETER_LOCK_APP &&
	       ((e->a & DETER_LOCK_F_DEFERRED) || e->sub == DETER_LOCK_BACKLOG);
}

/* A HOST SIGNAL: outside the run of host answers (deter_rpl_signal()). */
static inline bool deter_rpl_is_signal(const struct deter_replay_ev *e)
{
	return e->type == DETER_EV_VALUE && e->sub == DETER_V_HOST &&
	       e->b >> 32 == DETER_HOST_SIGNAL;
}

int deter_rpl_validate(const void *buf, size_t len);
void __printf(2, 3) deter_rpl_diverge(struct deter_rpl *rpl,
				      const char *fmt, ...);
void deter_rpl_describe(const struct deter_replay_ev *e, char *buf,
			size_t len);
void deter_rpl_check(struct deter_rpl *rpl, const struct deter_replay_ev *e);
void deter_rpl_jiffies_to(struct deter_rpl *rpl, u32 i);
void deter_rpl_ctx_skip(struct deter_rpl *rpl, u32 i,
			const struct deter_replay_ev *taken);
void deter_rpl_ctx_advance(struct deter_rpl *rpl);
const struct deter_replay_ev *deter_rpl_next_value(struct deter_rpl *rpl,
						   u32 *cursor, u16 what);
void deter_rpl_bind(struct deter_rpl *rpl, struct sock *sk);
int deter_rpl_deferred_bit(u8 who);
bool deter_rpl_is_deferred(const struct deter_replay_ev *e);
const struct deter_replay_ev *deter_rpl_next_batch(struct deter_rpl *rpl);
bool deter_rpl_batch_due(struct deter_rpl *rpl);
bool deter_rpl_rx_match(const struct deter_replay_ev *e, bool syn, bool ctl,
			u64 idx);
u32 deter_rpl_rx_find(const struct deter_rpl *rpl, bool syn, bool ctl, u64 idx);
bool deter_rpl_skb_ctl(const struct sk_buff *skb);
u32 deter_rpl_child_ev(const struct deter_rpl *rpl);
u32 deter_rpl_req_timeouts_logged(const struct deter_rpl *rpl);
u32 deter_rpl_req_timeouts_due(struct deter_rpl *rpl, u32 max);
u64 deter_rpl_rx_idx(const struct deter_sock *ds, const struct sk_buff *skb);
struct sk_buff *deter_rpl_held_find(struct deter_rpl *rpl,
				    const struct deter_replay_ev *e);

#endif /* _DETER_REPLAY_SEQ_H */
