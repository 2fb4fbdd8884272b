/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * Interface for deter's kernel/userspace definitions: the only copy of
 * anything deter.ko and the deter command must agree on. Fixed-width
 * types and explicit padding only; every log and event layout carries the
 * version below, bumped on any incompatible change.
 */
#ifndef _DETER_ABI_H
#define _DETER_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
#endif

/*
 * Version of the event and log formats defined here: a log of any other
 * version is refused whole (log/rec_read.c).
 */
enum {
	DETER_ABI_VERSION = 18,
};

/*
 * Events per deter_ev trace record, at most: deter.ko batches a
 * connection's events, the recorder reads the arrays. The tracepoint,
 * the ring buffer and the reader cost per record: 16 (a 524-byte record,
 * seven to a 4 KiB sub-buffer) makes a quarter as many records as 4 would.
 * A plain number: the trace event's format file spells it out.
 */
#define DETER_EV_BATCH	16

/* Default send-time sampling threshold (DETER §3.3): 5 us. */
enum {
	DETER_SAMPLE_THRESHOLD_NS = 5000,
};

/*
 * Event types: one per record deter.ko emits and the log stores. Every
 * event of a connection carries a per-socket sequence number; events
 * taken under the socket lock are in lock order, and a gap in the
 * sequence means an event was lost (the connection is then incomplete).
 *
 *   type             sub               a                   b
 *   LOCK             enum deter_lock   DETER_LOCK_F_* bits; 0
 *                                       BACKLOG: the owner's
 *                                       check that found it
 *   RX               0                 packet index        ECN bits | flags
 *   NET              enum deter_net    packet index        count
 *                                       (SHAPE: a, b as struct deter_shape)
 *   CALL             enum deter_abi_call bytes asked       flags << 32 | tid
 *   CALL_DONE        enum deter_abi_call return value (s64)  0; a spliced
 *                                                          send's pages
 *   SAMPLE           0                 packet index        send time, ns
 *                                       (gap_q10 in c of the raw event)
 *   CONFIG           enum deter_cfg    value               0
 *   VALUE            enum deter_abi_value  see there          0
 */

/*
 * A CALL's flags are the call's msg_flags, the kernel's own included:
 * MSG_SPLICE_PAGES (include/linux/socket.h, not in libc) marks a send
 * that sendfile() or splice() made, whose pages TCP took as they were.
 */
#define DETER_MSG_SPLICE_PAGES	0x8000000

/*
 * The pages a spliced send handed TCP, b of its CALL_DONE.
 * TCP takes them into its segments as they are, a fragment per page
 * (skb_splice_from_iter()), and merges a page's bytes with the previous
 * fragment's when they follow on in the same page, so where the bytes
 * start and whether they go on from the previous spliced send decide
 * where skbs end, what SACK can shift and what the receiver coalesces.
 * A file's pages (sendfile(), or splice() from a pipe a file filled) are
 * known from the first byte's offset in its page and the bytes asked:
 * every later page starts at 0, every earlier one is used to its end.
 *   OFF     the first byte's offset in its page
 *   KNOWN   deter.ko saw the pages (0: it did not, the rest means nothing)
 *   CONT    the first byte follows on from the last byte the previous
 *           spliced send had TCP take, in the same page
 *   OTHER   not a file's layout (a page starts past 0 or ends short
 *           inside the send, e.g. a socket's received bytes spliced on,
 *           or more than DETER_SPLICE_MAX_PAGES pages); the pages are then
 *           not logged, and a replay cannot lay the bytes out so
 */
#define DETER_SPLICE_OFF	0xffffULL
#define DETER_SPLICE_KNOWN	0x10000ULL
#define DETER_SPLICE_CONT	0x20000ULL
#define DETER_SPLICE_OTHER	0x40000ULL
#define DETER_SPLICE_MAX_PAGES	64

/*
 * What else a send asked of TCP that puts messages on the socket's error
 * queue, more bits of b of its CALL_DONE, beside the pages:
 *   ZEROCOPY  MSG_ZEROCOPY on a socket with SO_ZEROCOPY (or a kernel
 *             caller's own completion): TCP pins the sender's pages, a
 *             fragment per page, and queues a completion once the last
 *             segment holding them is freed
 *   TXSTAMP   transmit timestamps (SO_TIMESTAMPING's TX bits, from the
 *             socket or the send's control message): TCP marks the
 *             send's last byte, which keeps TCP from merging its skb
 *             with others, and queues the timestamps
 * Each message queued is charged to the socket's receive memory until
 * the application reads it (CALL RECV_ERRQUEUE), unlocked, at times the
 * log cannot place among TCP's own reads of that memory: the replay
 * refuses such sends.
 */
#define DETER_SEND_ZEROCOPY	0x100000ULL
#define DETER_SEND_TXSTAMP	0x200000ULL
#define DETER_SEND_ERRQ		(DETER_SEND_ZEROCOPY | DETER_SEND_TXSTAMP)

/*
 * The flags of a splice read's CALL:
 *   FLAGS     the splice flags (SPLICE_F_*)
 *   NONBLOCK  the socket's file was O_NONBLOCK: splice() reads so, and
 *             waits as SO_RCVTIMEO says otherwise (recvmsg() has
 *             MSG_DONTWAIT in its own flags instead)
 *   ROOM      the buffers the pipe had room for when the call started,
 *             at least 1, DETER_SPLICE_RD_ROOM_MAX if more: TCP adds a
 *             buffer per fragment of its segments until the pipe is
 *             full, which ends the call (the pipe is locked through it)
 */
#define DETER_SPLICE_RD_FLAGS		0xffU
#define DETER_SPLICE_RD_NONBLOCK	0x100U
#define DETER_SPLICE_RD_ROOM_SHIFT	12
#define DETER_SPLICE_RD_ROOM_MAX	0xfffffU
#define DETER_SPLICE_RD_ROOM(f)		((__u32)(f) >> DETER_SPLICE_RD_ROOM_SHIFT)
enum deter_ev_type {
	DETER_EV_LOCK = 1,
	DETER_EV_RX,
	DETER_EV_NET,
	DETER_EV_CALL,
	DETER_EV_CALL_DONE,
	DETER_EV_SAMPLE,
	DETER_EV_CONFIG,
	DETER_EV_MAX,
};

