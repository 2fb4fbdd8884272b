/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's trace events: the transport from deter.ko to the
 * recorder. They are enabled only in deter's own tracefs instance, which
 * `deter record` creates; see include/deter_abi.h for what the fields
 * mean. Emitted from any context; never sleep.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM deter

#if !defined(_DETER_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DETER_TRACE_H

#include <linux/tracepoint.h>

#include "deter_conn.h"

/* One connection's identity, at the start of its recording. */
TRACE_EVENT(deter_conn,
	TP_PROTO(u64 conn, u32 seq, __be32 saddr, __be32 daddr, __be16 sport,
		 __be16 dport, u32 netns, u32 iss, u32 irs, u32 ipid,
		 u32 flags, u32 mss, u32 wscale, u32 tsoffset, u64 real_ns,
		 u64 mono_ns, const char *cc),
	TP_ARGS(conn, seq, saddr, daddr, sport, dport, netns, iss, irs, ipid,
		flags, mss, wscale, tsoffset, real_ns, mono_ns, cc),
	TP_STRUCT__entry(
		__field(u64, conn)
		__field(u64, real_ns)
		__field(u64, mono_ns)
		__field(u32, seq)
		__field(u32, saddr)
		__field(u32, daddr)
		__field(u32, netns)
		__field(u32, iss)
		__field(u32, irs)
		__field(u32, ipid)
		__field(u32, flags)
		__field(u32, mss)
		__field(u32, wscale)
		__field(u32, tsoffset)
		__field(u16, sport)
		__field(u16, dport)
		__array(char, cc, 16)
	),
	TP_fast_assign(
		__entry->conn = conn;
		__entry->real_ns = real_ns;
		__entry->mono_ns = mono_ns;
		__entry->seq = seq;
		__entry->saddr = be32_to_cpu(saddr);
		__entry->daddr = be32_to_cpu(daddr);
		__entry->netns = netns;
		__entry->iss = iss;
		__entry->irs = irs;
		__entry->ipid = ipid;
		__entry->flags = flags;
		__entry->mss = mss;
		__entry->wscale = wscale;
		__entry->tsoffset = tsoffset;
		__entry->sport = be16_to_cpu(sport);
		__entry->dport = be16_to_cpu(dport);
		strscpy(__entry->cc, cc, sizeof(__entry->cc));
	),
	TP_printk("conn=%llu seq=%u %08x:%u -> %08x:%u iss=%u irs=%u cc=%s",
		  __entry->conn, __entry->seq, __entry->saddr, __entry->sport,
		  __entry->daddr, __entry->dport, __entry->iss, __entry->irs,
		  __entry->cc)
);

/*
 * n (1 to DETER_EV_BATCH) events of a connection: lock, receive, network,
 * call, sample ...; element i of each array is event i's field.
 */
TRACE_EVENT(deter_ev,
	TP_PROTO(u64 conn, const struct deter_rec_ev *ev, u32 n),
	TP_ARGS(conn, ev, n),
	TP_STRUCT__entry(
		__field(u64, conn)
		__array(u64, a, DETER_EV_BATCH)
		__array(u64, b, DETER_EV_BATCH)
		__array(u64, c, DETER_EV_BATCH)
		__array(u32, seq, DETER_EV_BATCH)
		__array(u16, type, DETER_EV_BATCH)
		__array(u16, sub, DETER_EV_BATCH)
		__field(u32, n)
	),
	TP_fast_assign(
		u32 i;

		__entry->conn = conn;
		__entry->n = n;
		for (i = 0; i < DETER_EV_BATCH; i++) {
			bool in = i < n;

			__entry->a[i] = in ? ev[i].a : 0;
			__entry->b[i] = in ? ev[i].b : 0;
			__entry->c[i] = in ? ev[i].c : 0;
			__entry->seq[i] = in ? ev[i].seq : 0;
			__entry->type[i] = in ? ev[i].type : 0;
			__entry->sub[i] = in ? ev[i].sub : 0;
		}
	),
	TP_printk("conn=%llu n=%u seq=%u type=%u sub=%u a=%llu b=%llu c=%llu ...",
		  __entry->conn, __entry->n, __entry->seq[0], __entry->type[0],
		  __entry->sub[0], __entry->a[0], __entry->b[0], __entry->c[0])
);

/*
 * A state checkpoint (final == 0) or the end-of-connection summary
 * (final == 1): what replay compares to prove it did not diverge.
 */
TRACE_EVENT(deter_state,
	TP_PROTO(u64 conn, u32 seq, u32 final, const struct sock *sk,
		 u32 rx_zero_wnd),
	TP_ARGS(conn, seq, final, sk, rx_zero_wnd),
	TP_STRUCT__entry(
		__field(u64, conn)
		__field(u64, bytes_acked)
		__field(u64, bytes_received)
		__field(u32, seq)
		__field(u32, final)
		__field(u32, snd_una)
		__field(u32, snd_nxt)
		__field(u32, rcv_nxt)
		__field(u32, cwnd)
		__field(u32, ssthresh)
		__field(u32, packets_out)
		__field(u32, retrans_out)
		__field(u32, sacked_out)
		__field(u32, lost_out)
		__field(u32, rcv_wnd)
		__field(u32, total_retrans)
		__field(u32, total_rto)
		__field(u32, rx_zero_wnd)
		__field(u32, state)
	),
	TP_fast_assign(
		const struct tcp_sock *tp = tcp_sk(sk);

		__entry->conn = conn;
		__entry->bytes_acked = tp->bytes_acked;
		__entry->bytes_received = tp->bytes_received;
		__entry->seq = seq;
		__entry->final = final;
		__entry->snd_una = tp->snd_una;
		__entry->snd_nxt = tp->snd_nxt;
		__entry->rcv_nxt = tp->rcv_nxt;
		__entry->cwnd = tcp_snd_cwnd(tp);
		__entry->ssthresh = tp->snd_ssthresh;
		__entry->packets_out = tp->packets_out;
		__entry->retrans_out = tp->retrans_out;
		__entry->sacked_out = tp->sacked_out;
		__entry->lost_out = tp->lost_out;
		__entry->rcv_wnd = tp->rcv_wnd;
		__entry->total_retrans = tp->total_retrans;
		__entry->total_rto = tp->total_rto;
		__entry->rx_zero_wnd = rx_zero_wnd;
		__entry->state = sk->sk_state;
	),
	TP_printk("conn=%llu seq=%u final=%u una=%u nxt=%u rcv_nxt=%u cwnd=%u",
		  __entry->conn, __entry->seq, __entry->final, __entry->snd_una,
		  __entry->snd_nxt, __entry->rcv_nxt, __entry->cwnd)
);

/* Something deter could not record: a connection is missing or partial. */
TRACE_EVENT(deter_lost,
	TP_PROTO(u64 conn, u32 reason),
	TP_ARGS(conn, reason),
	TP_STRUCT__entry(
		__field(u64, conn)
		__field(u32, reason)
	),
	TP_fast_assign(
		__entry->conn = conn;
		__entry->reason = reason;
	),
	TP_printk("conn=%llu reason=%u", __entry->conn, __entry->reason)
);

#endif /* _DETER_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE deter_trace
#include <trace/define_trace.h>
