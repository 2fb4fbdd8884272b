// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for replay/replay_script.c and the status parser of
 * replay/replay_kmod.c: scripts carry every event and state, calls are
 * planned per thread with their returns and option changes, arrivals
 * expand GRO runs and carry CE marks, and status lines parse; and
 * replay/replay_net.c refuses two ends that need different host-wide
 * settings.
 */
#include "replay_script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_kmod.h"
#include "replay_net.h"
#include "unit.h"

static struct rec_ev test_evs[] = {
	{ .seq = 1, .type = DETER_EV_RX, .b = DETER_RX_SYN },
	{ .seq = 2, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
	{ .seq = 3, .type = DETER_EV_CONFIG, .sub = DETER_CFG_NODELAY, .a = 1 },
	{ .seq = 4, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000,
	  .b = (uint64_t)0x40 << 32 | 7 },
	{ .seq = 5, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_RECVMSG, .a = 500, .b = 8 },
	{ .seq = 6, .type = DETER_EV_RX, .a = 100, .c = 3 },
	{ .seq = 7, .type = DETER_EV_NET, .sub = DETER_NET_CE, .a = 101, .b = 2 },
	{ .seq = 8, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG, .a = 1000 },
	{ .seq = 9, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_RECVMSG,
	  .a = (uint64_t)-11 },
	{ .seq = 10, .type = DETER_EV_STATE, .a = 0 },
	{ .seq = 11, .type = DETER_EV_RX, .a = 99 },
	{ .seq = 12, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_CLOSE, .b = 7 },
};

static struct rec_state test_states[1] = { { .v = { 11, 22, 33 } } };

static struct rec_log test_log = {
	.hdr = { .saddr = 0x0a000101, .daddr = 0x0a000201, .sport = 5000, .dport = 80,
		 .iss = 1, .irs = 2, .flags = DETER_CONN_ACTIVE | DETER_CONN_TS },
	.evs = test_evs,
	.nevs = ARRAY_SIZE(test_evs),
	.states = test_states,
	.nstates = 1,
};

static void test_script(void)
{
	const struct deter_replay_hdr *h;
	const struct deter_replay_ev *ev;
	const __u64 *sv;
	uint8_t *buf;
	size_t len;
	char *err = NULL;

	UNIT_CHECK(!replay_script_build(&test_log, 0, &buf, &len, &err));
	UNIT_CHECK_EQ(len, sizeof(*h) + ARRAY_SIZE(test_evs) * sizeof(*ev) +
		      DETER_ST_MAX * sizeof(*sv));
	h = (const struct deter_replay_hdr *)buf;
	UNIT_CHECK(!memcmp(h->magic, DETER_REPLAY_MAGIC, 8));
	UNIT_CHECK_EQ(h->hdr_len, sizeof(*h));
	UNIT_CHECK_EQ(h->sport, 5000);
	UNIT_CHECK_EQ(h->nevents, ARRAY_SIZE(test_evs));
	UNIT_CHECK_EQ(h->nstates, 1);
	ev = (const struct deter_replay_ev *)(h + 1);
	UNIT_CHECK_EQ(ev[5].seq, 6);
	UNIT_CHECK_EQ(ev[5].c, 3);
	UNIT_CHECK_EQ(ev[9].type, DETER_EV_STATE);
	sv = (const __u64 *)(ev + ARRAY_SIZE(test_evs));
	UNIT_CHECK_EQ(sv[2], 33);
	free(buf);
}

/*
 * An end's arrivals are rebuilt, and its script keeps their shapes, when
 * they may not have been the sender's skbs: a driver's buffers (a page-
 * fragment head), GRO's merges, or a peer with TSO or GSO on. Else they
 * go on as they come, and the script has no shapes.
 */
static void test_script_shapes(void)
{
	struct deter_shape sh = {
		.truesize = 2176, .end_offset = 1600, .headroom = 98, .headlen = 1480,
	};
	struct rec_ev evs[2] = {
		{ .seq = 1, .type = DETER_EV_NET, .sub = DETER_NET_SHAPE },
		{ .seq = 2, .type = DETER_EV_RX, .a = 100, .c = 1 },
	};
	struct rec_ev pevs[1] = {
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_OFFLOAD,
		  .a = DETER_OFFLOAD_KNOWN | DETER_OFFLOAD_GRO | 1500ULL << 32 },
	};
	struct rec_log log = { .hdr = test_log.hdr, .evs = evs, .nevs = 2 };
	struct rec_log peer = { .hdr = test_log.hdr, .evs = pevs, .nevs = 1 };
	const struct deter_replay_hdr *h;
	__u64 a, b, c;
	uint8_t *buf;
	char *err = NULL;
	size_t len;