/* Who took the socket lock. */
enum deter_lock {
	DETER_LOCK_APP,			/* process: a socket call */
	DETER_LOCK_WRITE_TIMER,		/* RTO, TLP, RACK, zero-window probe */
	DETER_LOCK_DELACK_TIMER,	/* delayed ACK */
	DETER_LOCK_KEEPALIVE_TIMER,	/* keepalive, FIN_WAIT2 */
	DETER_LOCK_COMP_ACK_TIMER,	/* SACK compression */
	DETER_LOCK_TSQ,			/* TSQ tasklet, pacing timer */
	/*
	 * The owner takes a backlog batch; a: which of its looks at its
	 * backlog in this ownership (from 1) found the batch.
	 */
	DETER_LOCK_BACKLOG,
	/*
	 * The owner lowers the path MTU as an ICMP fragmentation-needed
	 * error that came while it owned the socket asked (always DEFERRED).
	 */
	DETER_LOCK_MTU_REDUCED,
	DETER_LOCK_MAX,
};

/*
 * a of a LOCK event other than BACKLOG: DEFERRED, the owner ran the
 * handler in tcp_release_cb(), because its timer or tasklet (TSQ, write
 * or delayed-ACK timer; the SACK compression hrtimer defers to the
 * delayed-ACK timer's handler) had found the socket owned; logged where
 * the owner ran it, not where it was deferred. NOT_DUE
 * (write and delayed-ACK timers, not deferred), the handler found its
 * timer re-armed to a later time and only armed it again.
 */
#define DETER_LOCK_F_DEFERRED	0x1
#define DETER_LOCK_F_NOT_DUE	0x2

/* a of a NET ICMP event: the socket was owned (it took no lock turn). */
#define DETER_ICMP_F_OWNED	0x10000

/* What the network did, seen at the receiver from IP IDs and ECN. */
enum deter_net {
	DETER_NET_GAP,		/* IDs [a, a + b) missing: dropped or reordered */
	DETER_NET_LATE,		/* ID a arrived after later ones: reordered */
	DETER_NET_CE,		/* ID a arrived marked CE */
	/*
	 * An ICMP error reached the socket: a = type << 8 | code, with
	 * DETER_ICMP_F_OWNED if a process owned the socket,
	 * b = its info (the next-hop MTU of a fragmentation-needed error)
	 * << 32 | the sequence number of the segment it quotes minus
	 * snd_una then.
	 */
	DETER_NET_ICMP,
	/*
	 * Not the network's doing: this end's socket is closing, and a is
	 * the IP ID it would have given its next packet, one past the last
	 * of its series (the peer's log counts its last packets lost
	 * against it: struct deter_log_header, ipid_end).
	 */
	DETER_NET_TX_END,
	/*
	 * Not the network's doing either: the skb the next RX event's
	 * segment arrived in was built as a and b say (struct deter_shape,
	 * deter_shape_pack()). Logged before that RX, and only when the
	 * shape differs from the last one logged: a run of arrivals of one
	 * shape costs one event.
	 */
	DETER_NET_SHAPE,
	/*
	 * Not the network's doing either: this passive end's request socket
	 * timed out and sent its SYN-ACK again (reqsk_timer_handler()) when
	 * a of the peer's segments had reached it (SYNs sent again, ACKs it
	 * did not take). Logged with the handshake's values, one per
	 * timeout, in order; replay runs the timeout there.
	 */
	DETER_NET_SYNACK_TIMER,
	DETER_NET_MAX,
};

/*
 * What TCP reads of an arriving skb besides its bytes and headers, at
 * deter's receive hook (skb->data at the TCP header): the receive memory
 * it charges (truesize), whether coalescing may append it to the skb
 * before or steal its head (headlen, head_frag, cloned, pp_recycle,
 * nr_frags, frag_list), whether the backlog condenses it (tailroom:
 * end_offset - headroom - headlen), rcv_mss (gso_size), and how many
 * pipe buffers a splice of its fragments takes (runs: fragments each
 * contiguous in one page with the one before count once; CONT: its first
 * continues the arrival before's last, which a splice of the two
 * coalesced merges). The driver and GRO decide all of it, not the sender.
 */
#define DETER_SHAPE_RUN_LENS	4

struct deter_shape {
	__u32 truesize;
	__u32 end_offset;	/* skb_end_offset(): head buffer size */
	__u16 headroom;		/* head to the TCP header */
	__u16 headlen;		/* TCP header and payload in the head */
	__u16 gso_size;
	__u8 nr_frags;
	__u8 frag_list;		/* members of its frag_list */
	__u8 runs;		/* contiguous runs among its fragments */
	__u8 flags;		/* DETER_SHAPE_F_* */
	/*
	 * Bytes in each of the first runs, when there are several (0 past
	 * them); the runs after share the rest. Where a run ends decides
	 * how many bytes a splice with little pipe room takes.
	 */
	__u16 run_len[DETER_SHAPE_RUN_LENS];
};

#define DETER_SHAPE_F_HEAD_FRAG		0x1	/* head is a page fragment */
#define DETER_SHAPE_F_CLONED		0x2	/* skb_cloned() */
#define DETER_SHAPE_F_PP_RECYCLE	0x4	/* page_pool pages */
/*
 * Its first fragment continues the last one of the arrival that ended
 * where its payload begins (struct deter_shape_tails in kmod/).
 */
#define DETER_SHAPE_F_CONT		0x8
#define DETER_SHAPE_F_ALL		0xf

/*
 *   a: truesize | end_offset << 32 (20 bits) | nr_frags << 52 (6 bits)
 *      | flags << 58 (4 bits)
 *   b: headroom | headlen << 16 | gso_size << 32 | frag_list << 48
 *      | runs << 56 (6 bits)
 *   c: run_len[0] | run_len[1] << 16 | run_len[2] << 32 | run_len[3] << 48
 * A field too large for its bits is saturated: such a shape cannot be
 * rebuilt, and the replay says so.
 */
#define DETER_SHAPE_END_MAX	0xfffffU
#define DETER_SHAPE_FRAGS_MAX	0x3fU

