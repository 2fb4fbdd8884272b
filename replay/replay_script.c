// SPDX-License-Identifier: GPL-2.0
/*
 * Replay inputs from a connection's two logs.
 *
 * A replay needs, for each end E of the connection (from E's log alone):
 *
 *   script(E)   = hdr(E) . events(E) . states(E)     -> deter.ko, which
 *                 hands back recorded values and holds each event until
 *                 its turn (the sequencer)
 *   plan(E)     = { tid -> [call_1, call_2, ...] }   -> the generator,
 *                 one thread per recorded thread
 *   arrivals(E) = [idx_1, idx_2, ...] (+ CE marks)   -> the corrector,
 *                 which releases the peer's packets in this order
 *
 * and the two logs must be the ends of one connection:
 *
 *   A.saddr:A.sport == B.daddr:B.dport,  A.daddr:A.dport == B.saddr:B.sport
 *   A.iss == B.irs,  A.irs == B.iss,  exactly one end has DETER_CONN_ACTIVE
 *
 * Plan: CALL events of a thread (tid in the low 32 bits of b) in sequence
 * order. Calls without a recorded return (SHUTDOWN, CLOSE) have none to
 * compare; the others pair with CALL_DONE events first-in first-out per
 * call type, which is exact with one thread per call type and the lock
 * order otherwise (two concurrent sendmsg calls finish in lock order).
 * CONFIG events are emitted when the application's lock is taken for the
 * next call, so a NODELAY or USER_MSS change is attached to the CALL that
 * follows it; SNDBUF and RCVBUF changes come from the kernel's autotuning
 * and are not replayed from userspace.
 *
 * Arrivals: RX events other than SYNs, in sequence order; an RX of c
 * segments (GRO) stands for packets idx .. idx + c - 1; NET CE events
 * mark [a, a + b) of packets that already arrived.
 */
#include "replay_script.h"

#include "rec_index.h"
#include "rec_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/**
 * replay_call_name() - name of a recorded socket call
 * @call: enum deter_abi_call
 *
 * Return: "sendmsg", "recvmsg", "shutdown", "close", "setsockopt" or
 * "call?".
 */
const char *replay_call_name(uint16_t call)
{
	return call < DETER_ABI_CALL_MAX ? rec_call_names[call] : "call?";
}

static void replay_addr(char *buf, size_t len, uint32_t addr, uint16_t port)
{
	struct in_addr in = { .s_addr = htonl(addr) };
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, port);
}

static int replay_hdr_mirror(const struct deter_log_header *a,
			     const struct deter_log_header *b)
{
	return a->saddr == b->daddr && a->daddr == b->saddr &&
	       a->sport == b->dport && a->dport == b->sport;
}

static int replay_hdr_peer(const struct deter_log_header *a,
			   const struct deter_log_header *b)
{
	return replay_hdr_mirror(a, b) && a->iss == b->irs && a->irs == b->iss;
}

/* Negotiated options both ends must agree on. */
#define REPLAY_NEGOTIATED (DETER_CONN_TS | DETER_CONN_SACK | DETER_CONN_ECN | \
			   DETER_CONN_WSCALE)

/* Refuse what the replay cannot reproduce yet, naming the first event. */
static int replay_log_check(const char *path, const struct rec_log *log, char **err)
{
	const struct rec_ev *e;
	size_t i;

	for (i = 0; i < log->nevs; i++) {
		e = &log->evs[i];
		/*
		 * A qdisc's verdict (> 0) comes after the segment took its IP
		 * IDs, as the replay's does; an error (< 0: no route, ...)
		 * may come before, and the replay's segment would take them.
		 */
		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_HOST &&
		    e->b >> 32 == DETER_HOST_XMIT && (int32_t)e->b < 0)
			return rec_err(err,
				       "%s: event %u: the host's output path failed a segment (error %d); replay does not reproduce output errors",
				       path, e->seq, (int32_t)e->b);
	}
	return 0;
}

/*
 * The error for an incomplete log @log of @path: its reasons, and what
 * its first missing value lacks (unseen calls have a status of their
 * own). Return: -1.
 */
static int replay_log_incomplete(const char *path, const struct rec_log *log, char **err)
{
	const char *what = NULL;
	char st[96];
	size_t i;

	for (i = 0; i < log->nevs && !what; i++)
		if (log->evs[i].type == DETER_EV_VALUE && log->evs[i].sub == DETER_V_MISSING &&
		    log->evs[i].a != DETER_MISSING_CALLS && log->evs[i].a != DETER_MISSING_SETTINGS)
			what = rec_missing_what(log->evs[i].a);
	/* "incomplete,<reasons>" */
	rec_log_status_str(log->hdr.status & DETER_LOG_INCOMPLETE, st, sizeof(st));
	return rec_err(err, "%s: incomplete log (%s%s%s): cannot replay", path,
		       st + strlen("incomplete,"), what ? ": " : "", what ? what : "");
}

