// SPDX-License-Identifier: GPL-2.0
/*
 * deter replay: re-execute one recorded connection on a two-host testbed
 * and check that both ends do exactly what they did when recorded.
 *
 * One run:
 *
 *   logs A, B --(replay_script)--> scripts, call plans, arrival orders
 *        |
 *        v
 *   testbed (replay_net): dtr-<pid>-a [active end] --veth-- dtr-<pid>-b
 *        |
 *        +-- corrector a, b  (child in each namespace: corr_run() on its
 *        |                    NFQUEUE, the peer's packets in recorded order)
 *        +-- tcpdump a, b    (--pcap), trace-cmd record (--trace)
 *        +-- scripts -> deter.ko (replay_kmod), "replay" -> control
 *        +-- generator b     (child: listen, accept, calls) -> "L"
 *        +-- generator a     (child: connect, calls)
 *        |
 *        v
 *   every 100 ms: deter/replay status + generator reports
 *        done/done + both generators "K"  -> verified
 *        a "diverged" line or a "D" report -> diverged
 *        no event replayed for --timeout s -> stuck
 *        |
 *        v
 *   stop tcpdump, trace-cmd, correctors (their counters at -v);
 *   "stop" -> control; kill what is left; delete the namespaces (--keep)
 *
 * Each run prints one line on stdout; anything that keeps a run from
 * producing a meaningful verdict is an error: one line on stderr, exit 1,
 * and no further runs. Children are only ever signalled by their pid.
 */

#include "replay_main.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "corrector.h"
#include "deter_err.h"
#include "replay_gen.h"
#include "replay_kmod.h"
#include "replay_net.h"
#include "replay_pcap.h"
#include "replay_script.h"
#include "replay_vm.h"

#define REPLAY_DEFAULT_DIR "deter-logs"
/* Stuck detection: a replay that replays nothing for this long, seconds. */
#define REPLAY_TIMEOUT_S 30
/* Status poll period, ms: the progress granularity users see. */
#define REPLAY_POLL_MS 100
/* Helpers get this long to get ready or to stop: tcpdump takes ~0.1 s. */
#define REPLAY_HELPER_MS 10000
/*
 * trace-cmd needs a while to start (patching the traced functions in) and
 * longer to stop: it then copies every event format and kallsyms into the
 * file, 10-30 s in a TCG guest. Killing it loses the trace, so wait.
 */
#define REPLAY_TRACE_START_MS 120000
#define REPLAY_TRACE_STOP_MS 300000
/* A child's report text not yet consumed, and a line of it. */
#define REPLAY_CHILD_BUF 1024
/* The correctors notice *stop within CORR_POLL_MS; allow for a loaded VM. */
#define REPLAY_CORR_STOP_MS 5000
/* Reads of deter/replay before a missing script is an error, 10 ms apart. */
#define REPLAY_STATUS_TRIES 20
/* CAP_NET_ADMIN in /proc/self/status CapEff (linux/capability.h). */
#define REPLAY_CAP_NET_ADMIN 12

static const char *const replay_end_names[REPLAY_END_MAX] = { "active", "passive" };

struct replay_opts {
	const char *dir;	/* -d: log directory */
	char *outdir;		/* -o: output directory */
	char *pcap;		/* --pcap/--tcpdump: capture prefix, or NULL */
	const char *trace;	/* --trace: trace-cmd record arguments, or NULL */
	unsigned long long repeat;	/* --repeat: runs */
	unsigned long long timeout_s;	/* --timeout: stuck after, seconds */
	int keep;		/* --keep: leave the namespaces */
	int keep_host;		/* --keep-host-sysctls */
	int verbose;		/* -v */
};

/* Everything a run needs, built once from the logs. */
struct replay_ctx {
	struct replay_opts o;
	struct replay_pair pair;
	char id[20];				/* connection id, hex */
	uint8_t *script[REPLAY_END_MAX];	/* deter.ko scripts */
	size_t script_len[REPLAY_END_MAX];	/* bytes */
	struct replay_plan plan[REPLAY_END_MAX];	/* generator calls */
	struct corr_arrival *arr[REPLAY_END_MAX];	/* corrector orders */
	size_t narr[REPLAY_END_MAX];
	char local[REPLAY_END_MAX][32];		/* "addr:port", status key */
};