	deter_shape_pack(&sh, &a, &b, &c);
	evs[0].a = a;
	evs[0].b = b;
	UNIT_CHECK(!replay_log_rebuilds(&log, &peer));
	UNIT_CHECK(!replay_script_build(&log, 0, &buf, &len, &err));
	h = (const struct deter_replay_hdr *)buf;
	UNIT_CHECK_EQ(h->nevents, 1);
	free(buf);
	/* The peer sent GSO packets: a switch may have split them. */
	pevs[0].a |= DETER_OFFLOAD_GSO;
	UNIT_CHECK(replay_log_rebuilds(&log, &peer));
	pevs[0].a &= ~(__u64)DETER_OFFLOAD_GSO;
	/* GRO merged two frames. */
	evs[1].c = 2;
	UNIT_CHECK(replay_log_rebuilds(&log, &peer));
	evs[1].c = 1;
	/* A driver's buffers. */
	sh.flags = DETER_SHAPE_F_HEAD_FRAG;
	deter_shape_pack(&sh, &a, &b, &c);
	evs[0].a = a;
	UNIT_CHECK(replay_log_rebuilds(&log, &peer));
	UNIT_CHECK(!replay_script_build(&log, 1, &buf, &len, &err));
	h = (const struct deter_replay_hdr *)buf;
	UNIT_CHECK_EQ(h->nevents, 2);
	free(buf);
}

static void test_plan(void)
{
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(!replay_plan_build(&test_log, &plan, &err));
	UNIT_CHECK_EQ(plan.nthreads, 2);
	UNIT_CHECK_EQ(plan.threads[0].tid, 7);
	UNIT_CHECK_EQ(plan.threads[0].ncalls, 2);
	UNIT_CHECK_EQ(plan.threads[0].calls[0].flags, 0x40);
	/* Seen at the first application lock: set before connect(). */
	UNIT_CHECK_EQ(plan.ninit, 1);
	UNIT_CHECK_EQ(plan.init[0].cfg, DETER_CFG_NODELAY);
	UNIT_CHECK_EQ(plan.init[0].val, 1);
	UNIT_CHECK_EQ(plan.nopts, 0);
	UNIT_CHECK_EQ(plan.threads[0].calls[0].nopts, 0);
	UNIT_CHECK_EQ(plan.threads[0].calls[0].done_seq, 8);
	UNIT_CHECK_EQ(plan.threads[0].calls[0].ret, 1000);
	UNIT_CHECK_EQ(plan.threads[0].calls[1].call, DETER_ABI_CALL_CLOSE);
	UNIT_CHECK_EQ(plan.threads[0].calls[1].done_seq, 0);
	UNIT_CHECK_EQ(plan.threads[1].tid, 8);
	UNIT_CHECK(plan.threads[1].calls[0].ret == -11);
	replay_plan_free(&plan);
}

/* Options changed after the first lock go before the next call, in order. */
static void test_plan_opts(void)
{
	struct rec_ev evs[] = {
		{ .seq = 1, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 2, .type = DETER_EV_CONFIG, .sub = DETER_CFG_TOS, .a = 0x10 },
		{ .seq = 3, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SNDBUF, .a = 9000 },
		{ .seq = 4, .type = DETER_EV_CONFIG, .sub = DETER_CFG_USERLOCKS,
		  .a = DETER_LOCK_SNDBUF },
		{ .seq = 5, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 6, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 7, .type = DETER_EV_CONFIG, .sub = DETER_CFG_KEEPALIVE,
		  .a = DETER_KA_PACK(1, 3, 2, 1) },
		{ .seq = 8, .type = DETER_EV_CONFIG, .sub = DETER_CFG_NODELAY, .a = 1 },
		{ .seq = 9, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 10, .b = 7 },
		{ .seq = 10, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 11, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SNDBUF, .a = 20000 },
		{ .seq = 12, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_RECVMSG,
		  .a = 10, .b = 7 },
	};
	struct rec_log log = { .evs = evs, .nevs = ARRAY_SIZE(evs) };
	const struct replay_call *c;
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.ninit, 1);
	UNIT_CHECK_EQ(plan.init[0].cfg, DETER_CFG_TOS);
	UNIT_CHECK_EQ(plan.sndbuf, 9000);
	UNIT_CHECK_EQ(plan.nopts, 2);
	c = plan.threads[0].calls;
	UNIT_CHECK_EQ(c[0].nopts, 2);
	UNIT_CHECK_EQ(plan.opts[c[0].opt_at].cfg, DETER_CFG_KEEPALIVE);
	UNIT_CHECK_EQ(DETER_KA_IDLE(plan.opts[c[0].opt_at].val), 1);
	UNIT_CHECK_EQ(DETER_KA_INTVL(plan.opts[c[0].opt_at].val), 2);
	UNIT_CHECK_EQ(DETER_KA_CNT(plan.opts[c[0].opt_at].val), 3);
	UNIT_CHECK_EQ(plan.opts[c[0].opt_at + 1].cfg, DETER_CFG_NODELAY);
	/* Autotuned buffers are the stack's, not options to set. */
	UNIT_CHECK_EQ(c[1].nopts, 0);
	replay_plan_free(&plan);
}