/**
 * replay_settings_note() - what changed in a log's settings, if anything
 * @log: the log
 * @buf: filled with "event N: a setting TCP reads changed during the
 *       connection: DIR.NAME OLD -> NEW, ...", for the first change, and
 *       " (K more changes, the last by event M)" if others came after
 * @len: its size
 *
 * Return: 1 if a setting changed during the connection (the replay runs
 * with those at the start), else 0.
 */
int replay_settings_note(const struct rec_log *log, char *buf, size_t len)
{
	const struct rec_ev *e, *first = NULL, *last = NULL;
	unsigned int more = 0;
	char what[512];
	size_t i, at = 0;

	for (i = 0; i < log->nevs; i++) {
		e = &log->evs[i];
		if (e->type != DETER_EV_VALUE || e->sub != DETER_V_MISSING ||
		    e->a != DETER_MISSING_SETTINGS)
			continue;
		if (first) {
			more++;
			last = e;
		} else {
			first = e;
			at = i;
		}
	}
	if (!first)
		return 0;
	rec_settings_changed(log, at, what, sizeof(what));
	snprintf(buf, len, "event %u: %s: %s", first->seq, rec_missing_what(first->a),
		 what[0] ? what : "back as they were");
	if (more && strlen(buf) + 1 < len)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 " (%u more change%s, the last by event %u)", more, more == 1 ? "" : "s",
			 last->seq);
	return 1;
}

/**
 * replay_pair_load() - read and check the two logs of one connection
 * @path0: one end's log
 * @path1: the other end's log
 * @pair: filled, by end (free with replay_pair_free())
 * @err: set on failure, naming the file at fault
 *
 * Both logs must decode, be complete, be each other's mirror image
 * (4-tuple and ISNs), agree on the negotiated options and have exactly
 * one active end.
 *
 * Return: 0, or -1 with *err set.
 */
int replay_pair_load(const char *path0, const char *path1,
		     struct replay_pair *pair, char **err)
{
	const struct deter_log_header *h0, *h1;
	char s0[32], d0[32], s1[32], d1[32];
	struct rec_log *log[2] = { NULL, NULL };
	const char *path[2] = { path0, path1 };
	struct stat st0, st1;
	int i, act;

	memset(pair, 0, sizeof(*pair));
	if (!stat(path0, &st0) && !stat(path1, &st1) &&
	    st0.st_dev == st1.st_dev && st0.st_ino == st1.st_ino)
		return rec_err(err, "%s: the same log twice: give both ends' logs", path1);
	for (i = 0; i < 2; i++) {
		log[i] = rec_log_read(path[i], err);
		if (!log[i])
			goto fail;
		if (log[i]->hdr.status & DETER_LOG_INCOMPLETE) {
			replay_log_incomplete(path[i], log[i], err);
			goto fail;
		}
		if (replay_log_check(path[i], log[i], err))
			goto fail;
	}
	h0 = &log[0]->hdr;
	h1 = &log[1]->hdr;
	replay_addr(s0, sizeof(s0), h0->saddr, h0->sport);
	replay_addr(d0, sizeof(d0), h0->daddr, h0->dport);
	replay_addr(s1, sizeof(s1), h1->saddr, h1->sport);
	replay_addr(d1, sizeof(d1), h1->daddr, h1->dport);
	if (!replay_hdr_mirror(h0, h1)) {
		rec_err(err, "%s: not the peer of %s (%s -> %s, expected %s -> %s)",
			path1, path0, s1, d1, d0, s0);
		goto fail;
	}
	if (h0->iss != h1->irs || h0->irs != h1->iss) {
		rec_err(err, "%s: not the peer of %s (ISNs %u/%u, expected %u/%u)",
			path1, path0, h1->iss, h1->irs, h0->irs, h0->iss);
		goto fail;
	}
	if ((h0->flags & REPLAY_NEGOTIATED) != (h1->flags & REPLAY_NEGOTIATED)) {
		rec_err(err, "%s: negotiated options 0x%x differ from %s's 0x%x",
			path1, h1->flags & REPLAY_NEGOTIATED, path0,
			h0->flags & REPLAY_NEGOTIATED);
		goto fail;
	}
	if (!(h0->flags & DETER_CONN_ACTIVE) == !(h1->flags & DETER_CONN_ACTIVE)) {
		rec_err(err, "%s, %s: %s end is an active open", path0, path1,
			h0->flags & DETER_CONN_ACTIVE ? "each" : "neither");
		goto fail;
	}
	act = h0->flags & DETER_CONN_ACTIVE ? 0 : 1;
	pair->log[REPLAY_END_ACTIVE] = log[act];
	pair->log[REPLAY_END_PASSIVE] = log[!act];
	pair->path[REPLAY_END_ACTIVE] = strdup(path[act]);
	pair->path[REPLAY_END_PASSIVE] = strdup(path[!act]);
	if (!pair->path[0] || !pair->path[1]) {
		replay_pair_free(pair);
		return rec_err(err, "out of memory");
	}
	return 0;
fail:
	rec_log_free(log[0]);
	rec_log_free(log[1]);
	return -1;
}