static inline void deter_shape_pack(const struct deter_shape *s, __u64 *a,
				    __u64 *b, __u64 *c)
{
	unsigned int i;

	__u64 end = s->end_offset < DETER_SHAPE_END_MAX ? s->end_offset :
		    DETER_SHAPE_END_MAX;
	__u64 nr = s->nr_frags < DETER_SHAPE_FRAGS_MAX ? s->nr_frags :
		   DETER_SHAPE_FRAGS_MAX;
	__u64 runs = s->runs < DETER_SHAPE_FRAGS_MAX ? s->runs :
		     DETER_SHAPE_FRAGS_MAX;

	*a = s->truesize | end << 32 | nr << 52 |
	     (__u64)(s->flags & DETER_SHAPE_F_ALL) << 58;
	*b = s->headroom | (__u64)s->headlen << 16 | (__u64)s->gso_size << 32 |
	     (__u64)s->frag_list << 48 | runs << 56;
	*c = 0;
	for (i = 0; i < DETER_SHAPE_RUN_LENS; i++)
		*c |= (__u64)s->run_len[i] << (16 * i);
}

/* Return: 0, or -1 if a or b has bits no shape sets. */
static inline int deter_shape_unpack(__u64 a, __u64 b, __u64 c,
				     struct deter_shape *s)
{
	unsigned int i;

	s->truesize = (__u32)a;
	s->end_offset = a >> 32 & DETER_SHAPE_END_MAX;
	s->nr_frags = a >> 52 & DETER_SHAPE_FRAGS_MAX;
	s->flags = a >> 58 & 0x3f;
	s->headroom = (__u16)b;
	s->headlen = (__u16)(b >> 16);
	s->gso_size = (__u16)(b >> 32);
	s->frag_list = (__u8)(b >> 48);
	s->runs = b >> 56 & 0xff;
	for (i = 0; i < DETER_SHAPE_RUN_LENS; i++)
		s->run_len[i] = (__u16)(c >> (16 * i));
	return s->flags & ~DETER_SHAPE_F_ALL || s->runs > DETER_SHAPE_FRAGS_MAX ?
	       -1 : 0;
}

/* Socket calls (same order as the kernel's enum deter_call). */
enum deter_abi_call {
	DETER_ABI_CALL_SENDMSG,
	DETER_ABI_CALL_RECVMSG,
	DETER_ABI_CALL_SHUTDOWN,
	DETER_ABI_CALL_CLOSE,
	DETER_ABI_CALL_SETSOCKOPT,	/* a: value, flags: TCP_QUICKACK or TCP_WINDOW_CLAMP */
	DETER_ABI_CALL_SPLICE_READ,	/* splice() from the socket */
	DETER_ABI_CALL_RECV_ERRQUEUE,	/* recvmsg(MSG_ERRQUEUE), unlocked */
	DETER_ABI_CALL_MAX,
};

/* Socket configuration that changed (recorded at each socket call). */
enum deter_cfg {
	DETER_CFG_SNDBUF,	/* sk_sndbuf, bytes */
	DETER_CFG_RCVBUF,	/* sk_rcvbuf, bytes */
	DETER_CFG_NODELAY,	/* tp->nonagle bits */
	DETER_CFG_USER_MSS,	/* TCP_MAXSEG, bytes */
	DETER_CFG_OFFLOAD,	/* route's device: DETER_OFFLOAD_*, MTU << 32 */
	DETER_CFG_USERLOCKS,	/* buffer sizes the app set: DETER_LOCK_*BUF */
	DETER_CFG_SYSCTL,	/* a sysctl: enum deter_sysctl << 32 | value */
	DETER_CFG_TOS,		/* IP_TOS without the ECN bits (inet->tos) */
	DETER_CFG_TTL,		/* IP_TTL, 0: the route's default */
	DETER_CFG_KEEPALIVE,	/* SO_KEEPALIVE, TCP_KEEP*: DETER_KA_* packed */
	DETER_CFG_USER_TIMEOUT,	/* TCP_USER_TIMEOUT, ms */
	DETER_CFG_NOTSENT_LOWAT, /* TCP_NOTSENT_LOWAT, bytes; 0: the sysctl's */
	DETER_CFG_RCVLOWAT,	/* SO_RCVLOWAT, bytes (1 by default) */
	DETER_CFG_LINGER,	/* SO_LINGER: on | seconds << 1 */
	DETER_CFG_CC,		/* TCP_CONGESTION the app set: DETER_CC_PACK() */
	DETER_CFG_TCP,		/* another option: DETER_TCPOPT_PACK() */
	DETER_CFG_MAX,		/* at most 16: the sub is 4 bits in a log */
};

/*
 * DETER_CFG_CC: the congestion control's name, its first 8 bytes (NUL
 * padded), byte i at bits 8i; logged when the application chose it
 * (icsk_ca_setsockopt), not when TCP or a route did, and only names one
 * can ask for (dctcp's fallback "dctcp-reno" is not).
 */
#define DETER_CC_BYTES		8

/*
 * DETER_CFG_TCP: options only the application changes, one per event:
 * enum deter_tcpopt << 48 | value.
 */
enum deter_tcpopt {
	DETER_TCPOPT_THIN_LTO,		/* TCP_THIN_LINEAR_TIMEOUTS, 0 or 1 */
	DETER_TCPOPT_SYNCNT,		/* TCP_SYNCNT, 0: the sysctl's */
	DETER_TCPOPT_LINGER2,		/* TCP_LINGER2, s (s32), -1 or 0: see tcp(7) */
	DETER_TCPOPT_TX_DELAY,		/* TCP_TX_DELAY, us */
	DETER_TCPOPT_MAX_PACING_RATE,	/* SO_MAX_PACING_RATE, B/s; RATE_MAX: none */
	DETER_TCPOPT_PRIORITY,		/* SO_PRIORITY (IP_TOS sets it too) */
	DETER_TCPOPT_MARK,		/* SO_MARK */
	DETER_TCPOPT_RCVTIMEO,		/* SO_RCVTIMEO: 0 none, else 1 + us */
	DETER_TCPOPT_SNDTIMEO,		/* SO_SNDTIMEO: 0 none, else 1 + us */
	DETER_TCPOPT_MAX,
};