/*
 * App lock turns before each call: its own plus those of calls deter
 * does not replay as such; a call's waits are its own; unknown (0) for
 * the first call and while another call is under way.
 */
static void test_plan_locks(void)
{
#define LOCK(s) { .seq = (s), .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP }
#define CALL(s, c, tid) { .seq = (s), .type = DETER_EV_CALL, .sub = (c), .a = 10, .b = (tid) }
#define DONE(s, c) { .seq = (s), .type = DETER_EV_CALL_DONE, .sub = (c), .a = 10 }
	struct rec_ev evs[] = {
		LOCK(1), CALL(2, DETER_ABI_CALL_SENDMSG, 7), DONE(3, DETER_ABI_CALL_SENDMSG),
		LOCK(4), LOCK(5), LOCK(6),
		CALL(7, DETER_ABI_CALL_RECVMSG, 7),
		LOCK(8),			/* the recv's wait */
		DONE(9, DETER_ABI_CALL_RECVMSG),
		LOCK(10), CALL(11, DETER_ABI_CALL_RECVMSG, 7),
		LOCK(12), CALL(13, DETER_ABI_CALL_SENDMSG, 8),	/* 7's recv under way */
		DONE(14, DETER_ABI_CALL_SENDMSG),
		LOCK(15), DONE(16, DETER_ABI_CALL_RECVMSG),
		LOCK(17), LOCK(18), CALL(19, DETER_ABI_CALL_SHUTDOWN, 7),
		LOCK(20), CALL(21, DETER_ABI_CALL_CLOSE, 7),
	};
#undef LOCK
#undef CALL
#undef DONE
	struct rec_log log = { .evs = evs, .nevs = ARRAY_SIZE(evs) };
	const struct replay_call *c, *d;
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.nthreads, 2);
	c = plan.threads[0].calls;
	d = plan.threads[1].calls;
	UNIT_CHECK_EQ(plan.threads[0].ncalls, 5);
	UNIT_CHECK_EQ(c[0].locks, 0);	/* the first call */
	UNIT_CHECK_EQ(c[1].locks, 3);	/* two calls not replayed as such */
	UNIT_CHECK_EQ(c[2].locks, 1);
	UNIT_CHECK_EQ(d[0].locks, 0);	/* thread 7 was in recv */
	UNIT_CHECK_EQ(c[3].locks, 2);	/* after 7's recv ended */
	UNIT_CHECK_EQ(c[4].locks, 1);
	replay_plan_free(&plan);
}

/*
 * The first call's lock turns: a passive end's log starts with accept()'s,
 * an active end's after connect()'s first; after a connect() that waited
 * (logged at its first wait) they are not known.
 */
static void test_plan_first_locks(void)
{
#define APP(s) { .seq = (s), .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP }
	struct rec_ev evs[] = {
		APP(1), APP(2), APP(3),
		{ .seq = 4, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_RECVMSG, .a = 10, .b = 7 },
	};
	struct rec_ev waited[] = {
		{ .seq = 1, .type = DETER_EV_VALUE, .sub = DETER_V_HOST,
		  .b = (uint64_t)DETER_HOST_CONNECT_WAIT << 32 },
		APP(2), APP(3),
		{ .seq = 4, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, .a = 10, .b = 7 },
	};
#undef APP
	struct rec_log log = { .evs = evs, .nevs = ARRAY_SIZE(evs) };
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.threads[0].calls[0].locks, 2);	/* passive: less accept()'s */
	UNIT_CHECK_EQ(plan.connect_waits, 0);
	replay_plan_free(&plan);

	log.hdr.flags = DETER_CONN_ACTIVE;
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.threads[0].calls[0].locks, 3);	/* a nonblocking connect() */
	UNIT_CHECK_EQ(plan.connect_waits, 0);
	replay_plan_free(&plan);

	log.evs = waited;
	log.nevs = ARRAY_SIZE(waited);
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.threads[0].calls[0].locks, 0);
	UNIT_CHECK_EQ(plan.connect_waits, 1);
	replay_plan_free(&plan);

	waited[0].b = (uint64_t)DETER_HOST_TIMEOUT << 32;
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.connect_waits, 1);
	replay_plan_free(&plan);
}

