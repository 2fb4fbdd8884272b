/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for recording's switch: whether deter records, which new
 * connections it selects (a send-time sampling threshold and a port
 * list), and the counters deter/stats shows.
 *
 * The switch is flipped in process context under the control file's
 * mutex (deter_ctl.c); hooks read it in any context, without a lock: the
 * threshold and ports are published before the armed flag
 * (smp_store_release()).
 */
#ifndef _DETER_REC_CTL_H
#define _DETER_REC_CTL_H

#include <linux/atomic.h>
#include <linux/types.h>

#include "deter_conn.h"

struct seq_file;
struct sock;

/* Ports to record; none means all. 16 covers a testbed's services. */
#define DETER_REC_PORTS_MAX 16

/* Why a connection (or part of one) could not be recorded. */
enum deter_rec_lost_reason {
	DETER_REC_LOST_NOMEM = 1,	/* no memory for its state */
};

extern bool deter_rec_armed;
extern u32 deter_rec_threshold_ns;

extern atomic64_t deter_rec_conns;	/* connections selected */
extern atomic64_t deter_rec_not_ipv4;	/* IPv6 ones left out */
extern atomic64_t deter_rec_tx_pkts;	/* packets seen leaving, recorded */
extern atomic64_t deter_rec_tx_orphan;	/* of those, found by 4-tuple */

/* Recording is armed: new connections may be selected. */
static inline bool deter_rec_active(void)
{
	return READ_ONCE(deter_rec_armed);
}

/* The state of @sk if deter is recording it, else NULL. */
static inline struct deter_sock *deter_rec_get(const struct sock *sk)
{
	struct deter_sock *ds;

	if (!READ_ONCE(deter_rec_armed))
		return NULL;
	ds = deter_conn_get(sk);
	return ds && READ_ONCE(ds->rec) ? ds : NULL;
}

void deter_rec_start(u32 threshold_ns, const u16 *ports, unsigned int n);
void deter_rec_disarm(void);
bool deter_rec_port_match(const struct sock *sk);
void deter_rec_lost(const struct sock *sk, u32 reason);
void deter_rec_ctl_show(struct seq_file *m);
void deter_rec_stats_show(struct seq_file *m);

#endif /* _DETER_REC_CTL_H */
