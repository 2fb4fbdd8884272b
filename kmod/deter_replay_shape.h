/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the replay's rebuilt arrivals: segments of a script
 * that logs its arrivals' shapes become the skbs the original's driver
 * and GRO made (deter_replay_shape.c).
 */
#ifndef _DETER_REPLAY_SHAPE_H
#define _DETER_REPLAY_SHAPE_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct deter_rpl;

/*
 * The skb mark of an arrival whose shape the replay has made or checked
 * ("dtr" 2): it goes to TCP as it is when due.
 */
#define DETER_RPL_SHAPED_MARK	0x64747202u

bool deter_rpl_shape_rx(struct deter_rpl *rpl, struct sk_buff *skb, u64 idx,
			bool *taken);
bool deter_rpl_shape_child(struct deter_rpl *rpl, struct sk_buff *skb,
			   struct sk_buff_head *out);

#endif /* _DETER_REPLAY_SHAPE_H */