/*
 * connect() calls: one, and one more after each that signals ended when
 * the application's next lock turn was not a call's (patch 0018).
 */
static void test_plan_connects(void)
{
#define APP(s) { .seq = (s), .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP }
#define TIMER(s) { .seq = (s), .type = DETER_EV_LOCK, .sub = DETER_LOCK_WRITE_TIMER }
#define SIG(s) { .seq = (s), .type = DETER_EV_VALUE, .sub = DETER_V_HOST, \
		 .b = (uint64_t)DETER_HOST_SIGNAL << 32 }
#define RX(s) { .seq = (s), .type = DETER_EV_RX }
#define CALL(s) { .seq = (s), .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG, \
		  .a = 10, .b = 7 }
	/* Called again twice: waiting, then after the handshake. */
	struct rec_ev again[] = {
		APP(1), APP(2), SIG(3), SIG(4),
		APP(5), TIMER(6), APP(7), SIG(8),
		RX(9), APP(10), APP(11), CALL(12),
	};
	/* Gave up: the next turn is send()'s, which waits for the handshake. */
	struct rec_ev gave_up[] = {
		APP(1), APP(2), SIG(3), SIG(4), APP(5), RX(6), CALL(7), SIG(8), APP(9),
	};
	/* Signals within a call are the call's. */
	struct rec_ev none[] = {
		APP(1), CALL(2), SIG(3), APP(4), APP(5),
	};
#undef APP
#undef TIMER
#undef SIG
#undef RX
#undef CALL
	struct rec_log log = { .evs = again, .nevs = ARRAY_SIZE(again) };
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.connects, 3);
	replay_plan_free(&plan);
	log = (struct rec_log){ .evs = gave_up, .nevs = ARRAY_SIZE(gave_up) };
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.connects, 1);
	replay_plan_free(&plan);
	log = (struct rec_log){ .evs = none, .nevs = ARRAY_SIZE(none) };
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.connects, 1);
	replay_plan_free(&plan);
}

static void test_plan_orphan_return(void)
{
	struct rec_ev evs[] = {
		{ .seq = 1, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_RECVMSG },
	};
	struct rec_log log = { .evs = evs, .nevs = 1 };
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(replay_plan_build(&log, &plan, &err));
	UNIT_CHECK(err && !strcmp(err, "event 1: recvmsg returned without a call"));
	free(err);
}

static void test_arrivals(void)
{
	struct replay_arrival *a;
	size_t n;
	char *err = NULL;

	UNIT_CHECK(!replay_arrivals_build(&test_log, &a, &n, &err));
	UNIT_CHECK_EQ(n, 4);
	UNIT_CHECK_EQ(a[0].idx, 100);
	UNIT_CHECK_EQ(a[0].ce, 0);
	UNIT_CHECK_EQ(a[1].ce, 1);
	UNIT_CHECK_EQ(a[2].idx, 102);
	UNIT_CHECK_EQ(a[2].ce, 1);
	UNIT_CHECK_EQ(a[3].idx, 99);
	free(a);
}

/* A data segment overtook the handshake's ACK and created the child. */
static void test_arrivals_child(void)
{
	struct rec_ev evs[] = {
		{ .seq = 1, .type = DETER_EV_VALUE, .sub = DETER_V_SYN_IPID, .a = 7 },
		{ .seq = 2, .type = DETER_EV_VALUE, .sub = DETER_V_CHILD_IPID, .a = 9 },
		{ .seq = 3, .type = DETER_EV_RX, .a = 8 },
		{ .seq = 4, .type = DETER_EV_NET, .sub = DETER_NET_LATE, .a = 8, .b = 1 },
		{ .seq = 5, .type = DETER_EV_RX, .a = 10 },
	};
	struct rec_log log = { .evs = evs, .nevs = 5 };
	struct replay_arrival *a;
	char *err = NULL;
	size_t n;

	UNIT_CHECK(!replay_arrivals_build(&log, &a, &n, &err));
	UNIT_CHECK_EQ(n, 3);
	UNIT_CHECK_EQ(a[0].idx, 9);
	UNIT_CHECK_EQ(a[0].segs, 1);
	UNIT_CHECK_EQ(a[1].idx, 8);
	UNIT_CHECK_EQ(a[2].idx, 10);
	free(a);
}

