// SPDX-License-Identifier: GPL-2.0
/*
 * One replay run: re-execute a recorded connection on a fresh two-host
 * testbed and decide whether both ends did exactly what they did when
 * recorded.
 *
 *   testbed (replay_net): dtr-<pid>-a [active end] --veth-- dtr-<pid>-b
 *        |
 *        +-- corrector a, b  (child in each namespace: corr_run() on its
 *        |                    NFQUEUE, the peer's packets in recorded order;
 *        |                    none over lo with nothing to correct)
 *        +-- tcpdump a, b    (--pcap), trace-cmd record (--trace)
 *        +-- scripts -> deter.ko (replay_kmod), "replay" -> control
 *        +-- generator b     (child: listen, accept, calls) -> "L"
 *        +-- generator a     (child: connect, calls)
 *        |
 *        v
 *   every 100 ms: deter/replay status + children's reports
 *        done/done + both generators "K"  -> verified
 *        a "diverged" line or a "D" report -> diverged
 *        a corrector's "N" report         -> stopped at that network
 *        no event replayed for --timeout s -> stuck
 *        |
 *        v
 *   stop tcpdump, trace-cmd, correctors (their counters at -v);
 *   "stop" -> control; kill what is left; delete the namespaces (--keep)
 *
 * The verdict is one line on stdout; anything that keeps a run from
 * producing a meaningful verdict is an error, one line on stderr.
 */
#include "replay_run.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "deter_err.h"
#include "replay_capture.h"
#include "replay_child.h"
#include "replay_gen.h"
#include "replay_kmod.h"
#include "replay_net.h"
#include "rec_edge.h"
#include "rec_log.h"

/* Status poll period, ms: the progress granularity users see. */
#define REPLAY_POLL_MS 100
/* Children get this long to get ready: the queue bound, listening. */
#define REPLAY_HELPER_MS 10000
/* The correctors notice *stop within CORR_POLL_MS; allow for a loaded VM. */
#define REPLAY_CORR_STOP_MS 5000
/* Reads of deter/replay before a missing script is an error, 10 ms apart. */
#define REPLAY_STATUS_TRIES 20

static const char *const replay_end_names[REPLAY_END_MAX] = { "active", "passive" };

/* What one run started, to stop in reverse. */
struct replay_run {
	unsigned long long n;	/* 1-based run number */
	struct replay_net net;
	struct replay_child corr[REPLAY_END_MAX];
	struct replay_child gen[REPLAY_END_MAX];
	int gen_ok[REPLAY_END_MAX];	/* its "K" arrived */
	int corr_told[REPLAY_END_MAX];	/* its "E" was reported */
	struct replay_capture cap;	/* tcpdump, trace-cmd */
	int loaded;		/* scripts were handed to deter.ko */
};

/* Set by SIGINT/SIGTERM, read with __atomic: a signal-safe flag. */
static sig_atomic_t replay_interrupted;

/**
 * replay_run_interrupt() - end the run under way as an error
 *
 * Async-signal-safe: deter replay's SIGINT and SIGTERM handler.
 */
void replay_run_interrupt(void)
{
	__atomic_store_n(&replay_interrupted, 1, __ATOMIC_SEQ_CST);
}

static long long replay_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void replay_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * An output file of run @r: "PCAP-HOST.pcap" for host @host, or with no
 * host "OUTDIR/trace.dat"; with --repeat > 1 the run's number too.
 */
static void replay_run_path(const struct replay_ctx *ctx, const struct replay_run *r,
			    const char *host, char *path, size_t len)
{
	if (host && ctx->o.repeat > 1)
		snprintf(path, len, "%s-%llu-%s.pcap", ctx->o.pcap, r->n, host);
	else if (host)
		snprintf(path, len, "%s-%s.pcap", ctx->o.pcap, host);
	else if (ctx->o.repeat > 1)
		snprintf(path, len, "%s/trace-%llu.dat", ctx->o.outdir, r->n);
	else
		snprintf(path, len, "%s/trace.dat", ctx->o.outdir);
}

