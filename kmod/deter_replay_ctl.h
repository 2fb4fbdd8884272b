/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for replay's scripts: loading them through debugfs
 * deter/replay, arming and stopping them, and finding the one a socket
 * is replayed from.
 *
 * The script list is read under RCU by the hooks and changed under a
 * mutex in process context. deter_rpl_armed is set while any script is
 * armed: the hooks' first, inline, test.
 */
#ifndef _DETER_REPLAY_CTL_H
#define _DETER_REPLAY_CTL_H

#include <linux/types.h>
#include <linux/wait.h>
#include <net/sock.h>

#include "deter_conn.h"
#include "deter_replay_seq.h"

struct dentry;

extern bool deter_rpl_armed;
extern wait_queue_head_t deter_rpl_users_wq;

/* Some replay is running (the hooks' first, inline, test). */
static inline bool deter_replay_active(void)
{
	return READ_ONCE(deter_rpl_armed);
}

/* The script bound to @sk, if it is being replayed. */
static inline struct deter_rpl *deter_rpl_get(const struct sock *sk)
{
	struct deter_sock *ds;
	struct deter_rpl *rpl;

	if (!READ_ONCE(deter_rpl_armed) || sk->sk_protocol != IPPROTO_TCP)
		return NULL;
	ds = deter_conn_get(sk);
	rpl = ds ? READ_ONCE(ds->rpl) : NULL;
	return rpl && READ_ONCE(rpl->state) == DETER_RPL_RUNNING ? rpl : NULL;
}

int deter_replay_init(struct dentry *dir);
void deter_replay_exit(void);
int deter_replay_arm(bool on);

struct deter_rpl *deter_rpl_find(u32 saddr, u16 sport, u32 daddr, u16 dport);
struct deter_rpl *deter_rpl_find_sk(const struct sock *sk);
struct deter_rpl *deter_rpl_find_child(u16 sport, u16 dport);

#endif /* _DETER_REPLAY_CTL_H */