static void test_status_parse(void)
{
	const char *text =
		"10.0.2.1:80 10.0.1.1:5000 running 3/40 0 -\n"
		"10.0.1.1:5000 10.0.2.1:80 diverged 7/12 3 event 9: expected rx, found lock\n";
	struct replay_status st;

	UNIT_CHECK(!replay_kmod_parse(text, "10.0.2.1:80", &st));
	UNIT_CHECK(!strcmp(st.state, "running"));
	UNIT_CHECK_EQ(st.done, 3);
	UNIT_CHECK_EQ(st.nevents, 40);
	UNIT_CHECK(!strcmp(st.msg, "-"));
	UNIT_CHECK_EQ(st.diverged_nr, 0);
	UNIT_CHECK(!replay_kmod_parse(text, "10.0.1.1:5000", &st));
	UNIT_CHECK(!strcmp(st.state, "diverged"));
	UNIT_CHECK_EQ(st.diverged_nr, 3);
	UNIT_CHECK(!strcmp(st.msg, "event 9: expected rx, found lock"));
	UNIT_CHECK_EQ(replay_kmod_parse(text, "10.0.1.1:500", &st), -1);
	UNIT_CHECK_EQ(replay_kmod_parse("10.0.1.1:5000 junk\n", "10.0.1.1:5000", &st), -2);
	/* A line without the divergence number: not this format. */
	UNIT_CHECK_EQ(replay_kmod_parse("10.0.1.1:5000 10.0.2.1:80 running 3/40 -\n",
					"10.0.1.1:5000", &st), -2);
	UNIT_CHECK(!strcmp(st.line, "10.0.1.1:5000 10.0.2.1:80 running 3/40 -"));
}

/* @path's log, replaced by one with header @h and events @ev[0 .. @n). */
static char *rewrite_log(const char *dir, char *path, struct deter_log_header *h,
			 const struct rec_ev *ev, size_t n)
{
	char *err = NULL;

	if (path)
		unlink(path);
	free(path);
	path = NULL;
	UNIT_CHECK(rec_log_write(dir, h, ev, n, NULL, &path, &err) == 0);
	free(err);
	return path;
}

/*
 * A log whose settings changed during the connection is replayed, with
 * the settings at its start, and a note naming what changed and the
 * event that says so.
 */
static void check_settings_note(const char *dir, struct deter_log_header *h,
				const char *peer)
{
	const struct rec_ev ev[] = {
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_TCP_WMEM2 << 32 | 65536 },
		{ .seq = 2, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 3, .type = DETER_EV_VALUE, .sub = DETER_V_MISSING,
		  .a = DETER_MISSING_SETTINGS },
		{ .seq = 4, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_TCP_WMEM2 << 32 | 4194304 },
		{ .seq = 5, .type = DETER_EV_VALUE, .sub = DETER_V_MISSING,
		  .a = DETER_MISSING_SETTINGS },
		{ .seq = 6, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_TCP_WMEM2 << 32 | 65536 },
	};
	struct deter_log_header hm = *h;
	struct replay_pair pair;
	const char *what = rec_missing_what(DETER_MISSING_SETTINGS);
	const char *more = "65536 -> 4194304 (1 more change, the last by event 5)";
	char *path = NULL, *err = NULL, note[256];

	hm.status = DETER_LOG_SETTINGS_CHANGED;
	path = rewrite_log(dir, path, &hm, ev, 4);
	if (!path)
		return;
	UNIT_CHECK(replay_pair_load(path, peer, &pair, &err) == 0);
	UNIT_CHECK(replay_settings_note(pair.log[REPLAY_END_ACTIVE], note, sizeof(note)) == 1);
	UNIT_CHECK(!strncmp(note, "event 3: ", 9));
	UNIT_CHECK(!strncmp(note + 9, what, strlen(what)));
	UNIT_CHECK(strstr(note, ": net.ipv4.tcp_wmem[2] 65536 -> 4194304"));
	UNIT_CHECK(!strstr(note, "more change"));
	UNIT_CHECK(replay_settings_note(pair.log[REPLAY_END_PASSIVE], note, sizeof(note)) == 0);
	replay_pair_free(&pair);
	/* The first change, and how many came after. */
	path = rewrite_log(dir, path, &hm, ev, 6);
	if (!path)
		return;
	UNIT_CHECK(replay_pair_load(path, peer, &pair, &err) == 0);
	UNIT_CHECK(replay_settings_note(pair.log[REPLAY_END_ACTIVE], note, sizeof(note)) == 1);
	UNIT_CHECK(strlen(note) > strlen(more) &&
		   !strcmp(note + strlen(note) - strlen(more), more));
	replay_pair_free(&pair);
	/* With values missing too, it is refused for those alone. */
	hm.status = DETER_LOG_SETTINGS_CHANGED | DETER_LOG_NOT_CLOSED;
	path = rewrite_log(dir, path, &hm, ev, 4);
	if (!path)
		return;
	UNIT_CHECK(replay_pair_load(path, peer, &pair, &err) != 0);
	UNIT_CHECK(err && strstr(err, ".dlog: incomplete log (not-closed): cannot replay"));
	free(err);
	unlink(path);
	free(path);
}