#define DETER_TCPOPT_VAL_MASK	((1ULL << 48) - 1)
#define DETER_TCPOPT_RATE_MAX	DETER_TCPOPT_VAL_MASK
#define DETER_TCPOPT_PACK(id, v) ((__u64)(id) << 48 | ((__u64)(v) & DETER_TCPOPT_VAL_MASK))
#define DETER_TCPOPT_ID(a)	((unsigned int)((a) >> 48))
#define DETER_TCPOPT_VAL(a)	((a) & DETER_TCPOPT_VAL_MASK)

/*
 * DETER_CFG_KEEPALIVE: SOCK_KEEPOPEN, TCP_KEEPCNT, TCP_KEEPINTVL and
 * TCP_KEEPIDLE (seconds) in one value; 0 in a field: the sysctl's.
 */
#define DETER_KA_ON		0x1
#define DETER_KA_CNT(a)		((unsigned int)((a) >> 1) & 0xff)
#define DETER_KA_INTVL(a)	((unsigned int)((a) >> 16) & 0xffff)
#define DETER_KA_IDLE(a)	((unsigned int)((a) >> 32) & 0xffff)
#define DETER_KA_PACK(on, cnt, intvl, idle)				\
	((__u64)!!(on) | (__u64)((cnt) & 0xff) << 1 |			\
	 (__u64)((intvl) & 0xffff) << 16 | (__u64)((idle) & 0xffff) << 32)

/*
 * The TCP sysctls of a connection's network namespace that its execution
 * reads (6.12), logged once at its start (CONFIG SYSCTL, a = id << 32 |
 * value in the sysctl's own units) when they differ from what a new
 * namespace starts with (tcp_sk_init()); the replay sets them in its
 * testbed's namespaces. tcp_rmem and tcp_wmem, which a new namespace
 * copies from the host's initial one, are always logged, one event per
 * element. Where each lives and its default: kmod/deter_rec.c; names:
 * recorder/rec_log.c.
 */
enum deter_sysctl {
	DETER_SYSCTL_TCP_ECN,
	DETER_SYSCTL_TCP_ECN_FALLBACK,
	DETER_SYSCTL_TCP_SACK,
	DETER_SYSCTL_TCP_WINDOW_SCALING,
	DETER_SYSCTL_TCP_TIMESTAMPS,
	DETER_SYSCTL_TCP_DSACK,
	DETER_SYSCTL_TCP_EARLY_RETRANS,
	DETER_SYSCTL_TCP_RECOVERY,
	DETER_SYSCTL_TCP_REORDERING,
	DETER_SYSCTL_TCP_MAX_REORDERING,
	DETER_SYSCTL_TCP_FRTO,
	DETER_SYSCTL_TCP_RETRIES1,
	DETER_SYSCTL_TCP_RETRIES2,
	DETER_SYSCTL_TCP_ORPHAN_RETRIES,
	DETER_SYSCTL_TCP_SYN_RETRIES,
	DETER_SYSCTL_TCP_SYNACK_RETRIES,
	DETER_SYSCTL_TCP_SYN_LINEAR_TIMEOUTS,
	DETER_SYSCTL_TCP_THIN_LINEAR_TIMEOUTS,
	DETER_SYSCTL_TCP_SLOW_START_AFTER_IDLE,
	DETER_SYSCTL_TCP_RETRANS_COLLAPSE,
	DETER_SYSCTL_TCP_APP_WIN,
	DETER_SYSCTL_TCP_ADV_WIN_SCALE,
	DETER_SYSCTL_TCP_MODERATE_RCVBUF,
	DETER_SYSCTL_TCP_TSO_WIN_DIVISOR,
	DETER_SYSCTL_TCP_TSO_RTT_LOG,
	DETER_SYSCTL_TCP_MIN_TSO_SEGS,
	DETER_SYSCTL_TCP_AUTOCORKING,
	DETER_SYSCTL_TCP_LIMIT_OUTPUT_BYTES,
	DETER_SYSCTL_TCP_NOTSENT_LOWAT,
	DETER_SYSCTL_TCP_MIN_RTT_WLEN,
	DETER_SYSCTL_TCP_PACING_SS_RATIO,
	DETER_SYSCTL_TCP_PACING_CA_RATIO,
	DETER_SYSCTL_TCP_COMP_SACK_DELAY_NS,
	DETER_SYSCTL_TCP_COMP_SACK_SLACK_NS,
	DETER_SYSCTL_TCP_COMP_SACK_NR,
	DETER_SYSCTL_TCP_BACKLOG_ACK_DEFER,
	DETER_SYSCTL_TCP_PINGPONG_THRESH,
	DETER_SYSCTL_TCP_RTO_MIN_US,
	DETER_SYSCTL_TCP_MTU_PROBING,
	DETER_SYSCTL_TCP_BASE_MSS,
	DETER_SYSCTL_TCP_MIN_SND_MSS,
	DETER_SYSCTL_TCP_PROBE_THRESHOLD,
	DETER_SYSCTL_TCP_PROBE_INTERVAL,
	DETER_SYSCTL_TCP_MTU_PROBE_FLOOR,
	DETER_SYSCTL_TCP_KEEPALIVE_TIME,
	DETER_SYSCTL_TCP_KEEPALIVE_PROBES,
	DETER_SYSCTL_TCP_KEEPALIVE_INTVL,
	DETER_SYSCTL_TCP_FIN_TIMEOUT,
	DETER_SYSCTL_TCP_STDURG,
	DETER_SYSCTL_TCP_RFC1337,
	DETER_SYSCTL_TCP_WORKAROUND_SIGNED_WINDOWS,
	DETER_SYSCTL_TCP_SHRINK_WINDOW,
	DETER_SYSCTL_TCP_CHALLENGE_ACK_LIMIT,
	DETER_SYSCTL_TCP_INVALID_RATELIMIT,
	DETER_SYSCTL_TCP_NOMETRICS_SAVE,
	DETER_SYSCTL_TCP_NO_SSTHRESH_METRICS_SAVE,
	DETER_SYSCTL_TCP_FASTOPEN,
	DETER_SYSCTL_TCP_PLB_ENABLED,
	DETER_SYSCTL_TCP_RMEM0,
	DETER_SYSCTL_TCP_RMEM1,
	DETER_SYSCTL_TCP_RMEM2,
	DETER_SYSCTL_TCP_WMEM0,
	DETER_SYSCTL_TCP_WMEM1,
	DETER_SYSCTL_TCP_WMEM2,
	DETER_SYSCTL_CORE_RMEM_MAX,	/* net.core.rmem_max: the host's */
	/*
	 * The metrics of the connection's route that TCP reads, when the
	 * route sets them (ip route ... initcwnd N): the initial windows,
	 * the window clamp and advertised MSS, and the ones TCP takes only
	 * locked (rto_min in ms; cwnd, ssthresh, reordering seed the
	 * connection's cached metrics).
	 */
	DETER_SYSCTL_ROUTE_INITCWND,
	DETER_SYSCTL_ROUTE_INITRWND,
	DETER_SYSCTL_ROUTE_WINDOW,
	DETER_SYSCTL_ROUTE_ADVMSS,
	DETER_SYSCTL_ROUTE_RTO_MIN,
	DETER_SYSCTL_ROUTE_CWND,
	DETER_SYSCTL_ROUTE_SSTHRESH,
	DETER_SYSCTL_ROUTE_REORDERING,
	/*
	 * Congestion-control module parameters (/sys/module/tcp_cubic/
	 * parameters/...), global and outside deter.ko's reach: deter record
	 * reads them, hands them to deter.ko (control "param ID VALUE") and
	 * re-reads them once a second; deter.ko logs those not at 6.12's
	 * default at each connection's start.
	 */
	DETER_SYSCTL_CUBIC_FAST_CONVERGENCE,
	DETER_SYSCTL_CUBIC_BETA,
	DETER_SYSCTL_CUBIC_INITIAL_SSTHRESH,
	DETER_SYSCTL_CUBIC_BIC_SCALE,	/* 0444: set at boot only */
	DETER_SYSCTL_CUBIC_TCP_FRIENDLINESS,
	DETER_SYSCTL_CUBIC_HYSTART,
	DETER_SYSCTL_CUBIC_HYSTART_DETECT,
	DETER_SYSCTL_CUBIC_HYSTART_LOW_WINDOW,
	DETER_SYSCTL_CUBIC_HYSTART_ACK_DELTA_US,
	DETER_SYSCTL_DCTCP_SHIFT_G,
	DETER_SYSCTL_DCTCP_ALPHA_ON_INIT,
	/* The other congestion controls in 6.12 that have parameters. */
	DETER_SYSCTL_BIC_FAST_CONVERGENCE,
	DETER_SYSCTL_BIC_MAX_INCREMENT,
	DETER_SYSCTL_BIC_LOW_WINDOW,
	DETER_SYSCTL_BIC_BETA,
	DETER_SYSCTL_BIC_INITIAL_SSTHRESH,
	DETER_SYSCTL_BIC_SMOOTH_PART,
	DETER_SYSCTL_HTCP_USE_RTT_SCALING,
	DETER_SYSCTL_HTCP_USE_BANDWIDTH_SWITCH,
	DETER_SYSCTL_VEGAS_ALPHA,
	DETER_SYSCTL_VEGAS_BETA,
	DETER_SYSCTL_VEGAS_GAMMA,
	DETER_SYSCTL_HYBLA_RTT0,
	DETER_SYSCTL_NV_PAD,
	DETER_SYSCTL_NV_RESET_PERIOD,
	DETER_SYSCTL_NV_MIN_CWND,
	DETER_SYSCTL_CDG_WINDOW,	/* 0444: set at load only */
	DETER_SYSCTL_CDG_BACKOFF_BETA,
	DETER_SYSCTL_CDG_BACKOFF_FACTOR,
	DETER_SYSCTL_CDG_HYSTART_DETECT,
	DETER_SYSCTL_CDG_USE_INEFF,
	DETER_SYSCTL_CDG_USE_SHADOW,	/* bool: Y/N in sysfs, 1/0 here */
	DETER_SYSCTL_CDG_USE_TOLERANCE,	/* bool */
	DETER_SYSCTL_MAX,
};

