/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's replay mode: the sequencer, handler caller and
 * reader that re-execute recorded connections (DETER §3.1, §4 "Replay").
 *
 * `deter replay` writes one script per connection end to debugfs
 * deter/replay, then "replay" to deter/control. A socket whose 4-tuple
 * matches a loaded script is replayed: its contexts take the lock in the
 * recorded order, its real timers are skipped and their handlers run when
 * the log says, and the values TCP reads come from the script.
 *
 * The hooks below return whether they handled the socket (it is being
 * replayed); the caller then skips recording.
 */
#ifndef _DETER_REPLAY_H
#define _DETER_REPLAY_H

#include <linux/types.h>
#include <net/deter.h>

struct deter_sock;
struct dentry;
struct sk_buff;
struct sock;

int deter_replay_init(struct dentry *dir);
void deter_replay_exit(void);
int deter_replay_arm(bool on);
extern bool deter_rpl_armed;

/* Some replay session is running (the hooks' first, inline, test). */
static inline bool deter_replay_active(void)
{
	return READ_ONCE(deter_rpl_armed);
}

bool deter_replay_sk_lock(struct sock *sk, enum deter_site site, bool *run);
void deter_replay_sk_lock_wait(struct sock *sk);

bool deter_replay_sk_backlog_check(struct sock *sk, bool release);
bool deter_replay_page_frag_refill(struct sock *sk, struct page_frag *pfrag,
				   bool *ok);
bool deter_replay_sk_rx(struct sock *sk, struct sk_buff *skb, bool *taken);
bool deter_replay_sk_call(struct sock *sk, enum deter_call call, u64 arg,
			  u32 flags);
bool deter_replay_sk_icmp(struct sock *sk);
bool deter_replay_sk_call_done(struct sock *sk, enum deter_call call,
			       s64 ret, u64 pages);
bool deter_replay_value(const struct sock *sk, const struct sk_buff *skb,
			enum deter_value what, u64 *val);
bool deter_replay_jiffies(unsigned long *now);
void deter_replay_clone(struct deter_sock *ds, struct sock *newsk,
			const struct sk_buff *skb);
void deter_replay_established(const struct sock *sk);
void deter_replay_close(struct deter_sock *ds, struct sock *sk);

#endif /* _DETER_REPLAY_H */