/*
 * What replay refuses, in one line naming the file and event: an output
 * error (< 0) of the host, which may have come before the segment took
 * its IP IDs (a qdisc's drop, > 0, is replayed).
 */
static void test_refuse(void)
{
	struct deter_log_header h[2] = {
		{ .saddr = 0x0a000101, .daddr = 0x0a000201, .sport = 5000, .dport = 80,
		  .iss = 1, .irs = 2, .flags = DETER_CONN_ACTIVE, .conn = 1 },
		{ .saddr = 0x0a000201, .daddr = 0x0a000101, .sport = 80, .dport = 5000,
		  .iss = 2, .irs = 1, .conn = 2 },
	};
	struct rec_ev ev = { .seq = 1, .type = DETER_EV_VALUE, .sub = DETER_V_HOST,
			     .b = (uint64_t)DETER_HOST_XMIT << 32 | 1 };
	char dir[] = "/tmp/replay_script_test.XXXXXX", *path[2] = { NULL, NULL };
	struct replay_pair pair;
	char *err = NULL;
	FILE *f;

	UNIT_CHECK(mkdtemp(dir));
	UNIT_CHECK(rec_log_write(dir, &h[0], &ev, 1, NULL, &path[0], &err) == 0);
	UNIT_CHECK(rec_log_write(dir, &h[1], NULL, 0, NULL, &path[1], &err) == 0);
	UNIT_CHECK(replay_pair_load(path[0], path[1], &pair, &err) == 0);
	replay_pair_free(&pair);
	free(path[0]);

	ev.b = (uint64_t)DETER_HOST_XMIT << 32 | (uint32_t)-113;
	UNIT_CHECK(rec_log_write(dir, &h[0], &ev, 1, NULL, &path[0], &err) == 0);
	UNIT_CHECK(replay_pair_load(path[0], path[1], &pair, &err) != 0);
	UNIT_CHECK(err && strstr(err, ".dlog: event 1: the host's output path failed"));
	UNIT_CHECK(err && strstr(err, "a segment (error -113); replay does not"));
	free(err);
	err = NULL;
	/* A log of another format: refused at its header, in one line. */
	f = fopen(path[0], "r+");
	UNIT_CHECK(f && !fseek(f, 8, SEEK_SET) && fputc(9, f) == 9);
	if (f)
		fclose(f);
	UNIT_CHECK(replay_pair_load(path[0], path[1], &pair, &err) != 0);
	UNIT_CHECK(err && strstr(err, ".dlog:8: log format 9 is not supported") &&
		   !strchr(err, '\n'));
	free(err);
	err = NULL;
	unlink(path[0]);
	free(path[0]);

	check_settings_note(dir, &h[0], path[1]);
	unlink(path[1]);
	free(path[1]);
	rmdir(dir);
}

/*
 * A splice read goes to the generator with its pipe's room and socket
 * mode; one without a room (deter.ko was not handed one) is refused,
 * naming the event.
 */
static void test_plan_splice_read(void)
{
	const uint32_t f = 3 << DETER_SPLICE_RD_ROOM_SHIFT | DETER_SPLICE_RD_NONBLOCK;
	struct rec_ev evs[] = {
		{ .seq = 1, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 2, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SPLICE_READ,
		  .a = 12288, .b = (uint64_t)f << 32 | 7 },
		{ .seq = 3, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SPLICE_READ,
		  .a = 4344 },
	};
	struct rec_log log = { .evs = evs, .nevs = ARRAY_SIZE(evs) };
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.nthreads, 1);
	UNIT_CHECK_EQ(plan.threads[0].ncalls, 1);
	UNIT_CHECK_EQ(plan.threads[0].calls[0].flags, f);
	UNIT_CHECK_EQ(DETER_SPLICE_RD_ROOM(plan.threads[0].calls[0].flags), 3);
	UNIT_CHECK_EQ(plan.threads[0].calls[0].ret, 4344);
	UNIT_CHECK(!replay_plan_check(&plan, &err));
	replay_plan_free(&plan);
	evs[1].b = 7;
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK(replay_plan_check(&plan, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "event 2: splice() from the socket", 33));
	UNIT_CHECK(err && strstr(err, "cannot be replayed without its pipe's room"));
	free(err);
	replay_plan_free(&plan);
}