/* corr_run()'s stop flag, set by SIGTERM in the corrector child. */
static sig_atomic_t replay_corr_stop;

static void replay_corr_on_term(int sig)
{
	(void)sig;
	__atomic_store_n(&replay_corr_stop, 1, __ATOMIC_SEQ_CST);
}

/* Child: the packet corrector of one host. */
static void __attribute__((noreturn))
replay_corr_child(const struct replay_ctx *ctx, const struct replay_host *h,
		  int e, int wfd)
{
	const struct deter_log_header *hdr = &ctx->pair.log[e]->hdr;
	const struct deter_log_header *peer = &ctx->pair.log[!e]->hdr;
	struct sigaction sa = { .sa_handler = replay_corr_on_term };
	struct corr_flow flow = {
		.saddr = hdr->daddr, .daddr = hdr->saddr,
		.sport = hdr->dport, .dport = hdr->sport,
		.arr = ctx->arr[e], .narr = ctx->narr[e],
	};
	const struct rec_log *log = ctx->pair.log[e];
	const struct rec_log *plog = ctx->pair.log[!e];
	struct corr_stats st = { 0 };
	unsigned int got = 0, sent = 0;
	int child = 0;
	char *err = NULL;
	size_t i;

	for (i = 0; i < plog->nevs; i++)
		sent += plog->evs[i].type == DETER_EV_VALUE &&
			plog->evs[i].sub == DETER_V_SYNACK_CLOCK;
	for (i = 0; i < log->nevs; i++) {
		const struct rec_ev *ev = &log->evs[i];

		if (ev->type == DETER_EV_RX && (ev->b & DETER_RX_SYN)) {
			got++;
			/* Its TS value + 1, if it had one. */
			if (ev->c && flow.nsynack_ts < CORR_SYNACK_TS)
				flow.synack_ts[flow.nsynack_ts++] = (uint32_t)(ev->c - 1);
		}
		/* The gaps logged before the first arrival's CHILD_IPID. */
		if (ev->type == DETER_EV_VALUE && ev->sub == DETER_V_CHILD_IPID)
			child = 1;
		if (!child && flow.have_syn_ipid && ev->type == DETER_EV_NET &&
		    ev->sub == DETER_NET_GAP && flow.nhead < CORR_HEAD_GAPS) {
			flow.head[flow.nhead].ipid = (uint16_t)ev->a;
			flow.head[flow.nhead++].count = (uint16_t)ev->b;
		}
		if (log->evs[i].type == DETER_EV_VALUE &&
		    log->evs[i].sub == DETER_V_SYN_IPID) {
			flow.have_syn_ipid = 1;
			flow.syn_ipid = (uint16_t)log->evs[i].a;
		}
		if (log->evs[i].type == DETER_EV_RX &&
		    (log->evs[i].b & DETER_RX_CTL))
			flow.have_ctl = 1;
	}
	flow.synack_drop = sent > got ? sent - got : 0;
	flow.split = ctx->rebuild[e];
	/* The edges of the peer's series that only the pair shows. */
	flow.have_first = !!(hdr->edges & DETER_EDGE_RX);
	flow.first_ipid = (uint16_t)peer->ipid;
	flow.have_end = rec_edge_tail(hdr, peer) > 0;
	flow.end_ipid = (uint16_t)peer->ipid_end;
	sigaction(SIGTERM, &sa, NULL);	/* no SA_RESTART: wake corr_run */
	if (corr_run(h->queue, &flow, 1, &replay_corr_stop, &st, &err)) {
		/* N: it cannot make an arrival; E: it failed. */
		dprintf(wfd, "%c corrector %s: %s\n", st.split ? 'N' : 'E', h->name,
			err ? err : "failed");
		_exit(1);
	}
	dprintf(wfd, "S %" PRIu64 " passed, %" PRIu64 " dropped, %" PRIu64 " marked CE, ",
		st.passed, st.dropped, st.marked);
	dprintf(wfd, "%" PRIu64 " held at most, %" PRIu64 " foreign, %" PRIu64 " timeouts\n",
		st.held_max, st.foreign, st.timeouts);
	_exit(0);
}