/* The module parameters' defaults in 6.12, in enum order. */
#define DETER_PARAM_FIRST	DETER_SYSCTL_CUBIC_FAST_CONVERGENCE
#define DETER_PARAMS		(DETER_SYSCTL_MAX - DETER_PARAM_FIRST)
#define DETER_PARAM_DEFAULTS	{ 1, 717, 0, 41, 1, 1, 3, 16, 2000, 4, 1024, \
				  1, 16, 14, 819, 0, 20, 1, 1, 2, 4, 1, 25, \
				  10, 5, 2, 8, 724, 42, 3, 5, 1, 0 }

/*
 * DETER_CFG_OFFLOAD bits: whether the device the connection's route goes
 * out of segments (TSO, GSO) and coalesces (GRO) in its own right. TCP
 * builds the same segments either way; what the wire, tcpdump and the
 * receiver see differs, so replay sets its devices the same.
 */
#define DETER_OFFLOAD_TSO	0x1
#define DETER_OFFLOAD_GSO	0x2
#define DETER_OFFLOAD_GRO	0x4
#define DETER_OFFLOAD_KNOWN	0x8	/* the route had a device */
#define DETER_OFFLOAD_LOOPBACK	0x10	/* that device is lo: both ends on one host */
/*
 * The route's MTU (dst_mtu()), which the MSS TCP offers and uses follow;
 * at most IP_MAX_MTU, 65535 (lo's 65536 reads as that).
 */
#define DETER_OFFLOAD_MTU(a)	((unsigned int)((__u64)(a) >> 32) & 0xffff)

/* DETER_CFG_USERLOCKS bits (sk_userlocks): no autotuning of that buffer. */
#define DETER_LOCK_SNDBUF	0x1	/* SO_SNDBUF set */
#define DETER_LOCK_RCVBUF	0x2	/* SO_RCVBUF set */

/* RX event flags, b above (low two bits: the IP ECN field). */
enum {
	DETER_RX_ECN_MASK = 0x3,
	DETER_RX_OWNED = 0x4,	/* socket owned by a process: backlogged */
	/*
	 * SYN set: not counted in the IP ID series; c is its TS value + 1
	 * (0: it had no TS option), which tells the replay which of the
	 * peer's SYN-ACKs came
	 */
	DETER_RX_SYN = 0x8,
	/*
	 * Sent by the peer host's control socket for a socket that no
	 * longer holds the connection (its time-wait socket's ACK, a
	 * reset): IP ID 0, no data, not counted in the IP ID series; a is
	 * the index the series expected next, c its TS value + 1 (0: it had
	 * no TS option), which replay gives the peer's time-wait socket to
	 * send.
	 */
	DETER_RX_CTL = 0x10,
	DETER_RX_FLAGS = 0x1f,	/* all of the above */
};

