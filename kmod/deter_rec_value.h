/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for recording's values: what TCP took from the kernel rather
 * than computed (clocks, jiffies, IDs, random numbers, the host's answers
 * and memory decisions), logged for a recorded socket so that replay can
 * hand TCP the same.
 *
 * Hooks run in the context of their call site (see <net/deter.h>): the
 * socket lock or its spinlock held, or softirq for a request socket.
 * Nothing here sleeps or allocates. The jiffies a context reads are held
 * per CPU (one slot for softirq, one for the task running there).
 */
#ifndef _DETER_REC_VALUE_H
#define _DETER_REC_VALUE_H

#include <linux/types.h>
#include <net/deter.h>

#include "deter_ipid.h"

struct deter_sock;
struct page_frag;
struct sk_buff;
struct sock;

/*
 * A passive handshake's values, kept until its child socket exists
 * (deter_rec_value.c): one slot per handshake, by namespace and 4-tuple.
 */
#define DETER_REC_HS_SLOTS	64
#define DETER_REC_SYNACK_MAX	4	/* SYN-ACKs per handshake */

struct deter_rec_hs {
	u32 netns;		/* the namespace's inode number */
	__be32 laddr, raddr;	/* this end's, the peer's */
	u16 lport, rport;	/* host order; 0, 0: free */
	u8 n;			/* SYN-ACK clocks in ns[] */
	bool have_syn;		/* the SYN was seen */
	bool fastopen;		/* a Fast Open SYN: its option, or data */
	u16 syn_ipid;		/* the SYN's IP ID */
	u8 nagain;		/* IDs in syn_again[]; more: U8_MAX */
	u16 syn_again[DETER_IPID_SYN_AGAIN];	/* SYNs sent again, arrived */
	u8 nreq;		/* the peer's segments at the request socket */
	u8 ntimer;		/* timeouts in timer_at[]; more: U8_MAX */
	u8 timer_at[DETER_REC_SYNACK_MAX];	/* nreq at each timeout */
	unsigned long stamp;	/* when claimed, jiffies */
	u64 ns[DETER_REC_SYNACK_MAX];	/* SYN-ACK clock reads, ns */
};

u64 deter_rec_value(const struct sock *sk, const struct sk_buff *skb,
		    enum deter_value what, u64 val);
bool deter_rec_page_frag_refill(struct sock *sk, struct page_frag *pfrag);
void deter_rec_page_frag_send(struct deter_sock *ds, struct sock *sk, bool done);
void deter_rec_synack_emit(struct deter_sock *ds, const struct sock *newsk);
void deter_rec_req_rx(const struct sock *req, const struct sk_buff *skb);

void deter_rec_jiffies(struct deter_sock *ds);
unsigned long deter_rec_jiffies_read(void);
void deter_rec_jif_set(unsigned long now);
void deter_rec_jif_clear(void);
void deter_rec_jif_step_begin(void);
void deter_rec_jif_step_end(void);
#if IS_ENABLED(CONFIG_KUNIT)
struct deter_rec_hs *deter_rec_hs_slot(struct deter_rec_hs *tab, u32 netns,
				       __be32 laddr, u16 lport, __be32 raddr,
				       u16 rport, bool claim, unsigned long now);
#endif

#endif /* _DETER_REC_VALUE_H */