/* Is NFQUEUE @queue bound in the namespace of process @pid? */
static int replay_queue_bound(pid_t pid, uint16_t queue)
{
	char path[96], line[256];
	unsigned int q;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/netfilter/nfnetlink_queue", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%u", &q) == 1 && q == queue;
	fclose(f);
	return found;
}

static int replay_corr_start(struct replay_ctx *ctx, struct replay_run *r, int e)
{
	const struct replay_host *h = &r->net.host[e];
	struct replay_child *c = &r->corr[e];
	long long end = replay_now_ms() + REPLAY_HELPER_MS;
	char line[512];
	int wfd;
	pid_t pid;

	pid = replay_child_fork(c, h->ns, &wfd);
	if (pid < 0)
		return deter_fail("corrector %s: %s", h->name, strerror(errno));
	if (!pid)
		replay_corr_child(ctx, h, e, wfd);
	while (!replay_queue_bound(c->pid, h->queue)) {
		if (replay_child_reap(c, 0)) {
			if (replay_child_line(c, line, sizeof(line)) && line[0] == 'E')
				return deter_fail("%s", line + 2);
			return deter_fail("corrector %s: exited before binding queue %u",
					  h->name, h->queue);
		}
		if (replay_now_ms() > end)
			return deter_fail("corrector %s: queue %u not bound after %d s",
					  h->name, h->queue, REPLAY_HELPER_MS / 1000);
		replay_sleep_ms(10);
	}
	return 0;
}

static int replay_corr_stop_all(struct replay_ctx *ctx, struct replay_run *r)
{
	long long end;
	char line[512];
	int e, ret = 0;

	for (e = 0; e < REPLAY_END_MAX; e++)
		if (r->corr[e].pid)
			kill(r->corr[e].pid, SIGTERM);
	end = replay_now_ms() + REPLAY_CORR_STOP_MS;
	for (e = 0; e < REPLAY_END_MAX; e++) {
		struct replay_child *c = &r->corr[e];
		const char *name = r->net.host[e].name;

		if (!c->pid && c->out < 0)
			continue;
		while (!replay_child_reap(c, 0) && replay_now_ms() < end)
			replay_sleep_ms(10);
		if (c->pid) {
			replay_child_kill(c);
			ret = deter_fail("corrector %s: did not stop within %d s, killed", name,
					 REPLAY_CORR_STOP_MS / 1000);
			continue;
		}
		while (replay_child_line(c, line, sizeof(line))) {
			if (line[0] == 'E' || line[0] == 'N') {
				ret = deter_fail("%s", line + 2);
			} else if (line[0] == 'S') {
				if (ctx->o.verbose)
					deter_warn("corrector %s: %s", name,
						   line + 2);
				if (!strstr(line, " 0 timeouts"))
					deter_fail("corrector %s gave up on arrivals: %s",
						   name, line + 2);
			}
		}
		if ((!WIFEXITED(c->status) || WEXITSTATUS(c->status)) && !r->corr_told[e]) {
			if (!ret)
				ret = deter_fail("corrector %s: exited with status %d", name,
						 WIFEXITED(c->status) ? WEXITSTATUS(c->status) :
						 128 + WTERMSIG(c->status));
		}
		replay_child_kill(c);
	}
	return ret;
}

/* Child: the socket-call generator of one end. */
static void __attribute__((noreturn))
replay_gen_child(const struct replay_ctx *ctx, int e, int wfd)
{
	const struct deter_log_header *hdr = &ctx->pair.log[e]->hdr;
	struct replay_gen_cfg cfg = {
		.active = e == REPLAY_END_ACTIVE,
		.saddr = hdr->saddr, .daddr = hdr->daddr,
		.sport = hdr->sport, .dport = hdr->dport,
		.cc = hdr->cc, .plan = &ctx->plan[e], .report_fd = wfd,
	};

	if (!replay_gen_run(&cfg))
		_exit(0);
	/*
	 * Diverged: exiting would close the socket and reset the peer,
	 * whose generator would report that instead. Wait to be killed.
	 */
	for (;;)
		pause();
}