/**
 * replay_pair_free() - free what replay_pair_load() filled
 * @pair: the pair; may be zeroed
 */
void replay_pair_free(struct replay_pair *pair)
{
	int i;

	for (i = 0; i < REPLAY_END_MAX; i++) {
		rec_log_free(pair->log[i]);
		free(pair->path[i]);
		pair->log[i] = NULL;
		pair->path[i] = NULL;
	}
}

/**
 * replay_pair_find_peer() - find the other end's log in a directory
 * @dir: directory of logs
 * @path: one end's log
 * @peer: set to the peer's path (caller frees)
 * @err: set on failure
 *
 * The peer is the log whose 4-tuple is @path's mirror image and whose
 * ISNs are @path's swapped; unreadable logs in @dir are skipped.
 *
 * Return: 0, or -1 with *err set (none or more than one found).
 */
/* Logs of @dir the peer lookup could not read: counted, not fatal. */
static void replay_pair_skip(const char *msg, void *arg)
{
	(void)msg;
	(*(unsigned int *)arg)++;
}

int replay_pair_find_peer(const char *dir, const char *path, char **peer,
			  char **err)
{
	struct deter_log_header h;
	struct stat self, st;
	char s[32], d[32], *p = NULL;
	unsigned int hits = 0, bad = 0;
	struct rec_entry *e;
	size_t n, i;

	*peer = NULL;
	if (rec_log_read_header(path, &h, err))
		return -1;
	/* Not replayed whatever its peer: say why, not that none was found. */
	if (h.status & DETER_LOG_INCOMPLETE) {
		struct rec_log *log = rec_log_read(path, err);

		if (log)
			replay_log_incomplete(path, log, err);
		rec_log_free(log);
		return -1;
	}
	if (stat(path, &self))
		return rec_err(err, "%s: %s", path, strerror(errno));
	/* The directory's index has the headers: one file read, not all. */
	if (rec_dir_scan(dir, 0, &e, &n, replay_pair_skip, &bad, err))
		return -1;
	for (i = 0; i < n; i++) {
		if (!replay_hdr_peer(&h, &e[i].h))
			continue;
		if (!stat(e[i].path, &st) && st.st_dev == self.st_dev &&
		    st.st_ino == self.st_ino)
			continue;
		hits++;
		p = e[i].path;
	}
	if (hits == 1) {
		*peer = strdup(p);
		rec_entries_free(e, n);
		return *peer ? 0 : rec_err(err, "out of memory");
	}
	rec_entries_free(e, n);
	replay_addr(s, sizeof(s), h.saddr, h.sport);
	replay_addr(d, sizeof(d), h.daddr, h.dport);
	if (hits)
		return rec_err(err, "%s: %u logs in %s claim to be its peer (%s -> %s)",
			       path, hits, dir, d, s);
	return rec_err(err, "%s: no peer log in %s (none is %s -> %s with ISNs %u/%u%s)",
		       path, dir, d, s, h.irs, h.iss,
		       bad ? "; unreadable logs skipped" : "");
}

/**
 * replay_log_rebuilds() - whether the replay rebuilds an end's arrivals
 * @log: that end's log
 * @peer: the other end's
 *
 * The replay's veth hands the receiver the sender's skbs, whole, in
 * the sender's pages. Where the original's receiver got those too (no
 * NIC, no segmentation offload on either side) its arrivals go on as
 * they come. Else they may have been other skbs: a NIC driver's buffers
 * (a page-fragment head), frames GRO merged (an arrival of several
 * segments), the peer's GSO packets split by a switch (the peer had TSO
 * or GSO on). Then deter.ko rebuilds each logged arrival in its logged
 * shape (NET SHAPE) from its segments, which the corrector hands over
 * one by one.
 *
 * Return: 1 if it rebuilds them.
 */