/* A child process running in one testbed namespace. */
struct replay_child {
	pid_t pid;		/* 0 when reaped or never started */
	int out;		/* its report pipe, non-blocking; -1 if none */
	char buf[REPLAY_CHILD_BUF];	/* report text not yet consumed */
	int status;		/* wait status once reaped */
};

/* What one run started, to stop in reverse. */
struct replay_run {
	unsigned long long n;	/* 1-based run number */
	struct replay_net net;
	struct replay_child corr[REPLAY_END_MAX];
	struct replay_child gen[REPLAY_END_MAX];
	int gen_ok[REPLAY_END_MAX];	/* its "K" arrived */
	int corr_told[REPLAY_END_MAX];	/* its "E" was reported */
	struct replay_proc dump[REPLAY_END_MAX];
	struct replay_proc trace;
	int loaded;		/* scripts were handed to deter.ko */
};

/* Set by SIGINT/SIGTERM, read with __atomic: a signal-safe flag. */
static sig_atomic_t replay_interrupted;

static void replay_on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&replay_interrupted, 1, __ATOMIC_SEQ_CST);
}

static int replay_num(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *v > max ? -1 : 0;
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

void replay_usage_replay(FILE *f)
{
	fprintf(f,
		"usage: deter replay [-d DIR] [OPTION]... ID\n"
		"       deter replay [OPTION]... A.dlog B.dlog\n"
		"\n"
		"Replay one recorded TCP connection on a two-host testbed (network\n"
		"namespaces joined by veth: host a replays the end that connected, host b\n"
		"the end that accepted) and check that both ends do exactly what they did\n"
		"when recorded. ID names the log ID.dlog in DIR; the other end's log is\n"
		"found in DIR too. Needs deter.ko loaded and CAP_NET_ADMIN.\n"
		"\n"
		"  -d, --dir DIR      log directory (default ./%s)\n"
		"  -o, --output DIR   output directory, created (default ./replay-ID)\n"
		"      --pcap PREFIX  capture each host's packets into PREFIX-a.pcap, PREFIX-b.pcap\n"
		"      --tcpdump      same as --pcap OUTDIR/replay\n"
		"      --trace ARGS   run 'trace-cmd record ARGS' around the replay,\n"
		"                     into OUTDIR/trace.dat\n"
		"  -n, --repeat N     replay N times (run number in output names), then\n"
		"                     print how many verified\n"
		"  -t, --timeout S    stuck when no event is replayed for S seconds (default %d)\n"
		"  -k, --keep         keep the last run's namespaces dtr-PID-a and dtr-PID-b\n"
		"      --keep-host-sysctls  leave this host's net.core.rmem_max and the\n"
		"                     congestion controls' module parameters as they are\n"
		"                     (by default set to the logged values for the run:\n"
		"                     rmem_max decides the window scale, tcp_cubic's beta\n"
		"                     or hystart the window; a replay that needed them\n"
		"                     then diverges)\n"
		"  -v, --verbose      print each step, the host-wide settings set for the run\n"
		"                     and the packet correctors' counters\n"
		"      --vm           replay inside the testbed VM (QEMU, the patched kernel,\n"
		"                     this host's files; deter's source tree's testbed/run),\n"
		"                     for hosts that cannot load deter.ko; outputs land here\n"
		"      --kernel IMAGE with --vm: boot IMAGE (default: the one 'make kernel' built)\n"
		"\n"
		"Prints 'replay ID: verified (N events, both ends)' and exits 0, or\n"
		"'replay ID: diverged at END end event SEQ: ...' (or 'stuck at ...', or\n"
		"'stopped at the END end's network: ...' when a packet corrector cannot make\n"
		"that host's arrivals) and exits 1.\n",
		REPLAY_DEFAULT_DIR, REPLAY_TIMEOUT_S);
}

static int replay_has_net_admin(void)
{
	unsigned long long eff = 0;
	char line[256];
	int found = 0;
	FILE *f;

	f = fopen("/proc/self/status", "r");
	if (!f)
		return 1;	/* no /proc: let the first privileged step say it */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = 1;
			break;
		}
	fclose(f);
	return !found || (eff >> REPLAY_CAP_NET_ADMIN & 1);
}

