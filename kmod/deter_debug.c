// SPDX-License-Identifier: GPL-2.0
/*
 * Debugging output for replays that diverge (debug_clock=1).
 *
 * A replay diverges at the first event whose outcome differs from the
 * log's, which is often well after the read that made it differ. With
 * debug_clock set, both sides print the same lines at the same points,
 * tagged "rec" or "rpl":
 *
 *   TCP clock read   --> caller chain, send/receive state, CC words
 *   checkpoint       --> receive-side state
 *   host check       --> which (send, wait, send space, signal), its
 *                        place in the run of usual answers, callers
 *   write-timer turn --> whether its handler finds the timer due
 *
 * so that `diff` of a recording's kernel log against its replay's shows
 * the first read that went otherwise. The lines are per read: meant for
 * one connection in a test, never for production.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_debug.h"

#include <linux/module.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

bool deter_debug_clock;
module_param_named(debug_clock, deter_debug_clock, bool, 0644);
MODULE_PARM_DESC(debug_clock, "log every TCP clock read of a recorded or replayed socket, with its callers and state, state at checkpoints, and write-timer turns");

/**
 * deter_debug_state() - log receive-side state at a checkpoint, for
 *	debugging replays (with debug_clock=1)
 * @what: "rec" or "rpl"
 * @sk: the socket
 * @seq: the checkpoint's sequence number
 */
void deter_debug_state(const char *what, const struct sock *sk, u32 seq)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	pr_info("%s state %u port %u nxt %u wup %u ssthresh %u clamp %u rcvbuf %d rmem %d bl %d ratio %u wnd %u space %u copied %u wq %d sndbuf %d snd_wnd %u write_seq %u nrtx %u\n",
		what, seq, sk->sk_num, tp->rcv_nxt, tp->rcv_wup,
		tp->rcv_ssthresh, tp->window_clamp,
		READ_ONCE(sk->sk_rcvbuf), atomic_read(&sk->sk_rmem_alloc),
		READ_ONCE(sk->sk_backlog.len), tp->scaling_ratio, tp->rcv_wnd,
		tp->rcvq_space.space, tp->copied_seq,
		READ_ONCE(sk->sk_wmem_queued), READ_ONCE(sk->sk_sndbuf),
		tp->snd_wnd, tp->write_seq, tcp_write_queue_empty(sk) ? 0 : 1);
}

/**
 * deter_debug_clock_read() - trace a clock read, with the socket's send
 *	and receive state, for debugging replays
 * @what: "rec" or "rpl"
 * @sk: the socket (NULL: no state)
 * @seq: the VALUE event's sequence number
 * @jif: the jiffies TCP reads there
 */
void deter_debug_clock_read(const char *what, const struct sock *sk, u32 seq,
			    unsigned long jif)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	unsigned long st[6];
	unsigned int n = stack_trace_save(st, ARRAY_SIZE(st), 3);
	const u32 *ca;

	pr_info("%s clock seq %u cpu %d %s %pS < %pS < %pS\n", what, seq,
		smp_processor_id(), in_task() ? current->comm : "bh",
		(void *)(n > 0 ? st[0] : 0), (void *)(n > 1 ? st[1] : 0),
		(void *)(n > 2 ? st[2] : 0));
	if (!sk)
		return;
	deter_debug_state(what, sk, seq);
	pr_info("%s snd seq %u port %u una %u nxt %u cwnd %u cnt %u lim %u maxout %u out %u sacked %u lost %u retr %u ca %u pace %lu srtt %u minrtt %u mss %u wstamp %llu cache %llu maxwnd %u tsqf %lx\n",
		what, seq, sk->sk_num, tp->snd_una, tp->snd_nxt, tcp_snd_cwnd(tp),
		tp->snd_cwnd_cnt, tp->is_cwnd_limited, tp->max_packets_out,
		tp->packets_out, tp->sacked_out, tp->lost_out, tp->retrans_out,
		inet_csk(sk)->icsk_ca_state, READ_ONCE(sk->sk_pacing_rate),
		tp->srtt_us, tcp_min_rtt(tp), tp->mss_cache, tp->tcp_wstamp_ns,
		tp->tcp_clock_cache, tp->max_window, READ_ONCE(sk->sk_tsq_flags));
	/* The congestion control's private words (CUBIC: cnt, last_max,
	 * last_cwnd, last_time, origin, K, delay_min, epoch, ack_cnt, tcp_cwnd).
	 */
	ca = inet_csk_ca(sk);
	pr_info("%s cc seq %u port %u jif %u ca %u %u %u %u %u %u %u %u %u %u stamp %u used %u rto %u nospace %d wmemq %d\n",
		what, seq, sk->sk_num, (u32)jif, ca[0], ca[1], ca[2],
		ca[3], ca[4], ca[5], ca[6], ca[7], ca[8], ca[9],
		tp->snd_cwnd_stamp, tp->snd_cwnd_used,
		inet_csk(sk)->icsk_rto,
		sk->sk_socket ? test_bit(SOCK_NOSPACE, &sk->sk_socket->flags) : -1,
		READ_ONCE(sk->sk_wmem_queued));
}

/**
 * deter_debug_host() - trace one of the host's answers to the socket (a
 *	transmit's result, a wait's time left, the send space mark, a
 *	signal check), for debugging replays
 * @what: "rec" or "rpl"
 * @sk: the socket
 * @check: which answer
 * @run: the usual answers before it since the last unusual one
 * @val: the answer the host gave (the replay's, before the log's)
 * @at: the event last logged (recording) or taken (replay)
 * @skip: deter's own frames above the hook's caller, so that both sides
 *	name the same callers
 */
void deter_debug_host(const char *what, const struct sock *sk,
		      enum deter_value check, u32 run, u64 val, u32 at,
		      unsigned int skip)
{
	unsigned long st[4];
	unsigned int n = stack_trace_save(st, ARRAY_SIZE(st), skip);

	pr_info("%s host %d run %u val %llu at %u port %u %s wmemq %d %pS < %pS < %pS\n",
		what, check, run, val, at, sk->sk_num,
		in_task() ? current->comm : "bh", READ_ONCE(sk->sk_wmem_queued),
		(void *)(n > 0 ? st[0] : 0), (void *)(n > 1 ? st[1] : 0),
		(void *)(n > 2 ? st[2] : 0));
}

/**
 * deter_debug_timer() - log a write-timer turn, and whether its handler
 *	will find the timer due
 * @sk: the socket
 * @site: the lock site; only DETER_SITE_LOCK_WRITE_TIMER is logged
 * @replay: the turn is a replay's (else a recording's)
 * @run: the handler runs
 */
void deter_debug_timer(struct sock *sk, enum deter_site site, bool replay,
		       bool run)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);

	if (site != DETER_SITE_LOCK_WRITE_TIMER)
		return;
	pr_info("%s timer port %u run %d pending %u due %ld owned %d state %u cpu %d\n",
		replay ? "rpl" : "rec", sk->sk_num, run, icsk->icsk_pending,
		(long)(icsk->icsk_timeout - jiffies), sock_owned_by_user(sk),
		sk->sk_state, smp_processor_id());
}