/* RX flags whose c is a TS value + 1, not segments. */
#define DETER_RX_TS	(DETER_RX_SYN | DETER_RX_CTL)

/* Connection flags in struct deter_conn_info. */
enum {
	DETER_CONN_ACTIVE = 0x1,	/* this end called connect() */
	DETER_CONN_TS = 0x2,		/* timestamps negotiated */
	DETER_CONN_SACK = 0x4,		/* SACK negotiated */
	DETER_CONN_ECN = 0x8,		/* ECN negotiated */
	DETER_CONN_WSCALE = 0x10,	/* window scaling negotiated */
};

/*
 * Connection flags' bits 8-15: icsk_ack.pingpong at ESTABLISHED, whether
 * the end delays its ACKs for an answer to carry them. An accepted
 * socket's is its listener's (a server that set TCP_QUICKACK 0 there), an
 * active end's what the application set before connect().
 */
#define DETER_CONN_PINGPONG_SHIFT	8
#define DETER_CONN_PINGPONG(flags)	(((flags) >> DETER_CONN_PINGPONG_SHIFT) & 0xff)

/*
 * Connection logs: one file per connection end, <conn id in hex>.dlog, a
 * fixed header followed by a zstd frame holding the encoded events (see
 * recorder/rec_log.c). All integers little-endian.
 */
#define DETER_LOG_MAGIC "DETERLOG"

/*
 * Why a log is incomplete (status bits; none of DETER_LOG_INCOMPLETE
 * means complete), and what else the reader should know of it.
 */
enum {
	DETER_LOG_LOST_EVENTS = 0x1,	/* events missing (ring buffer overrun) */
	DETER_LOG_NOT_CLOSED = 0x2,	/* recording stopped before the end */
	DETER_LOG_NO_IDENTITY = 0x4,	/* never established */
	DETER_LOG_MISSING_VALUES = 0x8,	/* a MISSING value: see enum deter_abi_missing */
	DETER_LOG_CUT = 0x10,		/* ends before its connection: the log was full */
	DETER_LOG_UNSEEN_CALLS = 0x20,	/* calls past deter's hooks */
	DETER_LOG_INCOMPLETE = 0x3f,	/* the bits above */
	/*
	 * Not incomplete: a setting TCP reads changed during the connection
	 * (VALUE MISSING SETTINGS), at a moment the log places
	 * within a window only; replay runs with the settings at the start
	 * and verifies as ever
	 */
	DETER_LOG_SETTINGS_CHANGED = 0x40,
};

/*
 * What a log knows of the edges of the peer's IP ID series (the header's
 * edges), so that the drops no one end can see are counted where both
 * logs are at hand (log/rec_edge.c):
 *   TX_END    ipid_end is known: the log has NET TX_END
 *   RX        rx_first and rx_end are known: the peer's series reached
 *             this end (an arrival, or a head drop counted at the start)
 *   TW_LAST   after the last arrival of the series came an answer of the
 *             peer host's control socket (RX CTL): the peer's socket had
 *             closed, so every packet of its series from rx_end to its
 *             ipid_end was lost
 */
enum {
	DETER_EDGE_TX_END = 0x1,
	DETER_EDGE_RX = 0x2,
	DETER_EDGE_TW_LAST = 0x4,
};

struct deter_log_header {
	char magic[8];		/* DETER_LOG_MAGIC, not NUL-terminated */
	__u32 version;		/* DETER_ABI_VERSION */
	__u32 header_len;	/* sizeof(struct deter_log_header) */
	__u64 conn;		/* connection id (unique per host boot) */
	__u64 real_ns;		/* start, CLOCK_REALTIME, ns */
	__u64 mono_ns;		/* the same instant, CLOCK_MONOTONIC, ns */
	__u64 duration_ns;	/* start to end of recording, ns */
	__u64 bytes_acked;	/* bytes this end sent and saw acked */
	__u64 bytes_received;	/* bytes this end received */
	__u32 saddr;		/* this end, IPv4, host order */
	__u32 daddr;		/* the peer */
	__u16 sport;		/* this end's port */
	__u16 dport;		/* the peer's port */
	__u32 netns;		/* network namespace inode */
	__u32 iss;		/* this end's initial sequence number */
	__u32 irs;		/* the peer's */
	__u32 ipid;		/* next IP ID this end used at ESTABLISHED */
	__u32 flags;		/* DETER_CONN_* */
	__u32 mss;		/* MSS at ESTABLISHED, bytes */
	__u32 wscale;		/* snd_wscale << 4 | rcv_wscale */
	__u32 tsoffset;		/* TCP timestamp offset */
	__u32 status;		/* DETER_LOG_* bits, none of INCOMPLETE: complete */
	__u32 nevents;		/* events in the body */
	__u32 total_retrans;	/* segments retransmitted */
	__u32 total_rto;	/* retransmission timeouts */
	__u32 drops;		/* packets to this end the network dropped */
	__u32 reorders;		/* packets to this end that arrived late */
	__u32 ce_marks;		/* packets to this end marked CE */
	__u32 zero_wnd;		/* segments from the peer with a zero window */
	__u32 ipid_end;		/* next IP ID this end had at its close (NET TX_END) */
	__u32 rx_first;		/* the peer's first IP ID this end's log accounts for */
	__u32 rx_end;		/* the peer's IP ID expected next at the end */
	__u32 edges;		/* DETER_EDGE_* bits: which of the above are known */
	__u32 body_len;		/* bytes of zstd frame after the header */
	__u32 body_raw_len;	/* bytes once decompressed */
	char cc[16];		/* congestion control, NUL-terminated */
	char host[64];		/* recording host's name, NUL-terminated */
	__u32 pad;		/* zero */
};

/*
 * What a deter_state trace event is (its "final" field). A log holds
 * checkpoints and one summary as DETER_EV_STATE events with this as sub;
 * DISCARD only travels from deter.ko to the recorder: the socket was a
 * handshake's losing duplicate child and no connection of its own.
 */
