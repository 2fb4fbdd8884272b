/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the replay packet corrector: an NFQUEUE consumer on one
 * replay host's ingress that makes the packets of the replayed
 * connections arrive as they did when recorded: the same ones dropped,
 * in the same order, with the same CE marks.
 *
 * Threading: corr_run() is synchronous and single-threaded; it owns its
 * netlink socket and every buffer it allocates. The caller may set *stop
 * from a signal handler or another thread; corr_run() notices it within
 * CORR_POLL_MS. flows[] and their arrival arrays are only read, and must
 * stay valid until corr_run() returns.
 */
#ifndef _CORRECTOR_H
#define _CORRECTOR_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The skb mark an arrival to be CE-marked is accepted with. The host's
 * ingress must have, after the queue's chain, a prerouting rule that sets
 * ECN to CE on packets with this mark and clears it (replay_net.c):
 *
 *   meta mark 0x64747201 ip ecn set ce meta mark set 0
 *
 * Without it such packets go on unmarked and the replay diverges.
 */
#define CORR_CE_MARK	0x64747201u	/* "dtr" 1 */

enum corr_kind {
	CORR_ARRIVE,			/* one arrival in the original */
};

/* One packet arrival at this host in the recording. */
struct corr_arrival {
	uint64_t idx;			/* packet index: IP ID extended to 64 bits */
	uint8_t ce;			/* 1: it arrived CE-marked (ECN 0b11) */
	uint32_t segs;			/* GSO: positions it covers, 0/1: 1 */
};

/* SYN-ACKs an active end got whose TS values are kept, at most. */
#define CORR_SYNACK_TS	8

/* Runs of packets lost before a passive end's first arrival, at most. */
#define CORR_HEAD_GAPS	5

/* One recorded connection, in the direction peer -> this host. */
struct corr_flow {
	uint32_t saddr, daddr;		/* peer, this host; host byte order */
	uint16_t sport, dport;		/* peer's port, ours; host byte order */
	const struct corr_arrival *arr;	/* original arrival order, no SYNs */
	size_t narr;			/* entries in arr */
	int have_syn_ipid;		/* 1: syn_ipid is known */
	uint16_t syn_ipid;		/* IP ID of the SYN that got through */
	int have_ctl;			/* 1: the peer's time-wait answers came */
	/*
	 * The peer's SYN-ACKs that never came: it sent more (its log's
	 * SYN-ACK clocks) than this end got (SYN RX events). Those whose TS
	 * value is not among the ones this end got are dropped; without TS
	 * values, the first ones.
	 */
	unsigned int synack_drop;
	/* The TS values of the peer's SYN-ACKs this end got, when logged. */
	unsigned int nsynack_ts;
	uint32_t synack_ts[CORR_SYNACK_TS];
	/*
	 * The peer's packets lost between its SYN and this (passive) end's
	 * first arrival, which the receiver logged as its first gaps: SYNs
	 * it sent again among them are dropped too (numbered packets are
	 * dropped as not among the arrivals).
	 */
	unsigned int nhead;
	struct { uint16_t ipid, count; } head[CORR_HEAD_GAPS];
	/*
	 * The edges of the peer's series (log/rec_edge.c): its first IP ID
	 * after the handshake, and the one past its last when the peer's
	 * socket closed before this end's last arrival; packets between
	 * them and the arrivals were lost.
	 */
	int have_first;			/* 1: first_ipid is known */
	uint16_t first_ipid;		/* the peer's first after the handshake */
	int have_end;			/* 1: end_ipid is known */
	uint16_t end_ipid;		/* one past the peer's last */
	/*
	 * 1: the receiver's deter.ko rebuilds each arrival from its segments
	 * (its log has the arrivals' shapes): GSO packets are queued as
	 * their segments, each dropped, held and marked on its own.
	 */
	int split;
};

/* What corr_run() did, for the caller's summary. */
struct corr_stats {
	uint64_t passed;		/* flow packets accepted (incl. SYNs) */
	uint64_t dropped;		/* flow packets dropped: lost in the original */
	uint64_t marked;		/* accepted with CORR_CE_MARK */
	uint64_t held_max;		/* most packets held at once */
	uint64_t foreign;		/* accepted, of no flow (not in passed) */
	uint64_t timeouts;		/* gave up waiting for an arrival */
	int split;			/* failed: a GSO packet the original's network split */
};

enum {
	/*
	 * Most packets held back at once, all flows together: a few
	 * bandwidth-delay products of a testbed link (100 Mbit/s x 10 ms is
	 * ~85 full-size segments), far more than any recorded reordering
	 * needs, and still within the kernel queue length corr_run() asks for.
	 */
	CORR_HOLD_MAX = 4096,
	/*
	 * A held packet waits at most this long for its predecessors: past
	 * the 1 s initial RTO and any testbed RTT, so only an arrival that
	 * will never come (the replay diverged) is given up on.
	 */
	CORR_HOLD_TIMEOUT_MS = 2000,
	/* *stop is checked at least this often; half the 100 ms promised. */
	CORR_POLL_MS = 50,
};

int corr_run(uint16_t queue, const struct corr_flow *flows, size_t nflows,
	     volatile sig_atomic_t *stop, struct corr_stats *st, char **err);
uint64_t corr_idx_extend(uint64_t ref, uint16_t id);

#endif /* _CORRECTOR_H */
