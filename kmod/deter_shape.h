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
 * The page the last arrival's last fragment was in and where it ended,
 * to tell whether the next one's first fragment continues it
 * (DETER_SHAPE_F_CONT). Recording compares only: it holds no reference.
 */
struct deter_shape_tail {
	const struct page *page;
	u32 end;
};

/*
 * Where a replay's rebuilt fragments go: a page its fragments hold
 * references to, and the next free byte in it.
 */
struct deter_shape_pages {
	struct page *page;	/* referenced, or NULL */
	u32 off;
	u32 size;
};

void deter_shape_of(const struct sk_buff *skb, struct deter_shape_tail *t,
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
