/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for recording's hooks: the record-mode handlers of the TCP
 * hooks (<net/deter.h>) and of the socket state changes, and the
 * transmit probe they attach.
 *
 * Hooks run in the context of their call site: the lock hooks and the
 * socket calls under the socket lock, arrivals and ICMP errors in softirq
 * under its spinlock, the transmit probe wherever a packet reaches the
 * device. They never sleep or allocate, and do nothing for a socket that
 * is not recorded (deter_rec_get()).
 */
#ifndef _DETER_REC_HOOK_H
#define _DETER_REC_HOOK_H

#include <linux/types.h>
#include <net/deter.h>

struct deter_sock;
struct sk_buff;
struct sock;
struct tcphdr;

int deter_rec_init(void);
void deter_rec_exit(void);

void deter_rec_sk_lock(struct sock *sk, enum deter_site site);
void deter_rec_backlog_check(struct sock *sk);
void deter_rec_release(struct sock *sk);
void deter_rec_sk_rx(struct sock *sk, const struct sk_buff *skb);
void deter_rec_sk_call(struct sock *sk, enum deter_call call, u64 arg,
		       u32 flags);
void deter_rec_sk_call_done(struct sock *sk, enum deter_call call, s64 ret,
			    u64 pages);
void deter_rec_sk_icmp(struct sock *sk, const struct sk_buff *skb, u32 info);
void deter_rec_clone(struct sock *newsk, const struct sk_buff *skb);
void deter_rec_state(struct deter_sock *ds, struct sock *sk, int oldstate,
		     int newstate);
void deter_rec_close(struct deter_sock *ds, struct sock *sk);

#if IS_ENABLED(CONFIG_KUNIT)
bool deter_rec_tsval(const struct tcphdr *th, u32 *tsval);
#endif

#endif /* _DETER_REC_HOOK_H */
