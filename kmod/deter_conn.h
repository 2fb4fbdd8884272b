/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's per-connection bookkeeping: the socket lifetime
 * hooks and the counters behind debugfs deter/stats.
 *
 * The hooks run under rcu_read_lock() in the context of their TCP call
 * site (process context for socket(), softirq for an accepted child) and
 * never sleep. Counters are atomic; stats may be read at any time.
 */
#ifndef _DETER_CONN_H
#define _DETER_CONN_H

struct dentry;
struct sk_buff;
struct sock;

void deter_conn_sk_init(struct sock *sk);
void deter_conn_sk_clone(struct sock *newsk, const struct sock *parent,
			 const struct sk_buff *skb);
void deter_conn_sk_destroy(struct sock *sk);

void deter_conn_debugfs_init(struct dentry *dir);

#endif /* _DETER_CONN_H */
