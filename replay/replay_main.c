// SPDX-License-Identifier: GPL-2.0
/*
 * deter replay: the command line. Re-executes one recorded connection on
 * a two-host testbed, --repeat times, and says whether both ends did
 * exactly what they did when recorded.
 *
 *   ID | FILE | A.dlog B.dlog --(replay_script)--> both ends' logs, paired
 *        |                                          (the peer found in DIR)
 *        v
 *   logs --> deter.ko scripts, call plans, arrival orders   (struct replay_ctx)
 *        |
 *        +-- --vm:  the same command line in the testbed VM  (replay_vm)
 *        +-- else:  CAP_NET_ADMIN? deter.ko's replay side? then
 *                   replay_run_once() x --repeat             (replay_run)
 *
 * Exit status: 0 every run verified, 1 a run diverged or stuck (said on
 * stdout) or an error (said on stderr; no further runs), 2 usage.
 */
#include "replay_main.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "deter_err.h"
#include "replay_kmod.h"
#include "replay_run.h"
#include "replay_script.h"
#include "replay_vm.h"
#include "rec_log.h"

#define REPLAY_DEFAULT_DIR "deter-logs"
/* Stuck detection: a replay that replays nothing for this long, seconds. */
#define REPLAY_TIMEOUT_S 30
/* CAP_NET_ADMIN in /proc/self/status CapEff (linux/capability.h). */
#define REPLAY_CAP_NET_ADMIN 12

static void replay_on_signal(int sig)
{
	(void)sig;
	replay_run_interrupt();
}

static int replay_num(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *v > max ? -1 : 0;
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
		"when recorded. A connection that had both ends on one host (over lo:\n"
		"127.0.0.1, or the host's own address) replays on one host, dtr-PID-l.\n"
		"ID names the log ID.dlog in DIR; the other end's log is found in DIR\n"
		"too. Needs deter.ko loaded and CAP_NET_ADMIN.\n"
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
		"                     (or dtr-PID-l)\n"
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
		ctx->rebuild[e] = replay_log_rebuilds(log, ctx->pair.log[!e]);
		if (replay_script_build(log, ctx->rebuild[e], &ctx->script[e],
					&ctx->script_len[e], err) ||
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
			deter_warn("%s: %s; replayed with the settings at its start",
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

	while ((c = deter_getopt(argc, argv, "d:o:n:t:kvh", opts)) != -1) {
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
		default:
			return 2;
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
