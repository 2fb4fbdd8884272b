// SPDX-License-Identifier: GPL-2.0
/*
 * Recording's emit path: from a connection's events to the recorder.
 *
 * Every record carries the connection's id and a sequence number from
 * its per-socket counter (ds->seq); hooks that run under the socket lock
 * thus number their events in lock order, which is the order replay
 * enforces. Events go out in batches, because a trace event costs per
 * record rather than per byte:
 *
 *   deter_rec_emit()     --> ds->ev[ev_n++]; at DETER_EV_BATCH:
 *                            trace_deter_ev(conn, ev[], n)
 *   deter_rec_state_ev() --> flush ev[], then trace_deter_state()
 *   deter_rec_conn_ev()  --> flush ev[], then trace_deter_conn()
 *   "stop"               --> flush every recorded connection's ev[]
 *
 * Invariant: a record that is not an event is numbered and emitted under
 * the same ev_lock as the flush before it, so the recorder never sees a
 * checkpoint or an identity before an event numbered earlier (the CPUs'
 * ring buffers, merged by clock, may still swap two records; the
 * recorder sorts by sequence number). A batch may hold events of several
 * contexts: softirq, timers and the owner all emit.
 *
 * A lost record shows as a hole in a connection's sequence numbers, so
 * the recorder marks that connection incomplete instead of writing a
 * wrong log.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_rec_emit.h"

#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "deter_conn.h"

#define CREATE_TRACE_POINTS
#include "deter_trace.h"

static DEFINE_PER_CPU(u64, deter_rec_events);	/* events recorded */

/**
 * deter_rec_emit() - record one event of a recorded connection
 * @ds: the connection's state
 * @type: enum deter_ev_type
 * @sub: its subtype, as deter_abi.h has it
 * @a: its first field
 * @b: its second field
 * @c: its third field
 *
 * The event joins the connection's batch, which goes out as one trace
 * event when full (DETER_EV_BATCH), before any record that is not an
 * event, and when recording stops.
 *
 * Return: the event's sequence number.
 */
u32 deter_rec_emit(struct deter_sock *ds, u16 type, u16 sub, u64 a, u64 b,
		   u64 c)
{
	unsigned long flags;
	u32 seq;

	this_cpu_inc(deter_rec_events);
	spin_lock_irqsave(&ds->ev_lock, flags);
	seq = atomic_inc_return(&ds->seq);
	ds->ev[ds->ev_n++] = (struct deter_rec_ev){
		.a = a, .b = b, .c = c, .seq = seq, .type = type, .sub = sub,
	};
	if (ds->ev_n == DETER_EV_BATCH) {
		trace_deter_ev(ds->conn, ds->ev, ds->ev_n);
		ds->ev_n = 0;
	}
	spin_unlock_irqrestore(&ds->ev_lock, flags);
	return seq;
}

/* Emit the events still in @ds's batch; ev_lock held. */
static void __deter_rec_ev_flush(struct deter_sock *ds)
{
	lockdep_assert_held(&ds->ev_lock);
	if (ds->ev_n)
		trace_deter_ev(ds->conn, ds->ev, ds->ev_n);
	ds->ev_n = 0;
}

static void deter_rec_ev_flush(struct deter_sock *ds)
{
	unsigned long flags;

	spin_lock_irqsave(&ds->ev_lock, flags);
	__deter_rec_ev_flush(ds);
	spin_unlock_irqrestore(&ds->ev_lock, flags);
}

/* At "stop": what a recorded connection's batch holds goes out. */
static void deter_rec_stop_flush(struct deter_sock *ds)
{
	if (READ_ONCE(ds->rec))
		deter_rec_ev_flush(ds);
}

/**
 * deter_rec_flush_all() - emit every recorded connection's batch
 *
 * At "stop", for the recorder's last poll.
 */
void deter_rec_flush_all(void)
{
	deter_conn_for_each(deter_rec_stop_flush);
}

/**
 * deter_rec_state_ev() - emit a state record after every event numbered
 *	before it
 * @ds: the connection's state
 * @sk: the socket, whose state the record holds
 * @kind: enum deter_state_kind
 * @rx_zero_wnd: segments that advertised a zero window (0: not counted)
 *
 * The batch goes out first and the number is taken under the same lock,
 * so the recorder gets a connection's records in order (but for what
 * merging the CPUs' buffers by their clocks may swap).
 *
 * Return: the record's sequence number.
 */
u32 deter_rec_state_ev(struct deter_sock *ds, struct sock *sk, u32 kind,
		       u32 rx_zero_wnd)
{
	unsigned long flags;
	u32 seq;

	spin_lock_irqsave(&ds->ev_lock, flags);
	__deter_rec_ev_flush(ds);
	seq = atomic_inc_return(&ds->seq);
	trace_deter_state(ds->conn, seq, kind, sk, rx_zero_wnd);
	spin_unlock_irqrestore(&ds->ev_lock, flags);
	return seq;
}

/**
 * deter_rec_conn_ev() - emit a connection's identity
 * @ds: the connection's state
 * @sk: the socket, established
 * @flags: DETER_CONN_* bits
 *
 * After the events numbered before it, as deter_rec_state_ev().
 */
void deter_rec_conn_ev(struct deter_sock *ds, struct sock *sk, u32 flags)
{
	const struct inet_sock *inet = inet_sk(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	unsigned long irqflags;

	spin_lock_irqsave(&ds->ev_lock, irqflags);
	__deter_rec_ev_flush(ds);
	trace_deter_conn(ds->conn, atomic_inc_return(&ds->seq),
			 inet->inet_saddr, inet->inet_daddr, inet->inet_sport,
			 inet->inet_dport, sock_net(sk)->ns.inum,
			 tp->snd_nxt - 1, tp->rcv_nxt - 1,
			 (u16)atomic_read(&inet->inet_id), flags,
			 tp->mss_cache,
			 tp->rx_opt.snd_wscale << 4 | tp->rx_opt.rcv_wscale,
			 tp->tsoffset, ktime_get_real_ns(), ktime_get_ns(),
			 inet_csk(sk)->icsk_ca_ops->name);
	spin_unlock_irqrestore(&ds->ev_lock, irqflags);
}

/**
 * deter_rec_events_total() - events recorded since the module loaded
 *
 * Return: the sum over every CPU.
 */
u64 deter_rec_events_total(void)
{
	u64 events = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		events += per_cpu(deter_rec_events, cpu);
	return events;
}