enum deter_state_kind {
	DETER_STATE_CHECKPOINT = 0,
	DETER_STATE_SUMMARY = 1,
	DETER_STATE_DISCARD = 2,
};

/* Log-only event: a deter_state checkpoint (sub 0) or summary (sub 1). */
enum {
	DETER_EV_STATE = DETER_EV_MAX,
	/* A value TCP took from the kernel (enum deter_abi_value). */
	DETER_EV_VALUE = DETER_EV_STATE + 1,
	DETER_EV_LAST = DETER_EV_VALUE,	/* highest event type */
};

/*
 * Values TCP reads from the kernel (DETER §3.2 "reading kernel
 * variables"), a of a VALUE event. Replay hands them back in order:
 *   CLOCK         tcp_clock_ns() at tcp_mstamp_refresh() and the SYN-ACK
 *                 RTT sample: delta from this socket's previous CLOCK
 *                 (the first: absolute), ns
 *   JIFFIES       jiffies, emitted before an event when it changed since
 *                 this socket's previous event: delta (the first: absolute)
 *   SYNACK_CLOCK  the TCP clock when a SYN-ACK was built (passive end), ns
 *   IP_ID         the first IP ID of this end's connected socket
 *   SYN_IPID      the IP ID of the SYN that opened the handshake (passive
 *                 end): SYNs the peer sent before it were lost
 *   TSQ_FULL      TSQ found the device holding more of this socket's bytes
 *                 than its limit (tcp_small_queue_check()): how many of
 *                 its checks since the previous such one found room
 *   AUTOCORK      tcp_push() found the device still holding some of this
 *                 socket's packets, so it may autocork: how many of its
 *                 checks since the previous such one found none
 *   HOST_QUEUED   a segment to retransmit still had its previous copy in
 *                 the host's queues (skb_still_in_host_queue()): how many
 *                 of its checks since the previous such one found it gone
 *   PAGE_FRAG     tcp_sendmsg_locked()'s page fragment started over
 *                 (another page, or the same one from its start once every
 *                 skb let go of it) or is the socket's first: how many of
 *                 its refills since the previous such one kept going (a),
 *                 and the page's order << 16 | the offset (b)
 *   BACKLOG_LEN   the owner's tcp_space() found bytes in the backlog
 *                 (segments that came while it worked): how many of its
 *                 reads since the previous such one found it empty (a),
 *                 and the bytes (b)
 *   CHILD_IPID    the IP ID of the segment that completed the handshake
 *                 and created this passive end (it has no RX event): the
 *                 handshake's ACK, or a data segment that overtook it, in
 *                 which case the ACK arrives later, as a late RX (a); its
 *                 segments, when GRO merged several (b). Not emitted when
 *                 a SYN created it (TCP Fast Open)
 *   MISSING       values this end depends on were not recorded (a: enum
 *                 deter_abi_missing); the log is incomplete
 *                 (DETER_LOG_MISSING_VALUES) and replay refuses it, but
 *                 for SETTINGS, whose value is logged, not its moment
 *   MEM           a memory accounting decision shared with the host's
 *                 other sockets (enum deter_abi_mem) came out unlike the
 *                 previous time this socket made it (all start false):
 *                 how many such decisions of any kind since the previous
 *                 MEM (a), and kind << 1 | the new outcome (b)
 *   HOST_BUSY     tcp_rate_check_app_limited() found the host's queues
 *                 holding some of this socket's packets where its previous
 *                 check found none, or the other way round (the first
 *                 check's previous outcome is "none"): how many of its
 *                 checks since the previous change
 *   RANDOM        a random number TCP or its congestion control drew for
 *                 the connection (BBR's PROBE_BW phase, CDG, NV, PLB)
 *   HOST          the host answered one of the socket's requests unlike
 *                 it almost always does (enum deter_abi_host): how many
 *                 usual answers, of any kind, came since the previous
 *                 HOST (a), and kind << 32 | this answer (b)
 */
enum deter_abi_value {
	DETER_V_CLOCK,
	DETER_V_JIFFIES,
	DETER_V_SYNACK_CLOCK,
	DETER_V_IP_ID,
	DETER_V_SYN_IPID,
	DETER_V_TSQ_FULL,
	DETER_V_BACKLOG_LEN,
	DETER_V_AUTOCORK,
	DETER_V_HOST_QUEUED,
	DETER_V_PAGE_FRAG,
	DETER_V_CHILD_IPID,
	DETER_V_MISSING,
	DETER_V_MEM,
	DETER_V_HOST_BUSY,
	DETER_V_RANDOM,
	DETER_V_HOST,
	DETER_V_MAX,
};

/* The decisions of a VALUE MEM, b >> 1. */
enum deter_abi_mem {
	DETER_MEM_PRESSURE,	/* TCP under memory pressure (host or memcg) */
	DETER_MEM_ABOVE_LOW,	/* the host's TCP memory at or above tcp_mem[0] */
	DETER_MEM_SUPPRESS,	/* __sk_mem_raise_allocated() suppressed a charge */
	DETER_MEM_OOM,		/* tcp_check_oom(): too many orphans or over tcp_mem[2] */
	DETER_MEM_MAX,
};

/* The requests a VALUE HOST answers, b >> 32; the answer is b's low half. */
enum deter_abi_host {
	/*
	 * The output path did not take a segment as sent (a qdisc dropped
	 * it or signalled congestion, a route failed): what it returned.
	 */
	DETER_HOST_XMIT,
	/* A blocking socket call's wait timed out (SO_RCVTIMEO/SNDTIMEO). */
	DETER_HOST_TIMEOUT,
	/*
	 * tcp_check_space() found the send buffer's SOCK_NOSPACE otherwise
	 * than at its previous look: the answer is what it found, 1 or 0
	 * (tcp_poll() sets the bit without the socket lock).
	 */
	DETER_HOST_NOSPACE,
	/*
	 * A signal pending for the caller ended a socket call where TCP
	 * checks for one (tcp_recvmsg(), the waits for send space and for
	 * the connection). Logged apart from the other kinds' run: a is
	 * their usual answers so far, and the checks without a signal are
	 * not counted (how many there are depends on when segments reached
	 * the backlog).
	 */
	DETER_HOST_SIGNAL,
	/*
	 * What tcp_init_metrics() took from the destination's metrics cache
	 * (earlier connections to the peer left it), where it held
	 * something: the cwnd clamp, ssthresh, reordering, and the RTT
	 * (scaled as srtt_us) that seeds the first RTO.
	 */
	DETER_HOST_CACHED_CWND_CLAMP,
	DETER_HOST_CACHED_SSTHRESH,
	DETER_HOST_CACHED_REORDERING,
	DETER_HOST_CACHED_RTT,
	/*
	 * An active end's connect() waited for the handshake, at its first
	 * wait (one that timed out is DETER_HOST_TIMEOUT): the replay's
	 * connect() blocks where this is logged and does not where it is
	 * not, so that both take the lock turns the original's did.
	 */
	DETER_HOST_CONNECT_WAIT,
	DETER_HOST_MAX,
};