static int replay_gen_start(struct replay_ctx *ctx, struct replay_run *r, int e)
{
	const struct replay_host *h = &r->net.host[e];
	struct replay_child *c = &r->gen[e];
	long long end = replay_now_ms() + REPLAY_HELPER_MS;
	char line[512];
	int wfd;
	pid_t pid;

	pid = replay_child_fork(c, h->ns, &wfd);
	if (pid < 0)
		return deter_fail("generator %s: %s", h->name, strerror(errno));
	if (!pid)
		replay_gen_child(ctx, e, wfd);
	if (e != REPLAY_END_PASSIVE)
		return 0;
	/* The active end may connect once the passive end listens. */
	for (;;) {
		if (replay_child_line(c, line, sizeof(line))) {
			if (line[0] == 'L')
				return 0;
			return deter_fail("generator %s: %s", h->name,
					  line[0] ? line + 2 : "failed");
		}
		if (replay_child_reap(c, 0) && c->out < 0)
			return deter_fail("generator %s: exited before listening", h->name);
		if (replay_now_ms() > end)
			return deter_fail("generator %s: not listening after %d s", h->name,
					  REPLAY_HELPER_MS / 1000);
		replay_sleep_ms(10);
	}
}

/* Why a run ended. */
enum replay_verdict {
	REPLAY_VERIFIED,
	REPLAY_DIVERGED,	/* printed on stdout */
	REPLAY_ERROR,		/* printed on stderr */
};

/*
 * Both ends' status lines. A script deter.ko does not list is an error,
 * after a few re-reads (a file standing in for deter.ko, DETER_DEBUGFS,
 * may be caught mid-rewrite).
 */
static int replay_watch_status(struct replay_ctx *ctx, struct replay_status *st)
{
	char *text = NULL, *err = NULL;
	int e, tries, rc = 0;

	for (tries = 0; tries < REPLAY_STATUS_TRIES; tries++) {
		if (tries)
			replay_sleep_ms(10);
		if (replay_kmod_read(&text, &err))
			return deter_fail_err(&err);
		for (e = 0; e < REPLAY_END_MAX; e++) {
			rc = replay_kmod_parse(text, ctx->local[e], &st[e]);
			if (rc)
				break;
		}
		if (e == REPLAY_END_MAX) {
			free(text);
			return 0;
		}
		if (tries < REPLAY_STATUS_TRIES - 1)
			free(text);
	}
	if (rc == -2)
		deter_fail("%s (%s end): deter.ko of another build? status '%s'",
			   ctx->local[e], replay_end_names[e], st[e].line);
	else
		deter_fail("deter.ko reports no script for %s (%s end): '%.*s'", ctx->local[e],
			   replay_end_names[e], (int)strcspn(text, "\n"), text);
	free(text);
	return -1;
}

/* Watch the status and the generators until a verdict. */
static enum replay_verdict replay_watch(struct replay_ctx *ctx, struct replay_run *r)
{
	struct replay_status st[REPLAY_END_MAX];
	long long last_ms = replay_now_ms();
	uint64_t last = UINT64_MAX, progress;
	char line[REPLAY_CHILD_BUF];
	int e, done, first;

