/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for an arrival's shape (struct deter_shape): measured at the
 * receive hook when recording, and rebuilt when replaying, so that TCP's
 * memory accounting, coalescing and splicing see the skbs the original's
 * driver and GRO made (DETER_NET_SHAPE).
 */
#ifndef _DETER_SHAPE_H
#define _DETER_SHAPE_H

#include <linux/mm_types.h>
#include <linux/skbuff.h>
#include <linux/types.h>

#include "../include/deter_abi.h"

/*
 * Where the last fragments of recent arrivals ended, each with the
 * sequence number its arrival's payload ended at. An arrival's first
 * fragment continues (DETER_SHAPE_F_CONT) the one holding the byte
 * before it, if that arrival is still here, when it starts where that
 * one ended in the same page: it is the fragment TCP's receive or
 * out-of-order queue coalesces it behind. An in-order arrival finds the
 * one before it, a retransmission filling a hole the one before the
 * hole. A new arrival takes its predecessor's slot, else the least
 * recently used one; recording and replay keep their tables alike
 * (deter_shape_tail_slot()). Recording compares only: it holds no
 * reference.
 */
#define DETER_SHAPE_TAILS	8

struct deter_shape_tails {
	const struct page *page[DETER_SHAPE_TAILS];	/* NULL: unused */
	u32 end[DETER_SHAPE_TAILS];		/* offset past it in page */
	u32 end_seq[DETER_SHAPE_TAILS];
	u32 used[DETER_SHAPE_TAILS];		/* when last set, by clock */
	u32 clock;
};

/*
 * Where a replay's rebuilt fragments go: for each slot of @t, a page its
 * fragments hold references to (t.page[], t.end[] its next free byte).
 */
struct deter_shape_pages {
	struct deter_shape_tails t;
	struct page *page[DETER_SHAPE_TAILS];	/* referenced, or NULL */
	u32 size[DETER_SHAPE_TAILS];
};

int deter_shape_tail_find(const struct deter_shape_tails *t, u32 seq);
unsigned int deter_shape_tail_slot(struct deter_shape_tails *t, int found);
void deter_shape_of(const struct sk_buff *skb, struct deter_shape_tails *t,
		    struct deter_shape *s);
const char *deter_shape_diff(const struct deter_shape *x,
			     const struct deter_shape *y, u32 *vx, u32 *vy);
bool deter_shape_eq(const struct deter_shape *x, const struct deter_shape *y);
struct sk_buff *deter_shape_build(struct sk_buff_head *frames,
				  const struct deter_shape *s, u32 segs,
				  struct deter_shape_pages *pg,
				  const char **why);
void deter_shape_pages_free(struct deter_shape_pages *pg);

#endif /* _DETER_SHAPE_H */