int replay_log_rebuilds(const struct rec_log *log, const struct rec_log *peer)
{
	struct deter_shape s;
	size_t i;

	for (i = 0; i < log->nevs; i++) {
		const struct rec_ev *e = &log->evs[i];

		if (e->type == DETER_EV_NET && e->sub == DETER_NET_SHAPE &&
		    !deter_shape_unpack(e->a, e->b, e->c, &s) &&
		    (s.flags & DETER_SHAPE_F_HEAD_FRAG))
			return 1;
		if (e->type == DETER_EV_RX &&
		    !(e->b & (DETER_RX_SYN | DETER_RX_CTL)) && e->c > 1)
			return 1;
	}
	for (i = 0; peer && i < peer->nevs; i++) {
		const struct rec_ev *e = &peer->evs[i];

		if (e->type == DETER_EV_CONFIG && e->sub == DETER_CFG_OFFLOAD &&
		    (e->a & (DETER_OFFLOAD_TSO | DETER_OFFLOAD_GSO)))
			return 1;
	}
	return 0;
}

/**
 * replay_script_build() - deter.ko's replay script for one end
 * @log: that end's log
 * @rebuild: deter.ko rebuilds its arrivals (replay_log_rebuilds()): the
 *	script keeps their shapes
 * @buf: set to the script (caller frees)
 * @len: set to its length, bytes
 * @err: set on failure
 *
 * Layout (include/deter_abi.h): struct deter_replay_hdr, every event as
 * struct deter_replay_ev in sequence order, then the states' values.
 *
 * Return: 0, or -1 with *err set.
 */
int replay_script_build(const struct rec_log *log, int rebuild, uint8_t **buf,
			size_t *len, char **err)
{
	const struct deter_log_header *h = &log->hdr;
	struct deter_replay_hdr *rh;
	struct deter_replay_ev *ev;
	size_t i, j, n;
	__u64 *sv;

	if (log->nevs > UINT32_MAX || log->nstates > UINT32_MAX)
		return rec_err(err, "log too large for a replay script");
	*len = sizeof(*rh) + log->nevs * sizeof(*ev) +
	       log->nstates * DETER_ST_MAX * sizeof(*sv);
	*buf = calloc(1, *len);
	if (!*buf)
		return rec_err(err, "out of memory");
	rh = (struct deter_replay_hdr *)*buf;
	memcpy(rh->magic, DETER_REPLAY_MAGIC, sizeof(rh->magic));
	rh->version = DETER_ABI_VERSION;
	rh->hdr_len = sizeof(*rh);
	rh->saddr = h->saddr;
	rh->daddr = h->daddr;
	rh->sport = h->sport;
	rh->dport = h->dport;
	rh->iss = h->iss;
	rh->irs = h->irs;
	rh->ipid = h->ipid;
	rh->tsoffset = h->tsoffset;
	rh->flags = h->flags;
	rh->mss = h->mss;
	rh->wscale = h->wscale;
	rh->nstates = log->nstates;
	ev = (struct deter_replay_ev *)(rh + 1);
	for (i = n = 0; i < log->nevs; i++) {
		const struct rec_ev *e = &log->evs[i];

		/* deter.ko rebuilds the arrivals of a script with shapes. */
		if (!rebuild && e->type == DETER_EV_NET && e->sub == DETER_NET_SHAPE)
			continue;

		/*
		 * Reads of the error queue the generator leaves out
		 * (replay_plan_build()): they would only take room in
		 * deter.ko's look-ahead.
		 */
		if ((e->type == DETER_EV_CALL || e->type == DETER_EV_CALL_DONE) &&
		    e->sub == DETER_ABI_CALL_RECV_ERRQUEUE)
			continue;
		ev[n].seq = e->seq;
		ev[n].type = e->type;
		ev[n].sub = e->sub;
		ev[n].a = e->a;
		ev[n].b = e->b;
		ev[n++].c = e->c;
	}
	rh->nevents = n;
	sv = (__u64 *)(ev + n);
	for (i = 0; i < log->nstates; i++)
		for (j = 0; j < DETER_ST_MAX; j++)
			*sv++ = log->states[i].v[j];
	*len = (uint8_t *)sv - *buf;
	return 0;
}