	for (;;) {
		if (__atomic_load_n(&replay_interrupted, __ATOMIC_SEQ_CST)) {
			deter_fail("interrupted");
			return REPLAY_ERROR;
		}
		if (replay_watch_status(ctx, st))
			return REPLAY_ERROR;
		/*
		 * A corrector that stopped, first: what follows at the hosts
		 * is its effect. Its counters ("S") wait for the stop.
		 */
		for (e = 0; e < REPLAY_END_MAX; e++) {
			struct replay_child *c = &r->corr[e];

			replay_child_read(c);
			if ((c->buf[0] != 'N' && c->buf[0] != 'E') ||
			    !replay_child_line(c, line, sizeof(line)))
				continue;
			r->corr_told[e] = 1;
			if (line[0] == 'E') {
				deter_fail("%s", line + 2);
				return REPLAY_ERROR;
			}
			printf("replay %s: stopped at the %s end's network: %s\n", ctx->id,
			       replay_end_names[e], line + 2);
			return REPLAY_DIVERGED;
		}
		/*
		 * The end that diverged first: once one end runs freely, what
		 * it sends makes the other diverge too, often at an event
		 * that says nothing of the cause. deter.ko gives the scripts'
		 * lines one at a time, so once one is seen diverged the status
		 * is read again, for the other end's number.
		 */
		for (e = 0; e < REPLAY_END_MAX; e++)
			if (!strcmp(st[e].state, "diverged"))
				break;
		if (e < REPLAY_END_MAX && replay_watch_status(ctx, st))
			return REPLAY_ERROR;
		first = -1;
		for (e = 0; e < REPLAY_END_MAX; e++)
			if (!strcmp(st[e].state, "diverged") &&
			    (first < 0 || st[e].diverged_nr < st[first].diverged_nr))
				first = e;
		if (first >= 0) {
			printf("replay %s: diverged at %s end %s\n", ctx->id,
			       replay_end_names[first], st[first].msg);
			return REPLAY_DIVERGED;
		}
		for (e = 0; e < REPLAY_END_MAX; e++) {
			struct replay_child *c = &r->gen[e];

			while (replay_child_line(c, line, sizeof(line))) {
				if (line[0] == 'K') {
					r->gen_ok[e] = 1;
				} else if (line[0] == 'D') {
					printf("replay %s: diverged at %s end %s\n", ctx->id,
					       replay_end_names[e], line + 2);
					return REPLAY_DIVERGED;
				} else if (line[0] == 'E') {
					deter_fail("generator %s: %s", r->net.host[e].name,
						   line + 2);
					return REPLAY_ERROR;
				}
			}
			if (replay_child_reap(c, 0) && c->out < 0 && !r->gen_ok[e]) {
				deter_fail("generator %s: exited with status %d and no verdict",
					   r->net.host[e].name,
					   WIFEXITED(c->status) ? WEXITSTATUS(c->status) :
					   128 + WTERMSIG(c->status));
				return REPLAY_ERROR;
			}
		}
		done = 0;
		progress = 0;
		for (e = 0; e < REPLAY_END_MAX; e++) {
			done += !strcmp(st[e].state, "done") && r->gen_ok[e];
			progress += st[e].done + r->gen_ok[e];
		}
		if (done == REPLAY_END_MAX) {
			printf("replay %s: verified (%u events, both ends)\n", ctx->id,
			       st[0].nevents + st[1].nevents);
			return REPLAY_VERIFIED;
		}
		if (progress != last) {
			last = progress;
			last_ms = replay_now_ms();
		} else if (replay_now_ms() - last_ms >= (long long)ctx->o.timeout_s * 1000) {
			for (e = 0; e < REPLAY_END_MAX; e++)
				if (strcmp(st[e].state, "done"))
					break;
			if (e < REPLAY_END_MAX)
				printf("replay %s: stuck at %s end event %u of %u (%s)\n", ctx->id,
				       replay_end_names[e], st[e].done + 1, st[e].nevents,
				       st[e].line);
			else
				printf("replay %s: stuck: the %s end's calls did not finish\n",
				       ctx->id, replay_end_names[r->gen_ok[0] ? 1 : 0]);
			return REPLAY_DIVERGED;
		}
		replay_sleep_ms(REPLAY_POLL_MS);
	}
}

/* Stop everything a run started, in reverse; 0 if all went cleanly. */
static int replay_run_stop(struct replay_ctx *ctx, struct replay_run *r, int last)
{
	char *err = NULL;
	int e, ret = 0;

	ret = replay_capture_stop(&r->cap, ctx->pair.log, ctx->o.verbose);
	if (replay_corr_stop_all(ctx, r))
		ret = 1;
	if (r->loaded && replay_kmod_control("stop", &err))
		ret = deter_fail_err(&err);
	for (e = 0; e < REPLAY_END_MAX; e++)
		replay_child_kill(&r->gen[e]);
	if (ctx->o.keep && last) {
		if (r->net.host[0].made && r->net.local)
			deter_warn("kept namespace %s", r->net.host[0].ns);
		else if (r->net.host[0].made)
			deter_warn("kept namespaces %s and %s",
				   r->net.host[0].ns, r->net.host[1].ns);
		if (replay_net_restore_host(&r->net, &err))
			ret = deter_fail_err(&err);
	} else if (replay_net_destroy(&r->net, &err)) {
		ret = deter_fail_err(&err);
	}
	return ret;
}