/* What a MISSING value says was not recorded. */
enum deter_abi_missing {
	DETER_MISSING_HANDSHAKE = 1,	/* a passive end's SYN IP ID and SYN-ACK clocks */
	/*
	 * Calls reached TCP past deter's hooks: a ULP (kTLS,
	 * MPTCP's subflows) or a BPF sockmap replaced the socket's
	 * protocol, or bytes were read without a read call deter saw
	 * (TCP_ZEROCOPY_RECEIVE, a kernel reader's tcp_read_sock()); the
	 * log has lock turns without their calls (DETER_LOG_UNSEEN_CALLS,
	 * not DETER_LOG_MISSING_VALUES)
	 */
	DETER_MISSING_CALLS = 2,
	/*
	 * TCP Fast Open: the SYN asked for a cookie or had one,
	 * and data with it, or had data without one (tcp_fastopen 0x200).
	 * The server makes cookies from its namespace's secret key, the
	 * client takes them from its host's cache, and the SYN-ACK carries
	 * one: none of it is logged (DETER_LOG_MISSING_VALUES)
	 */
	DETER_MISSING_FASTOPEN = 3,
	/*
	 * A setting TCP reads once established changed during the
	 * connection: a sysctl of its namespace, a metric of
	 * its route or a parameter of its congestion control, somewhere
	 * since deter.ko last looked (at the start, or at a checkpoint, a
	 * checkpoint every 64 events, looks at least 100 ms apart; and at
	 * the end): the moment TCP first read the new value is missing.
	 * The CONFIG SYSCTL events after it are all those settings again,
	 * as at the start (those off their defaults), their differences
	 * from the last such set what changed. Not incomplete:
	 * DETER_LOG_SETTINGS_CHANGED
	 */
	DETER_MISSING_SETTINGS = 4,
	/*
	 * The passive end's request socket sent its SYN-ACK again when its
	 * timer expired (reqsk_timer_handler()), and its handshake's record
	 * lacks when (NET SYNACK_TIMER): the new end starts with those
	 * timeouts counted (total_rto, undo_marker, retrans_stamp)
	 * (DETER_LOG_MISSING_VALUES)
	 */
	DETER_MISSING_SYNACK_TIMER = 5,
};

/* The VALUE events that carry a second number, b. */
static inline int deter_value_has_b(unsigned int what)
{
	return what == DETER_V_BACKLOG_LEN || what == DETER_V_PAGE_FRAG ||
	       what == DETER_V_CHILD_IPID || what == DETER_V_MEM ||
	       what == DETER_V_HOST;
}

/*
 * Replay scripts: what `deter replay` writes to debugfs deter/replay for
 * each connection end before arming replay ("replay" to deter/control).
 * A script is a struct deter_replay_hdr, nevents struct deter_replay_ev
 * in sequence order, then nstates x DETER_ST_MAX __u64 (the values of the
 * STATE events, whose a indexes them). Addresses and ports in host order;
 * the end is matched by its 4-tuple in the replaying network namespace.
 *
 * Reading deter/replay gives one status line per script:
 *   <saddr>:<sport> <daddr>:<dport> <state> <done>/<nevents> <k> <message>
 * state is one of loaded, running, done, diverged; k numbers the
 * divergences of all scripts in the order they came (0: none yet), so
 * the end that diverged first can be told; message is "-" or, for
 * diverged, "event <seq>: expected ..., found ...".
 */
#define DETER_REPLAY_MAGIC "DETERRPL"

struct deter_replay_hdr {
	char magic[8];		/* DETER_REPLAY_MAGIC */
	__u32 version;		/* DETER_ABI_VERSION */
	__u32 hdr_len;		/* sizeof(struct deter_replay_hdr) */
	__u32 saddr;		/* this end */
	__u32 daddr;		/* the peer */
	__u16 sport;
	__u16 dport;
	__u32 iss;		/* this end's ISN */
	__u32 irs;		/* the peer's ISN */
	__u32 ipid;		/* next IP ID at ESTABLISHED */
	__u32 tsoffset;		/* TCP timestamp offset */
	__u32 flags;		/* DETER_CONN_* */
	__u32 nevents;
	__u32 nstates;
	__u32 mss;		/* MSS at ESTABLISHED, bytes */
	__u32 wscale;		/* snd_wscale << 4 | rcv_wscale */
};

struct deter_replay_ev {
	__u32 seq;
	__u16 type;		/* enum deter_ev_type, DETER_EV_STATE/VALUE */
	__u16 sub;
	__u64 a;
	__u64 b;
	__u64 c;
};

/* Values of a state event, in log order. */
enum deter_state_field {
	DETER_ST_SND_UNA,
	DETER_ST_SND_NXT,
	DETER_ST_RCV_NXT,
	DETER_ST_CWND,
	DETER_ST_SSTHRESH,
	DETER_ST_PACKETS_OUT,
	DETER_ST_RETRANS_OUT,
	DETER_ST_SACKED_OUT,
	DETER_ST_LOST_OUT,
	DETER_ST_RCV_WND,
	DETER_ST_TOTAL_RETRANS,
	DETER_ST_TOTAL_RTO,
	DETER_ST_RX_ZERO_WND,
	DETER_ST_STATE,
	DETER_ST_BYTES_ACKED,
	DETER_ST_BYTES_RECEIVED,
	DETER_ST_MAX,
};

#endif /* _DETER_ABI_H */