static int replay_push(void **arr, size_t *n, size_t *cap, size_t size)
{
	void *na;

	if (*n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 16;
	na = realloc(*arr, *cap * size);
	if (!na)
		return -1;
	*arr = na;
	return 0;
}

/* Where a call waiting for its CALL_DONE sits in the plan. */
struct replay_pending {
	size_t thread;		/* index in plan->threads */
	size_t call;		/* index in that thread's calls */
};

static struct replay_thread *replay_plan_thread(struct replay_plan *plan,
						size_t *cap, uint32_t tid,
						size_t *at)
{
	struct replay_thread *t;
	size_t i;

	for (i = 0; i < plan->nthreads; i++) {
		if (plan->threads[i].tid == tid) {
			*at = i;
			return &plan->threads[i];
		}
	}
	if (replay_push((void **)&plan->threads, &plan->nthreads, cap,
			sizeof(*plan->threads)))
		return NULL;
	t = &plan->threads[plan->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	*at = plan->nthreads++;
	return t;
}

/**
 * replay_cfg_is_opt() - whether the generator sets a CONFIG field itself
 * @cfg: enum deter_cfg
 *
 * These are socket options the application set; the rest are the stack's
 * (buffers the app locked are set from replay_plan.sndbuf/rcvbuf).
 *
 * Return: 1 if it is a socket option the generator sets, else 0.
 */
int replay_cfg_is_opt(unsigned int cfg)
{
	switch (cfg) {
	case DETER_CFG_NODELAY:
	case DETER_CFG_USER_MSS:
	case DETER_CFG_TOS:
	case DETER_CFG_TTL:
	case DETER_CFG_KEEPALIVE:
	case DETER_CFG_USER_TIMEOUT:
	case DETER_CFG_NOTSENT_LOWAT:
	case DETER_CFG_RCVLOWAT:
	case DETER_CFG_LINGER:
	case DETER_CFG_CC:
	case DETER_CFG_TCP:
		return 1;
	}
	return 0;
}

/*
 * How many times the application called connect(): once, and once more
 * after each call a signal ended (patch 0018: the signals before the
 * first call) if it called it again rather than going on. After such a
 * signal the application's next lock turn is either another connect()'s,
 * which lets go (or waits) before any call is logged, or a call's, whose
 * CALL comes before the next lock turn of any context.
 */
static uint32_t replay_plan_connects(const struct rec_log *log)
{
	int signalled = 0, app = 0;
	uint32_t n = 1;
	size_t i;

	for (i = 0; i < log->nevs; i++) {
		const struct rec_ev *e = &log->evs[i];

		if (e->type == DETER_EV_CALL && e->sub != DETER_ABI_CALL_RECV_ERRQUEUE)
			break;
		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_HOST &&
		    e->b >> 32 == DETER_HOST_SIGNAL) {
			signalled = 1;
			app = 0;
		} else if (e->type == DETER_EV_LOCK && signalled) {
			if (app) {
				n++;		/* the app's turn was connect()'s */
				signalled = 0;
				app = 0;
			} else {
				app = e->sub == DETER_LOCK_APP;
			}
		}
	}
	return n;
}

/*
 * Whether the active end's connect() waited for the handshake: its first
 * wait, before any call, is logged (DETER_HOST_CONNECT_WAIT, or
 * DETER_HOST_TIMEOUT where it timed out). One that did not (a
 * nonblocking socket's) took one lock turn and returned EINPROGRESS.
 */
static int replay_plan_connect_waits(const struct rec_log *log)
{
	size_t i;

	if (!(log->hdr.flags & DETER_CONN_ACTIVE))
		return 0;
	for (i = 0; i < log->nevs; i++) {
		const struct rec_ev *e = &log->evs[i];

		if (e->type == DETER_EV_CALL && e->sub != DETER_ABI_CALL_RECV_ERRQUEUE)
			break;
		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_HOST &&
		    (e->b >> 32 == DETER_HOST_CONNECT_WAIT || e->b >> 32 == DETER_HOST_TIMEOUT))
			return 1;
	}
	return 0;
}

/*
 * The app lock turns of the first call, of the @pending the log has before
 * it, its own included. A passive end's log starts with accept()'s turn,
 * which the generator's accept() takes. An active end's starts after
 * connect()'s first turn (deter.ko selects the connection at SYN_SENT);
 * a connect() that waited takes one more each time it wakes, which the
 * log does not tell from other calls' turns: 0, not known.
 */
static uint32_t replay_plan_first_locks(const struct rec_log *log,
					const struct replay_plan *plan, uint32_t pending)
{
	if (!(log->hdr.flags & DETER_CONN_ACTIVE))
		return pending >= 2 ? pending - 1 : 0;
	return plan->connect_waits ? 0 : pending;
}

/*
 * Whether a CALL @e of thread @t, @locks app lock turns after the
 * thread's previous call returned and with no option set before it, is
 * the kernel's own: splice_to_socket() sends at once what is left of
 * a spliced send that returned short, and stops only at a signal, an
 * error or EAGAIN. Its bytes are exactly those left.
 */
