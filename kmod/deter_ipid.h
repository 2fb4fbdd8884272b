/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for IP ID arithmetic: turning the 16-bit IP IDs of one
 * connection's packets into a 64-bit packet index, and classifying an
 * arrival against the index expected next. Pure functions, no locking.
 */
#ifndef _DETER_IPID_H
#define _DETER_IPID_H

#include <linux/types.h>

/**
 * enum deter_ipid_class - what an arrival says about the network
 * @DETER_IPID_NEXT: the packet expected next
 * @DETER_IPID_GAP: later than expected: the packets in between were
 *	dropped or are reordered behind it
 * @DETER_IPID_LATE: earlier than expected: a reordered or duplicated
 *	packet arriving after a later one
 */
enum deter_ipid_class {
	DETER_IPID_NEXT,
	DETER_IPID_GAP,
	DETER_IPID_LATE,
};

u64 deter_ipid_extend(u64 ref, u16 id);
enum deter_ipid_class deter_ipid_classify(u64 expected, u64 idx);
/* SYNs sent again before a passive end's first arrival, at most. */
#define DETER_IPID_SYN_AGAIN	4

/* A run of lost packets: the first's index, and how many. */
struct deter_ipid_run {
	u64 start;
	u32 count;
};

unsigned int deter_ipid_head_gap(u16 syn_id, const u16 *again,
				 unsigned int nagain, u16 first_id,
				 struct deter_ipid_run *gaps);

#endif /* _DETER_IPID_H */