/**
 * replay_run_once() - replay the connection once on a new testbed
 * @ctx: what the logs and options gave
 * @n: the run's number, from 1 (in output file names if --repeat > 1)
 *
 * Prints the verdict on stdout; tears down what it set up, keeping the
 * namespaces of the last run with --keep.
 *
 * Return: 0 verified, 1 diverged or stuck, -1 error (said).
 */
int replay_run_once(struct replay_ctx *ctx, unsigned long long n)
{
	const struct rec_log *logs[REPLAY_END_MAX];
	struct replay_run r;
	enum replay_verdict v = REPLAY_ERROR;
	char *err = NULL, what[64], path[4096];
	int e;

	memset(&r, 0, sizeof(r));
	r.n = n;
	for (e = 0; e < REPLAY_END_MAX; e++) {
		r.corr[e].out = -1;
		r.gen[e].out = -1;
		logs[e] = ctx->pair.log[e];
	}
	if (replay_net_create(&r.net, logs, ctx->o.keep_host, &err)) {
		deter_fail_err(&err);
		goto stop;
	}
	if (ctx->o.verbose) {
		deter_warn("testbed %s (%s) -- %s (%s)", r.net.host[0].ns,
			   ctx->local[0], r.net.host[1].ns, ctx->local[1]);
		for (e = 0; e < r.net.nset; e++) {
			const struct replay_global *g = &r.net.set[e];
			const struct rec_sysctl *sc = &rec_sysctls[g->id];
			const struct replay_host *h = &r.net.host[!r.net.host[0].want[g->id]];

			deter_warn("%s.%s = %lld for the replay (the host's %lld)",
				   rec_sysctl_dir(sc), sc->name, h->global[g->id], g->saved);
		}
	}
	/* Over lo with nothing to correct, lo delivers (replay_net.c). */
	for (e = 0; !r.net.direct && e < REPLAY_END_MAX; e++)
		if (replay_corr_start(ctx, &r, e))
			goto stop;
	for (e = 0; ctx->o.pcap && e < REPLAY_END_MAX; e++) {
		replay_run_path(ctx, &r, r.net.host[e].name, path, sizeof(path));
		if (replay_capture_dump_start(&r.cap, e, &r.net.host[e], path, ctx->o.verbose))
			goto stop;
	}
	if (ctx->o.trace) {
		replay_run_path(ctx, &r, NULL, path, sizeof(path));
		if (replay_capture_trace_start(&r.cap, ctx->o.trace, path, ctx->o.verbose))
			goto stop;
	}
	for (e = 0; e < REPLAY_END_MAX; e++) {
		snprintf(what, sizeof(what), "the %s end's script", replay_end_names[e]);
		r.loaded = 1;
		if (replay_kmod_load(ctx->script[e], ctx->script_len[e], what, &err)) {
			deter_fail_err(&err);
			goto stop;
		}
	}
	if (replay_kmod_control("replay", &err)) {
		deter_fail_err(&err);
		goto stop;
	}
	if (ctx->o.verbose)
		deter_warn("scripts loaded (%zu + %zu events), replay armed",
			   ctx->pair.log[0]->nevs, ctx->pair.log[1]->nevs);
	if (replay_gen_start(ctx, &r, REPLAY_END_PASSIVE) ||
	    replay_gen_start(ctx, &r, REPLAY_END_ACTIVE))
		goto stop;
	v = replay_watch(ctx, &r);
	fflush(stdout);
stop:
	if (replay_run_stop(ctx, &r, n == ctx->o.repeat))
		v = REPLAY_ERROR;
	return v == REPLAY_ERROR ? -1 : v == REPLAY_DIVERGED;
}
