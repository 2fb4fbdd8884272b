/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's recording: the TCP hooks' record-mode handlers,
 * the transmit and state-change probes, and the control file through
 * which `deter record` arms recording.
 *
 * Hooks run in the context of their call site (see <net/deter.h>) and
 * never sleep or allocate. Control writes are serialised by a mutex.
 */
#ifndef _DETER_REC_H
#define _DETER_REC_H

#include <linux/types.h>
#include <net/deter.h>

struct deter_sock;
struct dentry;
struct seq_file;
struct sk_buff;
struct sock;

/* Why a connection (or part of one) could not be recorded. */
enum deter_rec_lost_reason {
	DETER_REC_LOST_NOMEM = 1,	/* no memory for its state */
};

/*
 * A passive handshake's values, kept until its child socket exists
 * (deter_rec.c): one slot per handshake, by namespace and 4-tuple.
 */
#define DETER_REC_HS_SLOTS	64
#define DETER_REC_SYNACK_MAX	4	/* SYN-ACKs per handshake */

struct deter_rec_hs {
	u32 netns;
	__be32 laddr, raddr;
	u16 lport, rport;	/* 0, 0: free */
	u8 n;
	bool have_syn;
	bool fastopen;		/* a Fast Open SYN: its option, or data */
	u16 syn_ipid;
	unsigned long stamp;	/* when claimed, jiffies */
	u64 ns[DETER_REC_SYNACK_MAX];
};

int deter_rec_init(struct dentry *dir);
void deter_rec_exit(void);

void deter_rec_sk_lock(struct sock *sk, enum deter_site site);
void deter_rec_backlog_check(struct sock *sk);
bool deter_rec_page_frag_refill(struct sock *sk, struct page_frag *pfrag);
void deter_rec_sk_rx(struct sock *sk, const struct sk_buff *skb);
void deter_rec_sk_call(struct sock *sk, enum deter_call call, u64 arg,
		       u32 flags);
void deter_rec_sk_call_done(struct sock *sk, enum deter_call call, s64 ret,
			    u64 pages);
void deter_rec_sk_icmp(struct sock *sk, const struct sk_buff *skb, u32 info);

unsigned long deter_rec_jiffies_read(void);
#if IS_ENABLED(CONFIG_KUNIT)
void deter_rec_jif_set(unsigned long now);
void deter_rec_jif_clear(void);
struct deter_rec_hs *deter_rec_hs_slot(struct deter_rec_hs *tab, u32 netns,
				       __be32 laddr, u16 lport, __be32 raddr,
				       u16 rport, bool claim, unsigned long now);
bool deter_rec_tsval(const struct tcphdr *th, u32 *tsval);
#endif
u64 deter_rec_value(const struct sock *sk, const struct sk_buff *skb,
		    enum deter_value what, u64 val);
void deter_rec_clone(struct sock *newsk, const struct sk_buff *skb);
void deter_rec_close(struct deter_sock *ds, struct sock *sk);
void deter_rec_lost(const struct sock *sk, u32 reason);
void deter_rec_stats_show(struct seq_file *m);

#endif /* _DETER_REC_H */