static int replay_mkdir(const char *dir)
{
	if (mkdir(dir, 0755) && errno != EEXIST)
		return deter_fail("%s: %s", dir, strerror(errno));
	return 0;
}

/* Logs -> scripts, plans, arrivals; any inconsistency is an error. */
static int replay_ctx_build(struct replay_ctx *ctx, char **err)
{
	struct replay_arrival *a;
	const struct rec_log *log;
	struct in_addr in;
	size_t i;
	int e;

	for (e = 0; e < REPLAY_END_MAX; e++) {
		log = ctx->pair.log[e];
		in.s_addr = htonl(log->hdr.saddr);
		snprintf(ctx->local[e], sizeof(ctx->local[e]), "%s:%u", inet_ntoa(in),
			 log->hdr.sport);
		if (replay_script_build(log, &ctx->script[e], &ctx->script_len[e], err) ||
		    replay_plan_build(log, &ctx->plan[e], err) ||
		    replay_arrivals_build(log, &a, &ctx->narr[e], err)) {
			char *m = *err;

			if (asprintf(err, "%s: %s", ctx->pair.path[e], m ? m : "out of memory") < 0)
				*err = NULL;
			free(m);
			return -1;
		}
		ctx->arr[e] = calloc(ctx->narr[e] ? ctx->narr[e] : 1, sizeof(*ctx->arr[e]));
		if (!ctx->arr[e]) {
			free(a);
			*err = strdup("out of memory");
			return -1;
		}
		for (i = 0; i < ctx->narr[e]; i++) {
			ctx->arr[e][i].idx = a[i].idx;
			ctx->arr[e][i].ce = a[i].ce;
			ctx->arr[e][i].segs = a[i].segs;
		}
		free(a);
		if (replay_plan_check(&ctx->plan[e], err)) {
			char *m = *err;

			if (asprintf(err, "%s: %s", ctx->pair.path[e], m ? m : "out of memory") < 0)
				*err = NULL;
			free(m);
			return -1;
		}
	}
	return 0;
}

static void replay_ctx_free(struct replay_ctx *ctx)
{
	int e;

	for (e = 0; e < REPLAY_END_MAX; e++) {
		free(ctx->script[e]);
		replay_plan_free(&ctx->plan[e]);
		free(ctx->arr[e]);
	}
	replay_pair_free(&ctx->pair);
	free(ctx->o.outdir);
	free(ctx->o.pcap);
}

/* Fork a child into @ns with a report pipe; returns 0 in the child. */
static pid_t replay_child_fork(struct replay_child *c, const char *ns, int *wfd)
{
	int pfd[2];
	char *err = NULL;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->out = -1;
	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		close(pfd[0]);
		signal(SIGINT, SIG_IGN);	/* the parent stops us */
		signal(SIGTERM, SIG_DFL);
		if (replay_net_enter(ns, &err)) {
			dprintf(pfd[1], "E %s\n", err);
			_exit(1);
		}
		*wfd = pfd[1];
		return 0;
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	c->pid = pid;
	c->out = pfd[0];
	return pid;
}

/* Read what a child reported so far into its buffer. */
static void replay_child_read(struct replay_child *c)
{
	size_t len = strlen(c->buf);
	ssize_t n;

	while (c->out >= 0 && len < sizeof(c->buf) - 1) {
		n = read(c->out, c->buf + len, sizeof(c->buf) - 1 - len);
		if (n <= 0) {
			if (!n || (errno != EAGAIN && errno != EINTR)) {
				close(c->out);
				c->out = -1;
			}
			break;
		}
		len += n;
		c->buf[len] = '\0';
	}
}

/* Take the next whole line from a child's reports into @line. */
static int replay_child_line(struct replay_child *c, char *line, size_t len)
{
	char *nl;

	replay_child_read(c);
	nl = strchr(c->buf, '\n');
	if (!nl)
		return 0;
	*nl = '\0';
	snprintf(line, len, "%s", c->buf);
	memmove(c->buf, nl + 1, strlen(nl + 1) + 1);
	return 1;
}