static int replay_plan_is_cont(const struct replay_thread *t, const struct rec_ev *e,
			       uint32_t locks, int opts)
{
	const struct replay_call *p;

	if (!t->ncalls || e->sub != DETER_ABI_CALL_SENDMSG ||
	    !((e->b >> 32) & DETER_MSG_SPLICE_PAGES) || locks > 1 || opts)
		return 0;
	p = &t->calls[t->ncalls - 1];
	return p->call == DETER_ABI_CALL_SENDMSG && p->flags & DETER_MSG_SPLICE_PAGES &&
	       p->done_seq && p->ret > 0 && (uint64_t)p->ret < p->arg &&
	       e->a == p->arg - (uint64_t)p->ret;
}

/**
 * replay_plan_build() - the socket calls of one end, per recorded thread
 * @log: that end's log
 * @plan: filled (free with replay_plan_free())
 * @err: set on failure
 *
 * deter.ko logs the options that changed at each application lock, once
 * they changed. Those seen at the connection's first application lock
 * (connect's or accept's), before any call, were set before connect()
 * or on the listener: the generator sets them there too, which takes no
 * lock the log counts. Later ones were set by a setsockopt() whose own
 * lock is in the log: the generator sets them before the next call, as
 * often as they changed.
 *
 * A spliced send (sendfile(), splice()) that returned short, as a
 * nonblocking socket's does when its send buffer fills, is followed in
 * the same syscall by the kernel's send of the bytes left, then of
 * those that one left, until one takes them all or fails:
 *
 *   CALL 65536 -> 44252,  CALL 21284 (cont) -> -EAGAIN   sendfile() = 44252
 *
 * Those are marked cont: the generator's one splice() makes them all.
 *
 * Return: 0, or -1 with *err set (a return without a call, a bad call).
 */
int replay_plan_build(const struct rec_log *log, struct replay_plan *plan,
		      char **err)
{
	struct replay_pending *fifo[DETER_ABI_CALL_MAX] = { NULL };
	size_t head[DETER_ABI_CALL_MAX] = { 0 }, tail[DETER_ABI_CALL_MAX] = { 0 };
	size_t fcap[DETER_ABI_CALL_MAX] = { 0 }, tcap = 0, icap = 0, ocap = 0;
	size_t opt_from = 0, i, ti;
	uint64_t cfg[DETER_CFG_MAX] = { 0 };
	int called = 0, first, app_locks = 0, busy = 0, mixed = 0;
	uint32_t pending = 0;
	struct replay_thread *t;
	struct replay_call *c;
	int ret = -1, k;

	memset(plan, 0, sizeof(*plan));
	plan->connect_waits = replay_plan_connect_waits(log);
	for (i = 0; i < log->nevs; i++) {
		const struct rec_ev *e = &log->evs[i];

		if (e->type == DETER_EV_LOCK && e->sub == DETER_LOCK_APP) {
			app_locks++;
			pending++;
			mixed |= busy > 0;
		}
		if (e->type == DETER_EV_CONFIG && e->sub < DETER_CFG_MAX) {
			int init = !called && app_locks <= 1;
			struct replay_opt **to = init ? &plan->init : &plan->opts;
			size_t *n = init ? &plan->ninit : &plan->nopts;

			if (!called)
				cfg[e->sub] = e->a;
			if (!replay_cfg_is_opt(e->sub))
				continue;
			if (replay_push((void **)to, n, init ? &icap : &ocap, sizeof(**to)))
				goto nomem;
			(*to)[(*n)++] = (struct replay_opt){ e->sub, e->a };
			continue;
		}
		if ((e->type != DETER_EV_CALL && e->type != DETER_EV_CALL_DONE) ||
		    e->sub >= DETER_ABI_CALL_MAX)
			continue;
		/*
		 * A read of the error queue that found it empty changed
		 * nothing TCP reads, and took no lock: the generator leaves
		 * it out. One that took a message off it is refused
		 * (replay_plan_check()).
		 */
		if (e->sub == DETER_ABI_CALL_RECV_ERRQUEUE) {
			if (e->type == DETER_EV_CALL_DONE && (int64_t)e->a != -EAGAIN &&
			    !plan->errq_seq) {
				plan->errq_seq = e->seq;
				plan->errq_ret = (int64_t)e->a;
			}
			continue;
		}
		if (e->type == DETER_EV_CALL_DONE) {
			struct replay_pending *p;

			if (head[e->sub] == tail[e->sub]) {
				rec_err(err, "event %u: %s returned without a call",
					e->seq, replay_call_name(e->sub));
				goto out;
			}
			p = &fifo[e->sub][head[e->sub]++];
			c = &plan->threads[p->thread].calls[p->call];
			c->done_seq = e->seq;
			c->ret = (int64_t)e->a;
			c->pages = e->b;
			/* Its waits' lock turns were its own. */
			busy -= busy > 0;
			pending = 0;
			mixed = busy > 0;
			continue;
		}
		first = !called;
		called = 1;
		t = replay_plan_thread(plan, &tcap, e->b & 0xffffffff, &ti);
		if (!t)
			goto nomem;
		if (replay_push((void **)&t->calls, &t->ncalls, &t->cap, sizeof(*t->calls)))
			goto nomem;
		c = &t->calls[t->ncalls];
		memset(c, 0, sizeof(*c));
		c->seq = e->seq;
		c->call = e->sub;
		c->arg = e->a;
		c->flags = e->b >> 32;
		c->opt_at = opt_from;
		c->nopts = plan->nopts - opt_from;
		opt_from = plan->nopts;
		if (first)
			c->locks = replay_plan_first_locks(log, plan, pending);
		else
			c->locks = !mixed ? pending : 0;
		c->cont = !first && replay_plan_is_cont(t, e, c->locks, c->nopts > 0);
		pending = 0;
		mixed = busy > 0;
		/* Under way until its return (shutdown and close have none). */
		if (e->sub == DETER_ABI_CALL_SENDMSG || e->sub == DETER_ABI_CALL_RECVMSG ||
		    e->sub == DETER_ABI_CALL_SPLICE_READ ||
		    e->sub == DETER_ABI_CALL_SETSOCKOPT)
			busy++;
		if (replay_push((void **)&fifo[e->sub], &tail[e->sub], &fcap[e->sub],
				sizeof(*fifo[e->sub])))
			goto nomem;
		fifo[e->sub][tail[e->sub]++] = (struct replay_pending){ ti, t->ncalls };
		t->ncalls++;
	}
	plan->connects = replay_plan_connects(log);
	/* Buffer sizes the app set itself, as the socket started with them. */
	if (cfg[DETER_CFG_USERLOCKS] & DETER_LOCK_SNDBUF)
		plan->sndbuf = cfg[DETER_CFG_SNDBUF];
	if (cfg[DETER_CFG_USERLOCKS] & DETER_LOCK_RCVBUF)
		plan->rcvbuf = cfg[DETER_CFG_RCVBUF];
	ret = 0;
	goto out;
nomem:
	rec_err(err, "out of memory");
out:
	for (k = 0; k < DETER_ABI_CALL_MAX; k++)
		free(fifo[k]);
	if (ret)
		replay_plan_free(plan);
	return ret;
}