/*
 * A nonblocking sendfile() whose first send returned short: the kernel's
 * send of the rest (EAGAIN) is marked as its own, not the application's;
 * a new sendfile() after it is the application's. A short send the
 * kernel did not go on with (a signal), and another thread's call
 * between a short send and the kernel's, are refused, naming the event.
 */
static void test_plan_splice_cont(void)
{
#define SPLICED ((uint64_t)(DETER_MSG_SPLICE_PAGES | 0x8040) << 32)
	struct rec_ev evs[] = {
		{ .seq = 1, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 2, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = 65536, .b = SPLICED | 7 },
		{ .seq = 3, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = 44252 },
		{ .seq = 4, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 5, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = 21284, .b = SPLICED | 7 },
		{ .seq = 6, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = (uint64_t)-11 },
		{ .seq = 7, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 8, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = 62244, .b = SPLICED | 7 },
		{ .seq = 9, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = (uint64_t)-11 },
	};
	struct rec_ev other[] = {
		{ .seq = 1, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 2, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = 65536, .b = SPLICED | 7 },
		{ .seq = 3, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = 44252 },
		{ .seq = 4, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 5, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_RECVMSG, .a = 10, .b = 8 },
		{ .seq = 6, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_RECVMSG,
		  .a = (uint64_t)-11 },
		{ .seq = 7, .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP },
		{ .seq = 8, .type = DETER_EV_CALL, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = 21284, .b = SPLICED | 7 },
		{ .seq = 9, .type = DETER_EV_CALL_DONE, .sub = DETER_ABI_CALL_SENDMSG,
		  .a = (uint64_t)-11 },
	};
#undef SPLICED
	struct rec_log log = { .evs = evs, .nevs = ARRAY_SIZE(evs) };
	const struct replay_call *c;
	struct replay_plan plan;
	char *err = NULL;

	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.nthreads, 1);
	UNIT_CHECK_EQ(plan.threads[0].ncalls, 3);
	c = plan.threads[0].calls;
	UNIT_CHECK(!c[0].cont && c[1].cont && !c[2].cont);
	UNIT_CHECK_EQ(c[1].locks, 1);
	UNIT_CHECK(!replay_plan_check(&plan, &err));
	replay_plan_free(&plan);

	/* Not the bytes left: a sendfile() of its own, after a signal. */
	evs[4].a = 62244;
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK(!plan.threads[0].calls[1].cont);
	UNIT_CHECK(replay_plan_check(&plan, &err) != 0);
	UNIT_CHECK(err && strstr(err, "event 3: a spliced send returned 44252 of 65536 bytes"));
	UNIT_CHECK(err && !strchr(err, '\n'));
	free(err);
	err = NULL;
	replay_plan_free(&plan);

	/* The short send is the log's last call. */
	log.nevs = 3;
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK(replay_plan_check(&plan, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "event 3: a spliced send returned", 32));
	free(err);
	err = NULL;
	replay_plan_free(&plan);

	/* A plain send's short return ends the call: nothing follows. */
	evs[1].b = 7;
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK(!replay_plan_check(&plan, &err));
	replay_plan_free(&plan);

	log.evs = other;
	log.nevs = ARRAY_SIZE(other);
	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.nthreads, 2);
	UNIT_CHECK(plan.threads[0].calls[1].cont);
	UNIT_CHECK(replay_plan_check(&plan, &err) != 0);
	UNIT_CHECK(err && !strncmp(err, "event 5: a call of thread 8 came between", 40));
	UNIT_CHECK(err && strstr(err, "a spliced send of thread 7 that returned short (event 3)"));
	free(err);
	replay_plan_free(&plan);
}

/*
 * Reads of the error queue that found it empty are left out of the plan
 * (no lock turn of theirs); one that found a message, and sends that put
 * messages there, are refused, naming the event.
 */