/* Reap a child if it exited; 1 if it is gone. */
static int replay_child_reap(struct replay_child *c, int block)
{
	if (!c->pid)
		return 1;
	if (waitpid(c->pid, &c->status, block ? 0 : WNOHANG) != c->pid)
		return 0;
	c->pid = 0;
	return 1;
}

static void replay_child_kill(struct replay_child *c)
{
	if (c->pid) {
		kill(c->pid, SIGKILL);
		replay_child_reap(c, 1);
	}
	if (c->out >= 0) {
		close(c->out);
		c->out = -1;
	}
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
	struct sigaction sa = { .sa_handler = replay_corr_on_term };
	struct corr_flow flow = {
		.saddr = hdr->daddr, .daddr = hdr->saddr,
		.sport = hdr->dport, .dport = hdr->sport,
		.arr = ctx->arr[e], .narr = ctx->narr[e],
	};
	struct corr_stats st = { 0 };
	const struct rec_log *log = ctx->pair.log[e];
	char *err = NULL;
	size_t i;

	for (i = 0; i < log->nevs; i++) {
		if (log->evs[i].type == DETER_EV_VALUE &&
		    log->evs[i].sub == DETER_V_SYN_IPID) {
			flow.have_syn_ipid = 1;
			flow.syn_ipid = (uint16_t)log->evs[i].a;
		}
		if (log->evs[i].type == DETER_EV_RX &&
		    (log->evs[i].b & DETER_RX_CTL))
			flow.have_ctl = 1;
	}
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

static void replay_dump_path(const struct replay_ctx *ctx, const struct replay_run *r,
			     int e, char *path, size_t len)
{
	const struct replay_host *h = &r->net.host[e];

	if (ctx->o.repeat > 1)
		snprintf(path, len, "%s-%llu-%s.pcap", ctx->o.pcap, r->n, h->name);
	else
		snprintf(path, len, "%s-%s.pcap", ctx->o.pcap, h->name);
}

static int replay_dump_start(struct replay_ctx *ctx, struct replay_run *r, int e)
{
	const struct replay_host *h = &r->net.host[e];
	char path[4096], what[32], *err = NULL;

	replay_dump_path(ctx, r, e, path, sizeof(path));
	snprintf(what, sizeof(what), "tcpdump %s", h->name);
	if (replay_proc_start(&r->dump[e], what, h->ns,
			      (char *const[]){ "tcpdump", "-i", (char *)h->dev, "-s", "128",
					       "--immediate-mode", "-U", "-n", "-w", path,
					       "tcp", NULL },
			      "listening on", REPLAY_HELPER_MS, &err))
		return deter_fail_err(&err);
	if (ctx->o.verbose)
		deter_warn("capturing host %s into %s", h->name, path);
	return 0;
}

static int replay_trace_start(struct replay_ctx *ctx, struct replay_run *r)
{
	char path[4096], *err = NULL, **argv;
	wordexp_t we;
	size_t i;
	int ret;

	if (ctx->o.repeat > 1)
		snprintf(path, sizeof(path), "%s/trace-%llu.dat", ctx->o.outdir, r->n);
	else
		snprintf(path, sizeof(path), "%s/trace.dat", ctx->o.outdir);
	if (wordexp(ctx->o.trace, &we, WRDE_NOCMD | WRDE_UNDEF))
		return deter_fail("--trace: cannot parse '%s'", ctx->o.trace);
	argv = calloc(we.we_wordc + 7, sizeof(*argv));
	if (!argv) {
		wordfree(&we);
		return deter_fail("out of memory");
	}
	/* Line-buffered: trace-cmd says it is ready on stdout, a pipe here. */
	argv[0] = "stdbuf";
	argv[1] = "-oL";
	argv[2] = "trace-cmd";
	argv[3] = "record";
	argv[4] = "-o";
	argv[5] = path;
	for (i = 0; i < we.we_wordc; i++)
		argv[6 + i] = we.we_wordv[i];
	ret = replay_proc_start(&r->trace, "trace-cmd", NULL, argv, "Hit Ctrl^C",
				REPLAY_TRACE_START_MS, &err);
	free(argv);
	wordfree(&we);
	if (ret)
		return deter_fail_err(&err);
	if (ctx->o.verbose)
		deter_warn("tracing into %s", path);
	return 0;
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

/*
 * Wait until the tcpdumps have written what they were handed: their files
 * (written per packet, -U) have not grown for 300 ms. They may lag the
 * connection by many packets on a slow (emulated) machine; what is still
 * in a ring when it is stopped is lost. At most 5 s.
 */
static void replay_dump_settle(const struct replay_ctx *ctx, const struct replay_run *r)
{
	off_t last[REPLAY_END_MAX] = { -1, -1 };
	char path[4096];
	struct stat st;
	int i, e, same = 0, moved;

	for (i = 0; i < 50 && same < 3; i++) {
		replay_sleep_ms(100);
		moved = 0;
		for (e = 0; e < REPLAY_END_MAX; e++) {
			if (!r->dump[e].pid)
				continue;
			replay_dump_path(ctx, r, e, path, sizeof(path));
			if (stat(path, &st))
				continue;
			moved |= st.st_size != last[e];
			last[e] = st.st_size;
		}
		same = moved ? 0 : same + 1;
	}
}

/* Stop everything a run started, in reverse; 0 if all went cleanly. */
static int replay_run_stop(struct replay_ctx *ctx, struct replay_run *r, int last)
{
	char *err = NULL, path[4096];
	int e, ret = 0;

	/* Let tcpdump write out the last packets it was handed. */
	replay_dump_settle(ctx, r);
	for (e = 0; e < REPLAY_END_MAX; e++) {
		if (!r->dump[e].pid)
			continue;
		replay_dump_path(ctx, r, e, path, sizeof(path));
		if (replay_proc_stop(&r->dump[e], SIGINT, REPLAY_HELPER_MS, &err)) {
			ret = deter_fail_err(&err);
			continue;
		}
		/* Timestamps: the original's inferred send and receive times. */
		if (replay_pcap_retime(path, ctx->pair.log[e], ctx->pair.log[!e], &err))
			ret = deter_fail_err(&err);
	}
	if (r->trace.pid && ctx->o.verbose)
		deter_warn("stopping trace-cmd (it writes the trace out)");
	if (r->trace.pid && replay_proc_stop(&r->trace, SIGINT, REPLAY_TRACE_STOP_MS, &err))
		ret = deter_fail_err(&err);
	if (replay_corr_stop_all(ctx, r))
		ret = 1;
	if (r->loaded && replay_kmod_control("stop", &err))
		ret = deter_fail_err(&err);
	for (e = 0; e < REPLAY_END_MAX; e++)
		replay_child_kill(&r->gen[e]);
	if (ctx->o.keep && last) {
		if (r->net.host[0].made)
			deter_warn("kept namespaces %s and %s",
				r->net.host[0].ns, r->net.host[1].ns);
		if (replay_net_restore_host(&r->net, &err))
			ret = deter_fail_err(&err);
	} else if (replay_net_destroy(&r->net, &err)) {
		ret = deter_fail_err(&err);
	}
	return ret;
}

/* One run: 0 verified, 1 diverged, -1 error (already printed). */
static int replay_run_once(struct replay_ctx *ctx, unsigned long long n)
{
	const struct rec_log *logs[REPLAY_END_MAX];
	struct replay_run r;
	enum replay_verdict v = REPLAY_ERROR;
	char *err = NULL, what[64];
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
	for (e = 0; e < REPLAY_END_MAX; e++)
		if (replay_corr_start(ctx, &r, e))
			goto stop;
	for (e = 0; ctx->o.pcap && e < REPLAY_END_MAX; e++)
		if (replay_dump_start(ctx, &r, e))
			goto stop;
	if (ctx->o.trace && replay_trace_start(ctx, &r))
		goto stop;
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

/* "DIR/ID.dlog"'s directory, or "." */
static char *replay_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* Resolve the command line's logs and read them. */
static int replay_ctx_load(struct replay_ctx *ctx, int nargs, char **args, int dir_set)
{
	char *path = NULL, *peer = NULL, *err = NULL, *dir = NULL, note[768];
	size_t len = strlen(args[0]);
	int ret, e;

	if (nargs == 2) {
		path = strdup(args[0]);
		if (!path)
			return deter_fail("out of memory");
		ret = replay_pair_load(args[0], args[1], &ctx->pair, &err);
	} else {
		/* A path to a log: its peer is looked for next to it, unless -d. */
		if (len > 5 && !strcmp(args[0] + len - 5, ".dlog")) {
			path = strdup(args[0]);
			dir = dir_set ? strdup(ctx->o.dir) : replay_dirname(args[0]);
		} else {
			if (asprintf(&path, "%s/%s.dlog", ctx->o.dir, args[0]) < 0)
				path = NULL;
			dir = strdup(ctx->o.dir);
		}
		if (!path || !dir) {
			free(path);
			free(dir);
			return deter_fail("out of memory");
		}
		ret = replay_pair_find_peer(dir, path, &peer, &err);
		if (!ret)
			ret = replay_pair_load(path, peer, &ctx->pair, &err);
		free(dir);
		free(peer);
	}
	if (ret) {
		free(path);
		return deter_fail_err(&err);
	}
	/*
	 * A setting TCP reads changed during the connection: the replay
	 * runs with those at its start, and diverges if TCP read another.
	 */
	for (e = 0; e < REPLAY_END_MAX; e++)
		if (replay_settings_note(ctx->pair.log[e], note, sizeof(note)))
			deter_warn(
				"%s: %s; replayed with the settings at its start",
				ctx->pair.path[e], note);
	/* The id is that of the log the user named first. */
	snprintf(ctx->id, sizeof(ctx->id), "%016llx",
		 (unsigned long long)(!strcmp(path, ctx->pair.path[REPLAY_END_ACTIVE]) ?
				      ctx->pair.log[REPLAY_END_ACTIVE]->hdr.conn :
				      ctx->pair.log[REPLAY_END_PASSIVE]->hdr.conn));
	free(path);
	if (replay_ctx_build(ctx, &err))
		return deter_fail_err(&err);
	return 0;
}

/* --vm: the logs were read here; the guest replays them. */
static int replay_cmd_vm(struct replay_ctx *ctx, const char *kernel)
{
	/* The log named first gave the id; the guest's replay prints it too. */
	int first = ctx->pair.log[REPLAY_END_PASSIVE]->hdr.conn ==
		    strtoull(ctx->id, NULL, 16) ? REPLAY_END_PASSIVE : REPLAY_END_ACTIVE;
	struct replay_vm_opts vo = {
		.logs = { ctx->pair.path[first], ctx->pair.path[!first] },
		.outdir = ctx->o.outdir,
		.pcap = ctx->o.pcap,
		.trace = ctx->o.trace,
		.kernel = kernel,
		.repeat = ctx->o.repeat,
		.timeout_s = ctx->o.timeout_s,
		.verbose = ctx->o.verbose,
	};
	char *err = NULL;
	int r;

	if (replay_mkdir(ctx->o.outdir))
		return 1;
	r = replay_vm_run(&vo, &err);
	return r < 0 ? deter_fail_err(&err) : r;
}

int replay_cmd_replay(int argc, char **argv)
{
	enum { OPT_PCAP = 256, OPT_TCPDUMP, OPT_TRACE, OPT_VM, OPT_KERNEL, OPT_KEEP_HOST };
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "pcap", required_argument, NULL, OPT_PCAP },
		{ "tcpdump", no_argument, NULL, OPT_TCPDUMP },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "repeat", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "keep", no_argument, NULL, 'k' },
		{ "keep-host-sysctls", no_argument, NULL, OPT_KEEP_HOST },
		{ "verbose", no_argument, NULL, 'v' },
		{ "vm", no_argument, NULL, OPT_VM },
		{ "kernel", required_argument, NULL, OPT_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct replay_ctx ctx = {
		.o = { .dir = REPLAY_DEFAULT_DIR, .repeat = 1, .timeout_s = REPLAY_TIMEOUT_S },
	};
	struct sigaction sa = { .sa_handler = replay_on_signal }, old_int, old_term;
	const char *outdir = NULL, *pcap = NULL, *bad = NULL, *kernel = NULL;
	int c, dir_set = 0, tcpdump = 0, vm = 0, ret = 1;
	unsigned long long i, verified = 0;
	char *err = NULL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:o:n:t:kvh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			ctx.o.dir = optarg;
			dir_set = 1;
			break;
		case 'o':
			outdir = optarg;
			break;
		case OPT_PCAP:
			pcap = optarg;
			break;
		case OPT_TCPDUMP:
			tcpdump = 1;
			break;
		case OPT_TRACE:
			ctx.o.trace = optarg;
			break;
		case 'n':
			if (replay_num(optarg, 1000000, &ctx.o.repeat) || !ctx.o.repeat)
				bad = "a positive number";
			break;
		case 't':
			if (replay_num(optarg, 86400, &ctx.o.timeout_s) || !ctx.o.timeout_s)
				bad = "a number of seconds";
			break;
		case 'k':
			ctx.o.keep = 1;
			break;
		case OPT_KEEP_HOST:
			ctx.o.keep_host = 1;
			break;
		case 'v':
			ctx.o.verbose = 1;
			break;
		case OPT_VM:
			vm = 1;
			break;
		case OPT_KERNEL:
			kernel = optarg;
			break;
		case 'h':
			replay_usage_replay(stdout);
			return 0;
		case ':':
			return deter_usage_fail("option '%s' needs an argument",
						argv[optind - 1]);
		default:
			return deter_usage_fail("unknown option '%s'", argv[optind - 1]);
		}
		if (bad)
			return deter_usage_fail("--%s: '%s' is not %s",
						c == 'n' ? "repeat" : "timeout", optarg, bad);
	}
	if (optind == argc)
		return deter_usage_fail("no connection given");
	if (argc - optind > 2)
		return deter_usage_fail("unexpected argument '%s'", argv[optind + 2]);
	if (pcap && tcpdump)
		return deter_usage_fail("--pcap and --tcpdump are exclusive");
	if (kernel && !vm)
		return deter_usage_fail("--kernel needs --vm");
	if (vm && ctx.o.keep)
		return deter_usage_fail("--keep and --vm are exclusive (%s)",
					"the namespaces go with the VM");
	if (vm && ctx.o.keep_host)
		return deter_usage_fail("--keep-host-sysctls and --vm are exclusive (%s)",
					"the VM is a host of its own");
	if (replay_ctx_load(&ctx, argc - optind, argv + optind, dir_set))
		goto out;
	if (outdir)
		ctx.o.outdir = strdup(outdir);
	else if (asprintf(&ctx.o.outdir, "replay-%s", ctx.id) < 0)
		ctx.o.outdir = NULL;
	if (pcap)
		ctx.o.pcap = strdup(pcap);
	else if (tcpdump && ctx.o.outdir && asprintf(&ctx.o.pcap, "%s/replay", ctx.o.outdir) < 0)
		ctx.o.pcap = NULL;
	if (!ctx.o.outdir || ((pcap || tcpdump) && !ctx.o.pcap)) {
		deter_fail("out of memory");
		goto out;
	}
	if (vm) {
		ret = replay_cmd_vm(&ctx, kernel);
		goto out;
	}
	if (!replay_has_net_admin()) {
		deter_fail("needs CAP_NET_ADMIN (run as root)");
		goto out;
	}
	if (replay_kmod_check(&err)) {
		deter_fail_err(&err);
		goto out;
	}
	if (replay_mkdir(ctx.o.outdir))
		goto out;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (i = 1; i <= ctx.o.repeat; i++) {
		int r = replay_run_once(&ctx, i);

		if (r < 0)
			break;
		verified += !r;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (i <= ctx.o.repeat)
		goto out;
	if (ctx.o.repeat > 1)
		printf("%llu/%llu verified\n", verified, ctx.o.repeat);
	ret = verified == ctx.o.repeat ? 0 : 1;
out:
	replay_ctx_free(&ctx);
	return ret;
}