/**
 * replay_plan_free() - free what replay_plan_build() filled
 * @plan: the plan; may be zeroed
 */
void replay_plan_free(struct replay_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->nthreads; i++)
		free(plan->threads[i].calls);
	free(plan->threads);
	free(plan->init);
	free(plan->opts);
	memset(plan, 0, sizeof(*plan));
}

/**
 * replay_arrivals_build() - the order in which data packets reached one end
 * @log: that end's log
 * @arr: set to the arrivals (caller frees)
 * @n: set to their number
 * @err: set on failure
 *
 * Return: 0, or -1 with *err set (a CE mark on a packet that never arrived).
 */
int replay_arrivals_build(const struct rec_log *log,
			  struct replay_arrival **arr, size_t *n, char **err)
{
	struct replay_arrival *a = NULL;
	size_t i, cap = 0, cnt = 0, j;
	uint64_t k, segs, idx;

	for (i = 0; i < log->nevs; i++) {
		const struct rec_ev *e = &log->evs[i];

		/* A passive end's first arrival has no RX event, only this. */
		int child = e->type == DETER_EV_VALUE && e->sub == DETER_V_CHILD_IPID;

		/* Neither SYNs nor the peer's time-wait answers are numbered. */
		if (child || (e->type == DETER_EV_RX &&
			      !(e->b & (DETER_RX_SYN | DETER_RX_CTL)))) {
			segs = child ? e->b : e->c;
			segs = segs ? segs : 1;
			for (k = 0; k < segs; k++) {
				if (replay_push((void **)&a, &cnt, &cap, sizeof(*a))) {
					free(a);
					return rec_err(err, "out of memory");
				}
				a[cnt].idx = e->a + k;
				a[cnt].segs = k ? 0 : segs;
				a[cnt++].ce = 0;
			}
		} else if (e->type == DETER_EV_NET && e->sub == DETER_NET_CE) {
			segs = e->b ? e->b : 1;
			for (idx = e->a; idx < e->a + segs; idx++) {
				for (j = cnt; j > 0 && a[j - 1].idx != idx; j--)
					continue;
				if (!j) {
					free(a);
					return rec_err(err,
						       "event %u: CE mark on packet %llu, which never arrived",
						       e->seq, (unsigned long long)idx);
				}
				a[j - 1].ce = 1;
			}
		}
	}
	*arr = a;
	*n = cnt;
	return 0;
}

