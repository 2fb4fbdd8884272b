/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for replay's handler caller: the work item that runs, for
 * each replayed socket, what its log has next and no real context will
 * (a timer's handler, TSQ's, an ICMP error, a held segment), and wakes
 * the application whose turn it is.
 *
 * deter_rpl_kick() and deter_rpl_ctx_next() may be called from any
 * context (the latter under rpl->lock); the work runs in process
 * context on an ordered workqueue, one work item per script, and takes
 * the socket lock as the original's contexts did.
 */
#ifndef _DETER_REPLAY_CALLER_H
#define _DETER_REPLAY_CALLER_H

#include <linux/types.h>

struct deter_replay_ev;
struct deter_rpl;
struct sk_buff;
struct sock;
struct work_struct;

int deter_rpl_caller_init(void);
void deter_rpl_caller_exit(void);
void deter_rpl_work(struct work_struct *work);
void deter_rpl_kick(struct deter_rpl *rpl, unsigned long delay);
void deter_rpl_ctx_next(struct deter_rpl *rpl);
void deter_rpl_app_wake(struct deter_rpl *rpl, struct sock *sk,
			const struct deter_replay_ev *at);
void deter_rpl_reinject(struct sock *sk, struct sk_buff *skb, bool to_sk);
void deter_rpl_let_go(struct deter_rpl *rpl);

#endif /* _DETER_REPLAY_CALLER_H */
