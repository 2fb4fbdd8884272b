/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for replay's value reader: the values TCP takes from the
 * kernel (clocks, jiffies, IDs, random numbers, the host's answers and
 * memory decisions), answered from a replayed socket's log.
 *
 * Each returns whether it answered (the socket, or for a handshake
 * value its end, is replayed); the caller otherwise asks recording.
 * Callable in the hooks' contexts, softirq included; nothing sleeps but
 * a page-fragment refill, which runs where sk_page_frag_refill() may.
 */
#ifndef _DETER_REPLAY_VALUE_H
#define _DETER_REPLAY_VALUE_H

#include <linux/types.h>
#include <net/deter.h>

struct deter_rpl;
struct page_frag;
struct sk_buff;
struct sock;

bool deter_replay_value(const struct sock *sk, const struct sk_buff *skb,
			enum deter_value what, u64 *val);
bool deter_replay_jiffies(unsigned long *now);
bool deter_rpl_signal(struct deter_rpl *rpl);
bool deter_replay_page_frag_refill(struct sock *sk, struct page_frag *pfrag,
				   bool *ok);

#endif /* _DETER_REPLAY_VALUE_H */