/*
 * Thread @ti's calls @j on that the kernel made after a spliced send,
 * call @j - 1, returned short (replay_call.cont): the generator's splice()
 * for it makes them all, so no other thread's call may have to wait for
 * its return in between (replay_gen_turn()). 0 if none came between; else
 * -1 with *err set.
 */
static int replay_plan_check_cont(const struct replay_plan *plan, size_t ti, size_t j,
				  char **err)
{
	const struct replay_thread *t = &plan->threads[ti];
	const struct replay_call *c0 = &t->calls[j - 1], *o;
	uint32_t end = c0->done_seq;
	size_t i, k;

	for (; j < t->ncalls && t->calls[j].cont; j++)
		end = t->calls[j].done_seq ? t->calls[j].done_seq : UINT32_MAX;
	for (i = 0; i < plan->nthreads; i++) {
		for (k = 0; i != ti && k < plan->threads[i].ncalls; k++) {
			o = &plan->threads[i].calls[k];
			if (o->seq > c0->done_seq && o->seq < end)
				return rec_err(err,
					       "event %u: a call of thread %u came between a spliced send of thread %u that returned short (event %u) and the kernel's sends of the rest; the replay cannot order them",
					       o->seq, plan->threads[i].tid, t->tid, c0->done_seq);
		}
	}
	return 0;
}

/**
 * replay_plan_check() - can the generator issue every call of a plan?
 * @plan: from replay_plan_build()
 * @err: set if not, naming the event
 *
 * Return: 0, or -1 with *err set.
 */
int replay_plan_check(const struct replay_plan *plan, char **err)
{
	const struct replay_call *c;
	size_t i, j;

	for (i = 0; i < plan->nthreads; i++) {
		for (j = 0; j < plan->threads[i].ncalls; j++) {
			c = &plan->threads[i].calls[j];
			if (c->call == DETER_ABI_CALL_SENDMSG && c->pages & DETER_SEND_ZEROCOPY)
				return rec_err(err,
					       "event %u: a MSG_ZEROCOPY send cannot be replayed (TCP took the sender's own pages, and their completions on the error queue are charged to the receive memory TCP's window comes from)",
					       c->done_seq);
			if (c->call == DETER_ABI_CALL_SENDMSG && c->pages & DETER_SEND_TXSTAMP)
				return rec_err(err,
					       "event %u: a send with transmit timestamps (SO_TIMESTAMPING) cannot be replayed (they are charged to the receive memory TCP's window comes from)",
					       c->done_seq);
			if (c->call == DETER_ABI_CALL_SHUTDOWN && (c->arg < 1 || c->arg > 3))
				return rec_err(err, "event %u: shutdown how %llu is not 1-3",
					       c->seq, (unsigned long long)c->arg);
			if (c->call == DETER_ABI_CALL_SPLICE_READ &&
			    !DETER_SPLICE_RD_ROOM(c->flags))
				return rec_err(err,
					       "event %u: splice() from the socket cannot be replayed without its pipe's room (the log has none for it)",
					       c->seq);
			if (c->call == DETER_ABI_CALL_SETSOCKOPT && !rec_setsockopt_name(c->flags))
				return rec_err(err,
					       "event %u: setsockopt of TCP option %u cannot be replayed",
					       c->seq, c->flags);
			/*
			 * splice_to_socket() stops after a short send only at
			 * a signal, which the replay's has none of: it would
			 * go on with the rest.
			 */
			if (c->call == DETER_ABI_CALL_SENDMSG &&
			    c->flags & DETER_MSG_SPLICE_PAGES && c->done_seq && c->ret > 0 &&
			    (uint64_t)c->ret < c->arg &&
			    (j + 1 == plan->threads[i].ncalls || !c[1].cont))
				return rec_err(err,
					       "event %u: a spliced send returned %lld of %llu bytes and the kernel did not send the rest (a signal ended the splice()); the replay's would",
					       c->done_seq, (long long)c->ret,
					       (unsigned long long)c->arg);
			if (c->cont && !c[-1].cont && replay_plan_check_cont(plan, i, j, err))
				return -1;
		}
	}
	/* Sends that put nothing there: the messages came from elsewhere. */
	if (plan->errq_seq)
		return rec_err(err,
			       "event %u: a read of the error queue that returned %lld cannot be replayed (the messages on it are charged to the receive memory TCP's window comes from)",
			       plan->errq_seq, (long long)plan->errq_ret);
	return 0;
}