static void test_plan_errqueue(void)
{
#define LOCK(s) { .seq = (s), .type = DETER_EV_LOCK, .sub = DETER_LOCK_APP }
#define CALL(s, c) { .seq = (s), .type = DETER_EV_CALL, .sub = (c), .a = 10, .b = 7 }
#define DONE(s, c, r) { .seq = (s), .type = DETER_EV_CALL_DONE, .sub = (c), .a = (r) }
	struct rec_ev evs[] = {
		LOCK(1), CALL(2, DETER_ABI_CALL_SENDMSG), DONE(3, DETER_ABI_CALL_SENDMSG, 10),
		CALL(4, DETER_ABI_CALL_RECV_ERRQUEUE),
		DONE(5, DETER_ABI_CALL_RECV_ERRQUEUE, (uint64_t)-EAGAIN),
		LOCK(6), CALL(7, DETER_ABI_CALL_RECVMSG), DONE(8, DETER_ABI_CALL_RECVMSG, 10),
	};
#undef LOCK
#undef CALL
#undef DONE
	struct rec_log log = { .evs = evs, .nevs = ARRAY_SIZE(evs) };
	static const struct {
		size_t ev;
		uint64_t a, b;
		const char *err;
	} refused[] = {
		{ 4, 0, 0, "event 5: a read of the error queue that returned 0 cannot be" },
		{ 2, 10, DETER_SEND_ZEROCOPY, "event 3: a MSG_ZEROCOPY send cannot be replayed" },
		{ 2, 10, DETER_SEND_TXSTAMP,
		  "event 3: a send with transmit timestamps (SO_TIMESTAMPING) cannot be replayed" },
	};
	const struct deter_replay_hdr *h;
	const struct deter_replay_ev *ev;
	struct replay_plan plan;
	char *err = NULL;
	uint8_t *buf;
	size_t i, len;

	UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
	UNIT_CHECK_EQ(plan.nthreads, 1);
	UNIT_CHECK_EQ(plan.threads[0].ncalls, 2);
	UNIT_CHECK_EQ(plan.threads[0].calls[1].call, DETER_ABI_CALL_RECVMSG);
	UNIT_CHECK_EQ(plan.threads[0].calls[1].locks, 1);
	UNIT_CHECK(!replay_plan_check(&plan, &err));
	replay_plan_free(&plan);
	/* Nor does deter.ko's script have them. */
	UNIT_CHECK(!replay_script_build(&log, 0, &buf, &len, &err));
	h = (const struct deter_replay_hdr *)buf;
	ev = (const struct deter_replay_ev *)(h + 1);
	UNIT_CHECK_EQ(h->nevents, ARRAY_SIZE(evs) - 2);
	UNIT_CHECK_EQ(len, sizeof(*h) + (ARRAY_SIZE(evs) - 2) * sizeof(*ev));
	UNIT_CHECK_EQ(ev[3].seq, 6);
	free(buf);
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		struct rec_ev *e = &evs[refused[i].ev];
		struct rec_ev keep = *e;

		e->a = refused[i].a;
		e->b = refused[i].b;
		UNIT_CHECK(!replay_plan_build(&log, &plan, &err));
		UNIT_CHECK(replay_plan_check(&plan, &err) != 0);
		UNIT_CHECK(err && strstr(err, refused[i].err));
		free(err);
		err = NULL;
		replay_plan_free(&plan);
		*e = keep;
	}
}

/*
 * Two ends that need different congestion-control module parameters
 * cannot share the testbed's kernel: refused before anything is set or
 * made (the first parameter differs, so no sysfs file is read).
 */
static void test_globals_differ(void)
{
	struct rec_ev ev[2] = {
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_CUBIC_FAST_CONVERGENCE << 32 | 0 },
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_CUBIC_FAST_CONVERGENCE << 32 | 1 },
	};
	struct rec_log a = { .hdr = { .saddr = 0x0a000101, .daddr = 0x0a000201, .cc = "cubic" },
			     .evs = &ev[0], .nevs = 1 };
	struct rec_log b = { .hdr = { .saddr = 0x0a000201, .daddr = 0x0a000101, .cc = "cubic" },
			     .evs = &ev[1], .nevs = 1 };
	const struct rec_log *logs[2] = { &a, &b };
	struct replay_net net;
	char *err = NULL;

	UNIT_CHECK(replay_net_create(&net, logs, 0, &err) != 0);
	UNIT_CHECK(err && strstr(err, "tcp_cubic.fast_convergence: active end 0, passive 1;"));
	UNIT_CHECK(err && strstr(err, "; one kernel replays both") && !strchr(err, '\n'));
	UNIT_CHECK(net.nset == 0 && net.lock < 0 && !net.host[0].made);
	free(err);
	err = NULL;
	UNIT_CHECK(replay_net_destroy(&net, &err) == 0);
}

int main(void)
{
	UNIT_RUN(test_script);
	UNIT_RUN(test_script_shapes);
	UNIT_RUN(test_plan);
	UNIT_RUN(test_plan_opts);
	UNIT_RUN(test_plan_locks);
	UNIT_RUN(test_plan_first_locks);
	UNIT_RUN(test_plan_connects);
	UNIT_RUN(test_plan_orphan_return);
	UNIT_RUN(test_arrivals);
	UNIT_RUN(test_arrivals_child);
	UNIT_RUN(test_status_parse);
	UNIT_RUN(test_refuse);
	UNIT_RUN(test_plan_errqueue);
	UNIT_RUN(test_plan_splice_read);
	UNIT_RUN(test_plan_splice_cont);
	UNIT_RUN(test_globals_differ);
	return unit_done();
}
