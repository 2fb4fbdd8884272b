/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for replay's hooks: the replay-mode handlers of the TCP
 * hooks (<net/deter.h>) for a socket bound to a script.
 *
 * Each returns whether it handled the socket (it is being replayed);
 * the caller then skips recording. They run in the context of their
 * call site; deter_replay_sk_lock_wait() and the owner's backlog check
 * may sleep (an application waiting for its turn), the rest never do.
 */
#ifndef _DETER_REPLAY_HOOK_H
#define _DETER_REPLAY_HOOK_H

#include <linux/types.h>
#include <net/deter.h>

struct deter_sock;
struct sk_buff;
struct sock;

bool deter_replay_sk_lock(struct sock *sk, enum deter_site site, bool *run);
void deter_replay_sk_lock_wait(struct sock *sk);
bool deter_replay_sk_backlog_check(struct sock *sk, bool release);
bool deter_replay_sk_rx(struct sock *sk, struct sk_buff *skb, bool *taken);
bool deter_replay_req_rx(struct sock *sk, struct sk_buff *skb);
bool deter_replay_sk_call(struct sock *sk, enum deter_call call, u64 arg,
			  u32 flags);
bool deter_replay_sk_call_done(struct sock *sk, enum deter_call call,
			       s64 ret, u64 pages);
bool deter_replay_sk_icmp(struct sock *sk);
void deter_replay_clone(struct deter_sock *ds, struct sock *newsk,
			const struct sk_buff *skb);
void deter_replay_established(const struct sock *sk);
void deter_replay_close(struct deter_sock *ds, struct sock *sk);

#endif /* _DETER_REPLAY_HOOK_H */
