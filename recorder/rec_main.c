// SPDX-License-Identifier: GPL-2.0
/*
 * deter record, ls, show: the recording side's command line.
 *
 *   record: arm deter.ko (debugfs deter/control), drain its events from
 *           tracefs every 100 ms into the connection table, which writes
 *           each connection's log as soon as it is whole; on SIGINT or
 *           SIGTERM (or --duration), disarm, drain, write what is left
 *           marked incomplete.
 *   ls:     one line (or JSON object) per log, from the headers alone.
 *   show:   one log decoded into a readable event list.
 *
 * Logs never hold payload bytes: deter.ko never reads any.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deter_abi.h"
#include "rec_conn.h"
#include "rec_index.h"
#include "rec_keep.h"
#include "rec_log.h"
#include "rec_main.h"
#include "rec_trace.h"

#define REC_CONTROL "/sys/kernel/debug/deter/control"
#define REC_STATS "/sys/kernel/debug/deter/stats"
#define REC_DEFAULT_DIR "deter-logs"
/* Per-CPU ring buffer: 16 MiB holds ~0.4 M events, seconds of line rate. */
#define REC_BUFFER_KB 16384

static int __attribute__((format(printf, 2, 3)))
rec_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "deter: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int __attribute__((format(printf, 2, 3)))
rec_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "deter: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'deter %s --help'.\n", cmd);
	return 2;
}

static int rec_num(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *v > max ? -1 : 0;
}

/*
 * A size from environment variable @name, if set: the tests' knobs for
 * how much deter record holds per connection (rec_conn.c, rec_log.c).
 */
static int rec_env_size(const char *name, size_t *v)
{
	const char *s = getenv(name);
	unsigned long long n;

	if (!s)
		return 0;
	if (rec_num(s, 1ULL << 30, &n) || !n) {
		fprintf(stderr, "deter: record: %s='%s' is not a size from 1 to 2^30\n", name, s);
		return -1;
	}
	*v = n;
	return 0;
}

/* @cmd's --zstd-level @s into *@level; else a usage error (2). */
static int rec_zstd_level(const char *cmd, const char *s, int *level)
{
	unsigned long long v;

	if (rec_num(s, 19, &v) || !v)
		return rec_usage_err(cmd, "--zstd-level: '%s' is not a level from 1 to 19", s);
	*level = v;
	return 0;
}

/*
 * A number followed by one of @units' letters (case does not matter) or
 * none, times that unit's factor (@mult[i] for @units[i]; none: 1), into
 * *@v; -1 if @s is not one or it overflows, or is 0.
 */
static int rec_num_unit(const char *s, const char *units,
			const unsigned long long *mult, unsigned long long *v)
{
	unsigned long long n, m = 1;
	const char *u;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end) {
		u = end[1] ? NULL : strchr(units, *end | 0x20);
		if (!u || !*u)
			return -1;
		m = mult[u - units];
	}
	if (!n || n > ~0ULL / m)
		return -1;
	*v = n * m;
	return 0;
}

/* --max-size: bytes, or K, M, G, T (powers of 1024). */
static int rec_size_arg(const char *s, unsigned long long *v)
{
	static const unsigned long long mult[] = {
		1ULL << 10, 1ULL << 20, 1ULL << 30, 1ULL << 40,
	};

	return rec_num_unit(s, "kmgt", mult, v);
}

/* --max-age: seconds, or s, m, h, d; into ns. */
static int rec_age_arg(const char *s, unsigned long long *ns)
{
	static const unsigned long long mult[] = { 1, 60, 3600, 86400 };
	unsigned long long sec;

	if (rec_num_unit(s, "smhd", mult, &sec) || sec > 100ULL * 365 * 86400)
		return -1;
	*ns = sec * 1000000000ULL;
	return 0;
}

/* "1.5 MiB": @bytes for a person, into @buf. */
static const char *rec_bytes_str(char *buf, size_t len, unsigned long long bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = bytes;
	int i = -1;

	/* 1023.96 KiB would print as 1024.0 KiB. */
	while (v >= 1023.95 && i < 3) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu B", bytes);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

static void rec_keep_report_line(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "deter: record: %s\n", msg);
}

static uint64_t rec_realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int rec_control(const char *cmd, const char *msg)
{
	FILE *f = fopen(REC_CONTROL, "w");

	if (!f) {
		if (errno == ENOENT)
			return rec_fail(cmd, "deter.ko is not loaded (%s missing): insmod deter.ko",
					REC_CONTROL);
		if (errno == EACCES || errno == EPERM)
			return rec_fail(cmd, "%s: needs CAP_NET_ADMIN (run as root)", REC_CONTROL);
		return rec_fail(cmd, "%s: %s", REC_CONTROL, strerror(errno));
	}
	if (fputs(msg, f) < 0 || fclose(f)) {
		if (errno == EPERM)
			return rec_fail(cmd, "%s: needs CAP_NET_ADMIN (run as root)", REC_CONTROL);
		return rec_fail(cmd, "%s: '%s': %s", REC_CONTROL, msg, strerror(errno));
	}
	return 0;
}

/*
 * The congestion-control module parameters deter.ko logs (enum
 * deter_sysctl from DETER_SYSCTL_CUBIC_FAST_CONVERGENCE on), as last
 * handed to it.
 */
struct rec_params {
	long long v[DETER_PARAMS];
	unsigned char have[DETER_PARAMS];
	unsigned char warned[DETER_PARAMS];	/* said it could not read it */
};

/*
 * Read the parameters from sysfs and hand deter.ko those that changed
 * since @rp (all, the first time). A module not loaded has none yet:
 * skipped until it is. Return: 0, or -1 (said) if deter.ko refused one.
 */
static int rec_params_push(struct rec_params *rp)
{
	char path[128], msg[64], text[32];
	unsigned int i;
	long long v;
	FILE *f;
	int ok;

	for (i = 0; i < DETER_PARAMS; i++) {
		const struct rec_sysctl *sc = &rec_sysctls[DETER_PARAM_FIRST + i];

		rec_sysctl_path(sc, path, sizeof(path));
		f = fopen(path, "r");
		if (!f)
			continue;
		ok = fgets(text, sizeof(text), f) && !rec_param_parse(text, &v);
		fclose(f);
		if (!ok && !rp->warned[i]) {
			/* Never silently: the logs would say "default". */
			fprintf(stderr, "deter: record: %s: not a number, Y or N; logged as %s\n",
				path, rp->have[i] ? "last read" : "the default");
			rp->warned[i] = 1;
		}
		if (!ok || (rp->have[i] && rp->v[i] == v))
			continue;
		snprintf(msg, sizeof(msg), "param %u %lld", DETER_PARAM_FIRST + i, v);
		if (rec_control("record", msg))
			return -1;
		rp->v[i] = v;
		rp->have[i] = 1;
	}
	return 0;
}

/* deter.ko's count @name in REC_STATS, or 0 if it has none. */
static unsigned long long rec_stat(const char *name)
{
	unsigned long long v = 0, x;
	char key[64];
	FILE *f = fopen(REC_STATS, "r");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", key, &x) == 2)
		if (!strcmp(key, name))
			v = x;
	fclose(f);
	return v;
}

/*
 * Unblock the stop signals again; ones that arrived after the first are
 * consumed first, as they were ignored while recording wound down.
 */
static void rec_unblock_stop(const sigset_t *stop, const sigset_t *old)
{
	struct timespec zero = { 0, 0 };

	while (sigtimedwait(stop, NULL, &zero) > 0)
		continue;
	sigprocmask(SIG_SETMASK, old, NULL);
}

void rec_usage_record(FILE *f)
{
	fprintf(f,
		"usage: deter record [-o DIR] [--port P]... [--threshold-us N] [--duration S]\n"
		"                    [--max-size SIZE] [--max-age AGE]\n"
		"\n"
		"Record every TCP connection that starts from now on (or only those on\n"
		"port P) into per-connection logs in DIR (default ./%s), until SIGINT,\n"
		"SIGTERM or S seconds. Needs deter.ko loaded and CAP_NET_ADMIN.\n"
		"A connection's events are written as they come, to a hidden part\n"
		"file beside its log; those a killed recorder left in DIR become\n"
		"logs, marked incomplete, when deter record starts there again.\n"
		"\n"
		"  -o, --output DIR     log directory (created, mode 0700)\n"
		"  -p, --port P         record connections with local or remote port P (repeatable)\n"
		"  -t, --threshold-us N send-time sampling error bound, us (default 5)\n"
		"  -D, --duration S     stop after S seconds\n"
		"  -b, --buffer-kb N    ring buffer per CPU, KiB (default %d)\n"
		"  -z, --zstd-level N   log compression, 1 (least CPU) to 19 (smallest logs;\n"
		"                       default: about level 3's CPU, level 4's size)\n"
		"  -s, --max-size SIZE  keep DIR's logs within SIZE bytes on disk (K, M, G, T:\n"
		"                       KiB...), removing the oldest; flagged ones (deter ls\n"
		"                       --flagged) only once no unflagged one is left\n"
		"  -a, --max-age AGE    remove logs of connections that ended more than AGE\n"
		"                       ago (seconds, or s, m, h, d), flagged ones too\n"
		"\n"
		"With --max-size or --max-age, every log in DIR counts and may be removed,\n"
		"whoever wrote it, from the start; part files of open connections do not.\n"
		"Both ends of a connection recorded into DIR go together.\n",
		REC_DEFAULT_DIR, REC_BUFFER_KB);
}

/*
 * The part files a killed recorder left in @dir (.ID.dlog.part), made
 * logs of what it had written of their connections, and indexed.
 */
static void rec_recover_parts(const char *dir)
{
	struct deter_log_header h;
	char *part, *path, *err = NULL;
	unsigned int n = 0, bad = 0;
	struct dirent *d;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return;
	while ((d = readdir(dp))) {
		if (!rec_log_is_part(d->d_name))
			continue;
		if (asprintf(&part, "%s/%s", dir, d->d_name) < 0)
			break;
		if (rec_log_recover(part, &path, &h, &err) ||
		    (path && rec_index_add(path, &h, &err))) {
			rec_fail("record", "%s", err);
			free(err);
			err = NULL;
			bad++;
		}
		n += !!path;
		free(path);
		free(part);
	}
	closedir(dp);
	if (n || bad)
		fprintf(stderr, "deter: record: %u log%s of connections open %s%s\n",
			n, n == 1 ? "" : "s",
			"when a recorder was killed made from their part files (incomplete, not closed)",
			bad ? "; the ones named above left as they were" : "");
}

int rec_cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "port", required_argument, NULL, 'p' },
		{ "threshold-us", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'D' },
		{ "buffer-kb", required_argument, NULL, 'b' },
		{ "zstd-level", required_argument, NULL, 'z' },
		{ "max-size", required_argument, NULL, 's' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_keep_limits lim = { 0 };
	const char *size_arg = NULL, *age_arg = NULL, *no_mmap;
	struct rec_keep *keep = NULL;
	unsigned long long v, th_us = DETER_SAMPLE_THRESHOLD_NS / 1000;
	unsigned long long duration = 0, buffer_kb = REC_BUFFER_KB;
	unsigned int written, incomplete, open, unwritten, nports = 0;
	const char *dir = REC_DEFAULT_DIR;
	char ctl[256], host[64] = "localhost", *err = NULL, why[160];
	unsigned short ports[16];
	struct rec_table *table = NULL;
	struct rec_trace *trace = NULL;
	struct timespec tick = { 0, 100 * 1000 * 1000 }, start, now;
	struct rec_params params = { 0 };
	time_t params_at;
	sigset_t stop, old;
	unsigned long long lost, not_ipv4 = 0;
	int c, ret = 1, len, blocked = 0, failed = 0;
	unsigned int i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:p:t:D:b:z:s:a:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case 'p':
			if (rec_num(optarg, 65535, &v) || !v)
				return rec_usage_err("record", "--port: '%s' is not a port",
						     optarg);
			if (nports == 16)
				return rec_usage_err("record", "at most 16 --port options");
			ports[nports++] = v;
			break;
		case 't':
			if (rec_num(optarg, 1000000, &th_us))
				return rec_usage_err("record",
						     "--threshold-us: '%s' is not a number of microseconds",
						     optarg);
			break;
		case 'D':
			if (rec_num(optarg, 86400 * 365, &duration) || !duration)
				return rec_usage_err("record",
						     "--duration: '%s' is not a number of seconds",
						     optarg);
			break;
		case 'b':
			if (rec_num(optarg, 1 << 22, &buffer_kb) || buffer_kb < 64)
				return rec_usage_err("record",
						     "--buffer-kb: '%s' is not a size from 64 to 4194304",
						     optarg);
			break;
		case 'z':
			if (rec_zstd_level("record", optarg, &rec_log_zstd_level))
				return 2;
			break;
		case 's':
			if (rec_size_arg(optarg, &v))
				return rec_usage_err("record",
						     "--max-size: '%s' is not a size (bytes, or a number and K, M, G or T)",
						     optarg);
			lim.max_bytes = v;
			size_arg = optarg;
			break;
		case 'a':
			if (rec_age_arg(optarg, &v))
				return rec_usage_err("record",
						     "--max-age: '%s' is not an age (seconds, or a number and s, m, h or d)",
						     optarg);
			lim.max_age_ns = v;
			age_arg = optarg;
			break;
		case 'h':
			rec_usage_record(stdout);
			return 0;
		default:
			return rec_usage_err("record", "bad option");
		}
	}
	if (optind != argc)
		return rec_usage_err("record", "unexpected argument '%s'", argv[optind]);
	if (rec_env_size("DETER_RECORD_CHUNK_EVENTS", &rec_conn_chunk_events) ||
	    rec_env_size("DETER_RECORD_CHUNK_BYTES", &rec_log_chunk_bytes) ||
	    rec_env_size("DETER_RECORD_SPILL_BYTES", &rec_log_spill_bytes) ||
	    rec_env_size("DETER_RECORD_LOG_EVENTS", &rec_log_max_events) ||
	    rec_env_size("DETER_RECORD_PRUNE_MIN", &rec_keep_prune_min))
		return 2;
	/* The tests' knob: read() the ring buffers rather than map them. */
	no_mmap = getenv("DETER_RECORD_NO_MMAP");
	if (no_mmap && *no_mmap && strcmp(no_mmap, "0"))
		rec_trace_mmap = 0;

	if (access(REC_CONTROL, F_OK))
		return rec_fail("record", "deter.ko is not loaded (%s missing): insmod deter.ko",
				REC_CONTROL);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return rec_fail("record", "%s: %s", dir, strerror(errno));
	rec_recover_parts(dir);
	gethostname(host, sizeof(host) - 1);
	table = rec_table_new(dir, host);
	if (!table)
		return rec_fail("record", "out of memory");
	trace = rec_trace_open(buffer_kb, &err);
	if (!trace) {
		rec_fail("record", "%s", err ? err : "cannot open tracefs");
		goto out;
	}
	/* Only the recorder that holds the lock (rec_trace_open()) removes. */
	if (lim.max_bytes || lim.max_age_ns) {
		keep = rec_keep_open(dir, &lim, rec_keep_report_line, NULL, &err);
		if (!keep) {
			rec_fail("record", "%s", err);
			goto out;
		}
		rec_table_keep(table, keep);
		rec_keep_run(keep, rec_realtime_ns());
	}
	/* Before arming: a connection's first events log them. */
	if (rec_params_push(&params))
		goto out;
	len = snprintf(ctl, sizeof(ctl), "record %llu", th_us * 1000);
	for (i = 0; i < nports; i++)
		len += snprintf(ctl + len, sizeof(ctl) - len, " %u", ports[i]);
	not_ipv4 = rec_stat("connections_not_ipv4");
	if (rec_control("record", ctl))
		goto out;
	/* SIGINT and SIGTERM stop recording: wait for them as the poll tick. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	blocked = 1;
	fprintf(stderr, "deter: recording into %s (threshold %llu us%s); stop with Ctrl-C\n",
		dir, th_us, nports ? ", selected ports" : "");
	clock_gettime(CLOCK_MONOTONIC, &start);
	params_at = start.tv_sec;

	while (sigtimedwait(&stop, NULL, &tick) < 0) {
		if (rec_trace_poll(trace, table, &err)) {
			rec_fail("record", "%s", err);
			free(err);
			err = NULL;
			failed = 1;
			break;
		}
		rec_table_flush(table, 0, 0);
		if (keep)
			rec_keep_run(keep, rec_realtime_ns());
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* Module parameters: once a second. */
		if (now.tv_sec != params_at) {
			params_at = now.tv_sec;
			if (rec_params_push(&params)) {
				failed = 1;
				break;
			}
		}
		if (duration && (unsigned long long)(now.tv_sec - start.tv_sec) >= duration)
			break;
	}
	rec_control("record", "stop");
	if (rec_trace_poll(trace, table, &err)) {
		rec_fail("record", "%s", err);
		goto out;
	}
	lost = rec_trace_lost(trace);
	rec_table_flush(table, 1, lost > 0);
	rec_table_counts(table, &written, &incomplete, &open);
	unwritten = rec_table_unwritten(table);
	fprintf(stderr,
		"deter: %u connection%s recorded in %s, %u incomplete%s%s; %llu events read, %llu lost\n",
		written, written == 1 ? "" : "s", dir, incomplete,
		rec_table_incomplete_why(table, why, sizeof(why)),
		unwritten ? ", some not written (said above)" : "",
		rec_trace_events(trace), lost);
	if (rec_table_settings_changed(table))
		fprintf(stderr,
			"deter: %u log%s say%s a setting TCP reads changed during the connection (deter ls: settings-changed)\n",
			rec_table_settings_changed(table),
			rec_table_settings_changed(table) == 1 ? "" : "s",
			rec_table_settings_changed(table) == 1 ? "s" : "");
	if (keep) {
		struct rec_keep_stats ks;
		char rb[32], kb[32];

		rec_keep_stop(keep, rec_realtime_ns());
		rec_keep_stats(keep, &ks);
		fprintf(stderr,
			"deter: %llu log%s removed (%s, %llu flagged) by%s%s%s%s%s; %s keeps %llu log%s, %s on disk\n",
			(unsigned long long)ks.removed, ks.removed == 1 ? "" : "s",
			rec_bytes_str(rb, sizeof(rb), ks.removed_bytes),
			(unsigned long long)ks.removed_flagged,
			size_arg ? " --max-size " : "", size_arg ? size_arg : "",
			size_arg && age_arg ? " and" : "",
			age_arg ? " --max-age " : "", age_arg ? age_arg : "", dir,
			(unsigned long long)ks.logs, ks.logs == 1 ? "" : "s",
			rec_bytes_str(kb, sizeof(kb), ks.bytes));
	}
	not_ipv4 = rec_stat("connections_not_ipv4") - not_ipv4;
	if (not_ipv4)
		fprintf(stderr, "deter: %llu IPv6 connection%s not recorded (IPv4 only)\n",
			not_ipv4, not_ipv4 == 1 ? "" : "s");
	ret = lost || unwritten || failed ? 1 : 0;
out:
	if (blocked)
		rec_unblock_stop(&stop, &old);
	free(err);
	rec_trace_close(trace);
	rec_table_free(table);
	rec_keep_free(keep);
	rec_log_write_end();
	return ret;
}

static const char *const rec_value_names[DETER_V_MAX] = {
	[DETER_V_CLOCK] = "clock_ns",
	[DETER_V_JIFFIES] = "jiffies",
	[DETER_V_SYNACK_CLOCK] = "synack_clock_ns",
	[DETER_V_IP_ID] = "ip_id",
	[DETER_V_SYN_IPID] = "syn_ipid",
	[DETER_V_TSQ_FULL] = "tsq_full_after",
	[DETER_V_BACKLOG_LEN] = "backlog_after",
	[DETER_V_AUTOCORK] = "autocork_after",
	[DETER_V_HOST_QUEUED] = "host_queued_after",
	[DETER_V_PAGE_FRAG] = "page_frag_after",
	[DETER_V_CHILD_IPID] = "child_ipid",
	[DETER_V_MISSING] = "missing",
	[DETER_V_MEM] = "mem_after",
	[DETER_V_HOST_BUSY] = "host_busy_flips_after",
	[DETER_V_RANDOM] = "random",
	[DETER_V_HOST] = "host_after",
};

static void rec_addr(char *buf, size_t len, uint32_t addr, uint16_t port)
{
	struct in_addr in = { .s_addr = htonl(addr) };
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, port);
}

static void rec_time(char *buf, size_t len, uint64_t real_ns)
{
	time_t t = real_ns / 1000000000ULL;
	struct tm tm;

	gmtime_r(&t, &tm);
	len = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	(void)len;
}

/* A log or index rec_dir_scan() could not read: said, and counted. */
struct rec_scan_ctx {
	const char *cmd;
	int bad;
};

static void rec_scan_report_line(const char *msg, void *arg)
{
	struct rec_scan_ctx *sc = arg;

	fprintf(stderr, "deter: %s: %s\n", sc->cmd, msg);
	sc->bad = 1;
}

/* Every log in @dir, oldest first; the unreadable ones reported in *bad. */
static int rec_scan_flags(const char *cmd, const char *dir, int flags,
			  struct rec_entry **out, size_t *n, int *bad)
{
	struct rec_scan_ctx sc = { .cmd = cmd };
	char *err = NULL;
	int r;

	r = rec_dir_scan(dir, flags, out, n, rec_scan_report_line, &sc, &err);
	if (r) {
		rec_fail(cmd, "%s", err);
		free(err);
		return -1;
	}
	*bad = sc.bad;
	return 0;
}

static int rec_scan(const char *cmd, const char *dir, struct rec_entry **out,
		    size_t *n, int *bad)
{
	return rec_scan_flags(cmd, dir, 0, out, n, bad);
}

void rec_usage_ls(FILE *f)
{
	fprintf(f,
		"usage: deter ls [-d DIR] [--json] [--flagged] [--incomplete] [--open] [--port P]\n"
		"\n"
		"List recorded connections, one per line, oldest first.\n"
		"\n"
		"  -d, --dir DIR    log directory (default ./%s)\n"
		"  -j, --json       one JSON object per line\n"
		"  -f, --flagged    only connections with retransmissions, RTOs, drops,\n"
		"                   CE marks, zero windows, an incomplete log, or settings\n"
		"                   TCP reads changed during it (settings-changed)\n"
		"  -i, --incomplete only incomplete logs\n"
		"  -o, --open       also connections being recorded: what deter record\n"
		"                   has written of them so far (status \"open\")\n"
		"  -p, --port P     only connections with local or remote port P\n",
		REC_DEFAULT_DIR);
}

int rec_cmd_ls(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "flagged", no_argument, NULL, 'f' },
		{ "incomplete", no_argument, NULL, 'i' },
		{ "open", no_argument, NULL, 'o' },
		{ "port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR;
	int json = 0, flagged = 0, incomplete = 0, open = 0, bad, c;
	unsigned long long port = 0;
	char src[32], dst[32], start[32], st[96];
	struct rec_entry *e;
	size_t n, i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:jfiop:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'f':
			flagged = 1;
			break;
		case 'i':
			incomplete = 1;
			break;
		case 'o':
			open = 1;
			break;
		case 'p':
			if (rec_num(optarg, 65535, &port) || !port)
				return rec_usage_err("ls", "--port: '%s' is not a port", optarg);
			break;
		case 'h':
			rec_usage_ls(stdout);
			return 0;
		default:
			return rec_usage_err("ls", "bad option");
		}
	}
	if (optind != argc)
		return rec_usage_err("ls", "unexpected argument '%s'", argv[optind]);
	if (rec_scan_flags("ls", dir, open ? REC_SCAN_PARTS : 0, &e, &n, &bad))
		return 1;
	if (!json)
		printf("%-16s  %-21s  %-21s  %-19s  %9s  %10s  %10s  %7s  %3s  %5s  %3s  %4s  %s\n",
		       "ID", "LOCAL", "REMOTE", "START (UTC)", "DUR_MS", "TX_BYTES",
		       "RX_BYTES", "RETRANS", "RTO", "DROPS", "CE", "ZWND", "STATUS");
	for (i = 0; i < n; i++) {
		const struct deter_log_header *h = &e[i].h;

		if (incomplete && !(h->status & DETER_LOG_INCOMPLETE))
			continue;
		if (flagged && !rec_log_flagged(h))
			continue;
		if (port && h->sport != port && h->dport != port)
			continue;
		rec_addr(src, sizeof(src), h->saddr, h->sport);
		rec_addr(dst, sizeof(dst), h->daddr, h->dport);
		rec_time(start, sizeof(start), h->real_ns);
		rec_log_status_str(h->status, st, sizeof(st));
		if (rec_log_is_part(e[i].path))
			snprintf(st, sizeof(st), "open");
		if (json) {
			printf("{\"id\":\"%016llx\",\"local\":\"%s\",\"remote\":\"%s\",",
			       (unsigned long long)h->conn, src, dst);
			printf("\"start_ns\":%llu,\"duration_ns\":%llu,",
			       (unsigned long long)h->real_ns, (unsigned long long)h->duration_ns);
			printf("\"bytes_sent\":%llu,\"bytes_received\":%llu,",
			       (unsigned long long)h->bytes_acked,
			       (unsigned long long)h->bytes_received);
			printf("\"retransmissions\":%u,\"rtos\":%u,\"drops\":%u,\"reorders\":%u,",
			       h->total_retrans, h->total_rto, h->drops, h->reorders);
			printf("\"ce_marks\":%u,\"zero_windows\":%u,",
			       h->ce_marks, h->zero_wnd);
			printf("\"incomplete\":%s,\"status\":\"%s\",",
			       h->status & DETER_LOG_INCOMPLETE ? "true" : "false", st);
			printf("\"host\":\"%s\",\"cc\":\"%s\",\"file\":\"%s\"}\n",
			       h->host, h->cc, e[i].path);
		} else {
			printf("%016llx  %-21s  %-21s  %-19s  %9.3f  ",
			       (unsigned long long)h->conn, src, dst, start,
			       h->duration_ns / 1e6);
			printf("%10llu  %10llu  %7u  %3u  %5u  %3u  %4u  %s\n",
			       (unsigned long long)h->bytes_acked,
			       (unsigned long long)h->bytes_received, h->total_retrans,
			       h->total_rto, h->drops, h->ce_marks, h->zero_wnd, st);
		}
	}
	rec_entries_free(e, n);
	return bad;
}

void rec_usage_show(FILE *f)
{
	fprintf(f,
		"usage: deter show [-d DIR] [--json | --stats] ID|FILE\n"
		"\n"
		"Print one connection's log as a list of events. ID is the hex id\n"
		"deter ls prints, or a unique prefix of it.\n"
		"\n"
		"  -d, --dir DIR  log directory (default ./%s)\n"
		"  -j, --json     one JSON object per event\n"
		"  -s, --stats    where the log's bytes go: records, events and\n"
		"                 encoded bytes (before compression) per event kind\n",
		REC_DEFAULT_DIR);
}

static const char *const rec_lock_names[DETER_LOCK_MAX] = {
	"app", "write-timer", "delack-timer", "keepalive-timer",
	"comp-ack-timer", "tsq", "backlog", "mtu-reduced",
};

static const char *const rec_net_names[DETER_NET_MAX] = {
	"gap", "late", "ce", "icmp",
};

/* What the metrics cache gave, VALUE HOST from DETER_HOST_CACHED_CWND_CLAMP. */
static const char *const rec_cached_names[DETER_HOST_MAX - DETER_HOST_CACHED_CWND_CLAMP] = {
	"cwnd clamp", "ssthresh", "reordering", "rtt",
};

static const char *const rec_mem_names[DETER_MEM_MAX] = {
	"pressure", "above_tcp_mem0", "suppressed", "oom",
};

static const char *const rec_cfg_names[DETER_CFG_MAX] = {
	"sndbuf", "rcvbuf", "nodelay", "user_mss", "offload",
	"userlocks", "sysctl", "tos", "ttl", "keepalive", "user_timeout_ms",
	"notsent_lowat", "rcvlowat", "linger", "congestion", "tcp",
};

/* What the metrics cache gave (VALUE HOST b); the RTT as srtt_us scales it. */
static void rec_show_cached(uint64_t b, int json)
{
	unsigned int kind = (b >> 32) - DETER_HOST_CACHED_CWND_CLAMP;
	uint32_t v = b;

	printf(json ? ",\"answer\":\"cached %s\",\"value\":%u" : ": cached %s %u",
	       rec_cached_names[kind], v);
	if (b >> 32 == DETER_HOST_CACHED_RTT)
		printf(json ? ",\"rtt_us\":%u" : " (%u us)", v >> 3);
}

/* A VALUE MISSING SETTINGS @e: what changed (its names and values are plain). */
static void rec_show_settings(const struct rec_log *log, const struct rec_ev *e, int json)
{
	char what[1024];

	rec_settings_changed(log, e - log->evs, what, sizeof(what));
	if (json)
		printf(",\"why\":\"settings\",\"changed\":\"%s\"", what);
	else
		printf(" (%s: %s)", rec_missing_what(e->a), what[0] ? what : "none now");
}

/*
 * One event of @log; @connecting: no call came before it, so a signal
 * ended connect() (which is not a logged call).
 */
static void rec_show_event(const struct rec_log *log, const struct rec_ev *e,
			   int connecting, int json)
{
	const struct rec_state *s;

	if (json)
		printf("{\"seq\":%u,", e->seq);
	else
		printf("%8u  ", e->seq);
	switch (e->type) {
	case DETER_EV_LOCK:
		if (e->sub == DETER_LOCK_BACKLOG) {
			printf(json ? "\"event\":\"lock\",\"by\":\"%s\",\"check\":%llu}\n" :
				      "lock       %s (at the owner's check %llu)\n",
			       rec_lock_names[e->sub], (unsigned long long)e->a);
			break;
		}
		printf(json ? "\"event\":\"lock\",\"by\":\"%s\",\"deferred\":%s,\"not_due\":%s}\n" :
			      "lock       %s%s%s\n",
		       rec_lock_names[e->sub],
		       json ? (e->a & DETER_LOCK_F_DEFERRED ? "true" : "false") :
			      (e->a & DETER_LOCK_F_DEFERRED ? " (deferred, the owner ran it)" : ""),
		       json ? (e->a & DETER_LOCK_F_NOT_DUE ? "true" : "false") :
			      (e->a & DETER_LOCK_F_NOT_DUE ? " (not due: re-armed)" : ""));
		break;
	case DETER_EV_RX:
		if (json) {
			printf("\"event\":\"rx\",\"index\":%llu,\"segs\":%llu,\"ecn\":%llu,",
			       (unsigned long long)e->a,
			       (unsigned long long)(e->b & DETER_RX_CTL ? 0 : e->c),
			       (unsigned long long)(e->b & DETER_RX_ECN_MASK));
			printf("\"backlogged\":%s,\"syn\":%s,\"time_wait\":%s",
			       e->b & DETER_RX_OWNED ? "true" : "false",
			       e->b & DETER_RX_SYN ? "true" : "false",
			       e->b & DETER_RX_CTL ? "true" : "false");
			if ((e->b & DETER_RX_CTL) && e->c)
				printf(",\"tsval\":%llu", (unsigned long long)e->c - 1);
			printf("}\n");
		} else if (e->b & DETER_RX_CTL) {
			printf("rx         ipid 0 from the peer's ");
			if (e->c)
				printf("time-wait socket, TS value %llu",
				       (unsigned long long)e->c - 1);
			else
				printf("control socket, no TS");
			printf("%s\n", e->b & DETER_RX_OWNED ? " backlogged" : "");
		} else if (e->b & DETER_RX_SYN) {
			printf("rx         SYN%s\n", e->b & DETER_RX_OWNED ? " backlogged" : "");
		} else {
			printf("rx         ipid %llu x%llu ecn %llu%s\n",
			       (unsigned long long)(e->a & 0xffff), (unsigned long long)e->c,
			       (unsigned long long)(e->b & DETER_RX_ECN_MASK),
			       e->b & DETER_RX_OWNED ? " backlogged" : "");
		}
		break;
	case DETER_EV_NET:
		if (e->sub == DETER_NET_ICMP) {
			printf(json ? "\"event\":\"net\",\"action\":\"icmp\"," : "net        icmp");
			printf(json ? "\"type\":%llu,\"code\":%llu," : " type %llu code %llu",
			       (unsigned long long)(e->a >> 8 & 0xff),
			       (unsigned long long)(e->a & 0xff));
			printf(json ? "\"info\":%llu,\"quoted_seq\":%llu,\"owned\":%s}\n" :
				      " info %llu, quoting snd_una + %llu%s\n",
			       (unsigned long long)(e->b >> 32),
			       (unsigned long long)(e->b & 0xffffffff),
			       json ? (e->a & DETER_ICMP_F_OWNED ? "true" : "false") :
				      (e->a & DETER_ICMP_F_OWNED ? " (socket owned)" : ""));
			break;
		}
		printf(json ?
		       "\"event\":\"net\",\"action\":\"%s\",\"index\":%llu,\"count\":%llu}\n" :
		       "net        %s ipid %llu count %llu\n",
		       rec_net_names[e->sub], (unsigned long long)(json ? e->a : e->a & 0xffff),
		       (unsigned long long)e->b);
		break;
	case DETER_EV_CALL:
		if (e->sub == DETER_ABI_CALL_SETSOCKOPT) {
			printf(json ? "\"event\":\"call\",\"call\":\"setsockopt\"," :
				      "call       setsockopt");
			printf(json ? "\"option\":\"%s\"," : " %s",
			       rec_setsockopt_name(e->b >> 32) ?: "?");
			printf(json ? "\"value\":%lld,\"tid\":%llu}\n" : " = %lld tid %llu\n",
			       (long long)(int32_t)e->a, (unsigned long long)(e->b & 0xffffffff));
			break;
		}
		printf(json ? "\"event\":\"call\",\"call\":\"%s\",\"bytes\":%llu," :
			      "call       %s bytes %llu",
		       rec_call_names[e->sub], (unsigned long long)e->a);
		if (e->sub == DETER_ABI_CALL_SPLICE_READ) {
			/* Its pipe's room and socket mode (format 14). */
			uint32_t f = e->b >> 32;

			printf(json ? "\"flags\":%u," : " flags 0x%x", f & DETER_SPLICE_RD_FLAGS);
			if (DETER_SPLICE_RD_ROOM(f))
				printf(json ? "\"pipe_room\":%u," : ", pipe room %u",
				       DETER_SPLICE_RD_ROOM(f));
			if (f & DETER_SPLICE_RD_NONBLOCK)
				printf(json ? "\"nonblocking\":true," : ", nonblocking");
		} else {
			printf(json ? "\"flags\":%llu," : " flags 0x%llx",
			       (unsigned long long)(e->b >> 32));
		}
		if (e->sub != DETER_ABI_CALL_SPLICE_READ && (e->b >> 32) & DETER_MSG_SPLICE_PAGES)
			printf(json ? "\"spliced\":true," : " (spliced)");
		printf(json ? "\"tid\":%llu}\n" : " tid %llu\n",
		       (unsigned long long)(e->b & 0xffffffff));
		break;
	case DETER_EV_CALL_DONE:
		printf(json ? "\"event\":\"return\",\"call\":\"%s\",\"ret\":%lld" :
			      "return     %s = %lld",
		       rec_call_names[e->sub], (long long)e->a);
		/* A spliced send's pages (format 12). */
		if (e->b & DETER_SPLICE_OTHER)
			printf(json ? ",\"pages\":\"other\"" : ", pages not a file's");
		else if (e->b & DETER_SPLICE_KNOWN)
			printf(json ? ",\"page_offset\":%llu,\"pages_follow_on\":%s" :
				      ", pages from offset %llu%s",
			       (unsigned long long)(e->b & DETER_SPLICE_OFF),
			       json ? (e->b & DETER_SPLICE_CONT ? "true" : "false") :
			       (e->b & DETER_SPLICE_CONT ? ", on from the last" : ""));
		/* What it put on the error queue (format 13). */
		if (e->b & DETER_SEND_ZEROCOPY)
			printf(json ? ",\"zerocopy\":true" : ", zerocopy");
		if (e->b & DETER_SEND_TXSTAMP)
			printf(json ? ",\"tx_timestamps\":true" : ", transmit timestamps");
		printf(json ? "}\n" : "\n");
		break;
	case DETER_EV_SAMPLE:
		if (json) {
			printf("\"event\":\"sample\",\"index\":%llu,\"mono_ns\":%llu,",
			       (unsigned long long)e->a, (unsigned long long)e->b);
			printf("\"gap_ns\":%.3f}\n", e->c / 1024.0);
		} else {
			printf("sample     ipid %llu sent at +%.6f ms, then one every %.3f us\n",
			       (unsigned long long)(e->a & 0xffff),
			       (double)(int64_t)(e->b - log->hdr.mono_ns) / 1e6,
			       e->c / 1024.0 / 1000);
		}
		break;
	case DETER_EV_CONFIG:
		if (e->sub == DETER_CFG_SYSCTL) {
			const struct rec_sysctl *sc = &rec_sysctls[e->a >> 32];
			char elem[16] = "";

			if (sc->elem >= 0)
				snprintf(elem, sizeof(elem), "[%d]", sc->elem);
			if (json)
				printf("\"event\":\"config\",\"field\":\"sysctl\",\"name\":");
			printf(json ? "\"%s.%s%s\",\"value\":%lld}\n" :
				      "config     sysctl %s.%s%s = %lld\n",
			       rec_sysctl_dir(sc), sc->name, elem, rec_sysctl_value(e->a));
			break;
		}
		if (e->sub == DETER_CFG_CC) {
			char cc[DETER_CC_BYTES + 1];

			rec_cc_name(e->a, cc);
			if (json)
				printf("\"event\":\"config\",\"field\":\"congestion\",");
			printf(json ? "\"value\":\"%s\"}\n" : "config     congestion = %s\n", cc);
			break;
		}
		if (e->sub == DETER_CFG_TCP) {
			const char *name = rec_tcpopts[DETER_TCPOPT_ID(e->a)];
			long long v = rec_tcpopt_value(e->a);

			int none = (DETER_TCPOPT_ID(e->a) == DETER_TCPOPT_MAX_PACING_RATE &&
				    (uint64_t)v == UINT64_MAX) ||
				   ((DETER_TCPOPT_ID(e->a) == DETER_TCPOPT_RCVTIMEO ||
				     DETER_TCPOPT_ID(e->a) == DETER_TCPOPT_SNDTIMEO) && v < 0);

			if (json && none)
				printf("\"event\":\"config\",\"field\":\"%s\",\"value\":null}\n",
				       name);
			else if (json)
				printf("\"event\":\"config\",\"field\":\"%s\",\"value\":%lld}\n",
				       name, v);
			else if (none)
				printf("config     %s = none\n", name);
			else
				printf("config     %s = %lld\n", name, v);
			break;
		}
		if (e->sub == DETER_CFG_OFFLOAD && !json) {
			printf("config     offload tso %s gso %s gro %s",
			       e->a & DETER_OFFLOAD_TSO ? "on" : "off",
			       e->a & DETER_OFFLOAD_GSO ? "on" : "off",
			       e->a & DETER_OFFLOAD_GRO ? "on" : "off");
			if (DETER_OFFLOAD_MTU(e->a))
				printf(", mtu %u", DETER_OFFLOAD_MTU(e->a));
			printf("\n");
			break;
		}
		if (e->sub == DETER_CFG_KEEPALIVE && !json) {
			printf("config     keepalive %s idle %u s intvl %u s cnt %u%s\n",
			       e->a & DETER_KA_ON ? "on" : "off", DETER_KA_IDLE(e->a),
			       DETER_KA_INTVL(e->a), DETER_KA_CNT(e->a),
			       !DETER_KA_IDLE(e->a) || !DETER_KA_INTVL(e->a) ||
			       !DETER_KA_CNT(e->a) ? " (0: the sysctl's)" : "");
			break;
		}
		if (e->sub == DETER_CFG_LINGER && !json) {
			printf("config     linger %s %llu s\n", e->a & 1 ? "on" : "off",
			       (unsigned long long)(e->a >> 1));
			break;
		}
		printf(json ? "\"event\":\"config\",\"field\":\"%s\",\"value\":%llu}\n" :
		       e->sub == DETER_CFG_TOS ? "config     %s = 0x%llx\n" :
			      "config     %s = %llu\n",
		       rec_cfg_names[e->sub], (unsigned long long)e->a);
		break;
	case DETER_EV_VALUE:
		if (json)
			printf("\"event\":\"value\",\"what\":\"%s\",\"value\":%llu",
			       rec_value_names[e->sub], (unsigned long long)e->a);
		else
			printf("value      %s %s%llu", rec_value_names[e->sub],
			       e->sub == DETER_V_CLOCK || e->sub == DETER_V_JIFFIES ? "+" : "",
			       (unsigned long long)e->a);
		if (e->sub == DETER_V_BACKLOG_LEN)
			printf(json ? ",\"bytes\":%llu" : ": %llu B",
			       (unsigned long long)e->b);
		else if (e->sub == DETER_V_MEM)
			printf(json ? ",\"decision\":\"%s\",\"now\":%llu" : ": %s now %llu",
			       rec_mem_names[(e->b >> 1) % DETER_MEM_MAX],
			       (unsigned long long)(e->b & 1));
		else if (e->sub == DETER_V_HOST && e->b >> 32 == DETER_HOST_XMIT)
			printf(json ? ",\"answer\":\"output refused\",\"result\":%d" :
				      ": output refused %d%s", (int)(uint32_t)e->b,
			       json ? "" : (uint32_t)e->b == 1 ? " (NET_XMIT_DROP)" :
			       (uint32_t)e->b == 2 ? " (NET_XMIT_CN)" : "");
		else if (e->sub == DETER_V_HOST && e->b >> 32 == DETER_HOST_NOSPACE)
			printf(json ? ",\"answer\":\"send buffer full\",\"now\":%u" :
				      ": send buffer marked full now %u", (unsigned int)(e->b & 1));
		else if (e->sub == DETER_V_HOST && e->b >> 32 >= DETER_HOST_CACHED_CWND_CLAMP)
			rec_show_cached(e->b, json);
		else if (e->sub == DETER_V_HOST && e->b >> 32 == DETER_HOST_SIGNAL)
			printf(json ? ",\"answer\":\"signal\"%s" : ": a signal ends the call%s",
			       !connecting ? "" : json ? ",\"call\":\"connect\"" : " (connect())");
		else if (e->sub == DETER_V_HOST)
			printf(json ? ",\"answer\":\"wait timed out\"" : ": wait timed out");
		else if (e->sub == DETER_V_MISSING && json && e->a == DETER_MISSING_CALLS)
			printf(",\"why\":\"unseen calls\"");
		else if (e->sub == DETER_V_MISSING && json && e->a == DETER_MISSING_FASTOPEN)
			printf(",\"why\":\"fast open\"");
		else if (e->sub == DETER_V_MISSING && e->a == DETER_MISSING_SETTINGS)
			rec_show_settings(log, e, json);
		else if (e->sub == DETER_V_MISSING && !json && rec_missing_what(e->a))
			printf(" (%s)", rec_missing_what(e->a));
		else if (e->sub == DETER_V_CHILD_IPID)
			printf(json ? ",\"segs\":%llu" : " x%llu",
			       (unsigned long long)(e->b ? e->b : 1));
		else if (e->sub == DETER_V_PAGE_FRAG)
			printf(json ? ",\"offset\":%llu,\"page_bytes\":%llu" :
				      ": offset %llu of a %llu B page",
			       (unsigned long long)(e->b & 0xffff),
			       4096ULL << ((e->b >> 16) & 15));
		printf(json ? "}\n" : "\n");
		break;
	case DETER_EV_STATE:
		s = &log->states[e->a];
		printf(json ? "\"event\":\"%s\",\"snd_una\":%llu,\"snd_nxt\":%llu," :
			      "%-10s snd_una %llu snd_nxt %llu",
		       e->sub ? "summary" : "checkpoint",
		       (unsigned long long)s->v[DETER_ST_SND_UNA],
		       (unsigned long long)s->v[DETER_ST_SND_NXT]);
		printf(json ? "\"rcv_nxt\":%llu,\"cwnd\":%llu,\"ssthresh\":%llu," :
			      " rcv_nxt %llu cwnd %llu ssthresh %llu",
		       (unsigned long long)s->v[DETER_ST_RCV_NXT],
		       (unsigned long long)s->v[DETER_ST_CWND],
		       (unsigned long long)s->v[DETER_ST_SSTHRESH]);
		printf(json ? "\"packets_out\":%llu,\"retrans_out\":%llu}\n" :
			      " in_flight %llu retrans_out %llu\n",
		       (unsigned long long)s->v[DETER_ST_PACKETS_OUT],
		       (unsigned long long)s->v[DETER_ST_RETRANS_OUT]);
		break;
	}
}

static const char *const rec_type_names[16] = {
	[REC_LOG_RUN] = "run", [DETER_EV_LOCK] = "lock", [DETER_EV_RX] = "rx",
	[DETER_EV_NET] = "net", [DETER_EV_CALL] = "call",
	[DETER_EV_CALL_DONE] = "return", [DETER_EV_SAMPLE] = "sample",
	[DETER_EV_CONFIG] = "config", [DETER_EV_VALUE] = "value",
	[DETER_EV_STATE] = "state", [REC_LOG_SEQGAP] = "seqgap",
	[REC_LOG_CALLREF] = "callref",
};

/* A record tag's sub as a name, or "" when its kind has none. */
static const char *rec_sub_name(unsigned int type, unsigned int sub)
{
	switch (type) {
	case REC_LOG_RUN:
		return sub < 16 && rec_type_names[sub] ? rec_type_names[sub] : "?";
	case DETER_EV_LOCK:
		return sub < DETER_LOCK_MAX ? rec_lock_names[sub] : "?";
	case DETER_EV_NET:
		return sub < DETER_NET_MAX ? rec_net_names[sub] : "?";
	case DETER_EV_CALL:
	case DETER_EV_CALL_DONE:
	case REC_LOG_CALLREF:
		return sub < DETER_ABI_CALL_MAX ? rec_call_names[sub] : "?";
	case DETER_EV_CONFIG:
		return sub < DETER_CFG_MAX ? rec_cfg_names[sub] : "?";
	case DETER_EV_VALUE:
		return sub < DETER_V_MAX ? rec_value_names[sub] : "?";
	case DETER_EV_STATE:
		return sub ? "summary" : "checkpoint";
	case REC_LOG_SEQGAP:
		return "lost or skipped";
	}
	return "";
}

/* deter show --stats: where a log's bytes go, biggest first. */
static void rec_show_stats(const struct rec_log *log)
{
	const struct rec_log_stat *stat = &log->stat[0][0];	/* by tag */
	const struct deter_log_header *h = &log->hdr;
	uint64_t raw = h->body_raw_len ? h->body_raw_len : 1, records = 0;
	unsigned int i, j, t, n = 0, order[256];

	for (t = 0; t < 256; t++) {
		if (!stat[t].records)
			continue;
		records += stat[t].records;
		/* Insert, biggest first. */
		for (j = n++; j > 0 && stat[order[j - 1]].bytes < stat[t].bytes; j--)
			order[j] = order[j - 1];
		order[j] = t;
	}
	printf("file       %zu B: header %zu B, body %u B compressed from %u B (%.1f %%), ",
	       sizeof(*h) + h->body_len, sizeof(*h), h->body_len, h->body_raw_len,
	       100.0 * h->body_len / raw);
	printf("%u chunk%s\n", log->nchunks, log->nchunks == 1 ? "" : "s");
	printf("events     %zu in %llu records\n\n", log->nevs, (unsigned long long)records);
	printf("%-7s %-18s %8s %8s %9s %6s %7s\n", "kind", "", "records", "events",
	       "bytes", "share", "B/event");
	for (i = 0; i < n; i++) {
		const struct rec_log_stat *st = &stat[order[i]];
		const char *k = rec_type_names[order[i] >> 4];

		printf("%-7s %-18s %8u %8u %9llu %5.1f%% %7.2f\n", k ? k : "?",
		       rec_sub_name(order[i] >> 4, order[i] & 15), st->records, st->events,
		       (unsigned long long)st->bytes, 100.0 * st->bytes / raw,
		       st->events ? (double)st->bytes / st->events : 0);
	}
	if (log->stat_index)
		printf("%-7s %-18s %8u %8u %9u %5.1f%%       -\n", "index", "stream lengths", 0, 0,
		       log->stat_index, 100.0 * log->stat_index / raw);
}

/* Does @id name a file rather than a connection id (prefix)? */
static int rec_is_path(const char *id)
{
	return strchr(id, '/') || strstr(id, ".dlog");
}

/* The log of connection @id (a unique id prefix) among @n logs @e of @dir. */
static char *rec_find_in(const char *cmd, const char *dir,
			 const struct rec_entry *e, size_t n, const char *id)
{
	size_t i, hits = 0;
	char *path = NULL, want[32];

	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "%016llx", (unsigned long long)e[i].h.conn);
		if (!strncmp(want, id, strlen(id))) {
			hits++;
			free(path);
			path = strdup(e[i].path);
		}
	}
	if (hits == 1)
		return path;
	free(path);
	if (hits)
		rec_fail(cmd, "%s: ambiguous id prefix in %s (%zu matches)", id, dir, hits);
	else
		rec_fail(cmd, "%s: no such connection in %s", id, dir);
	return NULL;
}

/* The log @id names: a file, or a unique connection id prefix in @dir. */
static char *rec_find(const char *cmd, const char *dir, const char *id)
{
	struct rec_entry *e;
	char *path;
	size_t n;
	int bad;

	if (rec_is_path(id))
		return strdup(id);
	if (rec_scan(cmd, dir, &e, &n, &bad))
		return NULL;
	path = rec_find_in(cmd, dir, e, n, id);
	rec_entries_free(e, n);
	return path;
}

int rec_cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR;
	char src[32], dst[32], start[32], st[96], *path, *err = NULL;
	const struct deter_log_header *h;
	struct rec_log *log;
	int json = 0, stats = 0, c;
	size_t i;
	int connecting = 1;	/* no call yet: a signal ended connect() */

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:jsh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 's':
			stats = 1;
			break;
		case 'h':
			rec_usage_show(stdout);
			return 0;
		default:
			return rec_usage_err("show", "bad option");
		}
	}
	if (optind + 1 != argc)
		return rec_usage_err("show", optind == argc ? "no connection given" :
				     "more than one connection given");
	if (json && stats)
		return rec_usage_err("show", "--json and --stats do not go together");
	path = rec_find("show", dir, argv[optind]);
	if (!path)
		return 1;
	log = rec_log_read(path, &err);
	free(path);
	if (!log) {
		rec_fail("show", "%s", err ? err : "cannot read log");
		free(err);
		return 1;
	}
	h = &log->hdr;
	rec_addr(src, sizeof(src), h->saddr, h->sport);
	rec_addr(dst, sizeof(dst), h->daddr, h->dport);
	rec_time(start, sizeof(start), h->real_ns);
	rec_log_status_str(h->status, st, sizeof(st));
	if (!json) {
		printf("connection %016llx  %s -> %s  (%s, host %s, netns %u)\n",
		       (unsigned long long)h->conn, src, dst,
		       h->flags & DETER_CONN_ACTIVE ? "active open" : "passive open",
		       h->host, h->netns);
		printf("started    %s UTC, %.3f ms, %s, cc %s, mss %u, wscale %u/%u%s%s%s\n",
		       start, h->duration_ns / 1e6, st, h->cc, h->mss, h->wscale >> 4,
		       h->wscale & 0xf, h->flags & DETER_CONN_TS ? ", timestamps" : "",
		       h->flags & DETER_CONN_SACK ? ", sack" : "",
		       h->flags & DETER_CONN_ECN ? ", ecn" : "");
		printf("isn        local %u remote %u, next ip id %u, ts offset %u\n",
		       h->iss, h->irs, h->ipid, h->tsoffset);
		printf("totals     sent %llu B, received %llu B, %u retransmissions, %u RTOs, ",
		       (unsigned long long)h->bytes_acked, (unsigned long long)h->bytes_received,
		       h->total_retrans, h->total_rto);
		printf("%u drops, %u reorderings, %u CE, %u zero windows\n",
		       h->drops, h->reorders, h->ce_marks, h->zero_wnd);
		if (!stats)
			printf("events     %zu\n\n", log->nevs);
	}
	if (stats) {
		rec_show_stats(log);
		rec_log_free(log);
		return 0;
	}
	for (i = 0; i < log->nevs; i++) {
		/* The error queue's reads do not end it (replay_plan_connects()). */
		connecting &= log->evs[i].type != DETER_EV_CALL ||
			      log->evs[i].sub == DETER_ABI_CALL_RECV_ERRQUEUE;
		rec_show_event(log, &log->evs[i], connecting, json);
	}
	rec_log_free(log);
	return 0;
}

void rec_usage_compact(FILE *f)
{
	fprintf(f,
		"usage: deter compact [-d DIR] [-z N] [ID|FILE]...\n"
		"\n"
		"Compress logs again, harder: deter record compresses for little CPU,\n"
		"this for little disk (offline, e.g. before archiving). Every log in\n"
		"DIR, or the ones given. A log is read and decoded whole first and\n"
		"replaced, atomically, only by a smaller one with the same events.\n"
		"\n"
		"  -d, --dir DIR        log directory (default ./%s)\n"
		"  -z, --zstd-level N   1 to 19 (default 19)\n",
		REC_DEFAULT_DIR);
}

/* Compact one log, counted in @n; say why not in one line. Return: 0, or 1. */
static int rec_compact_one(const char *path, int level, size_t *n,
			   size_t *before, size_t *after)
{
	struct deter_log_header h;
	size_t b = 0, a = 0;
	char *err = NULL;

	if (rec_log_compact(path, level, &b, &a, &err)) {
		rec_fail("compact", "%s", err ? err : "cannot compact");
		free(err);
		return 1;
	}
	(*n)++;
	*before += b;
	*after += a;
	if (a == b)
		return 0;
	/* Rewritten: its index record names the old file. */
	if (rec_log_read_header(path, &h, &err) || rec_index_add(path, &h, &err)) {
		rec_fail("compact", "%s (compacted, but not indexed)", err);
		free(err);
		return 1;
	}
	return 0;
}

int rec_cmd_compact(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "zstd-level", required_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR;
	int level = 19;
	size_t before = 0, after = 0, n = 0, ne = 0, i;
	struct rec_entry *e = NULL;
	int bad = 0, scanned = 0, other, c;
	char *path;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:z:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'z':
			if (rec_zstd_level("compact", optarg, &level))
				return 2;
			break;
		case 'h':
			rec_usage_compact(stdout);
			return 0;
		default:
			return rec_usage_err("compact", "bad option");
		}
	}
	if (optind == argc) {
		if (rec_scan("compact", dir, &e, &ne, &bad))
			return 1;
		for (i = 0; i < ne; i++)
			bad |= rec_compact_one(e[i].path, level, &n, &before, &after);
		rec_entries_free(e, ne);
	} else {
		/* Ids are looked up in one scan of @dir, files taken as named. */
		for (i = optind; i < (size_t)argc; i++) {
			if (!scanned && !rec_is_path(argv[i])) {
				if (rec_scan("compact", dir, &e, &ne, &other))
					return 1;
				scanned = 1;
			}
			path = rec_is_path(argv[i]) ? strdup(argv[i]) :
			       rec_find_in("compact", dir, e, ne, argv[i]);
			if (!path) {
				bad = 1;
				continue;
			}
			bad |= rec_compact_one(path, level, &n, &before, &after);
			free(path);
		}
		rec_entries_free(e, ne);
	}
	printf("%zu log%s: %zu B -> %zu B (%.1f %%)%s\n", n, n == 1 ? "" : "s",
	       before, after, before ? 100.0 * after / before : 100.0,
	       bad ? "; the ones named above left as they were" : "");
	return bad ? 1 : 0;
}

void rec_usage_index(FILE *f)
{
	fprintf(f,
		"usage: deter index [-d DIR]\n"
		"\n"
		"Write DIR/%s anew from the headers of the logs in DIR. deter record\n"
		"and deter compact keep it up to date as they write logs; deter ls\n"
		"and deter replay read it instead of every log. A log it does not\n"
		"describe as the log is now is read directly, so this only saves\n"
		"time: after copying logs in, or if the index was damaged.\n"
		"\n"
		"  -d, --dir DIR  log directory (default ./%s)\n",
		REC_INDEX_NAME, REC_DEFAULT_DIR);
}

int rec_cmd_index(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_scan_ctx sc = { .cmd = "index" };
	const char *dir = REC_DEFAULT_DIR;
	char *err = NULL;
	size_t n;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'h':
			rec_usage_index(stdout);
			return 0;
		default:
			return rec_usage_err("index", "bad option");
		}
	}
	if (optind != argc)
		return rec_usage_err("index", "unexpected argument '%s'", argv[optind]);
	if (rec_index_rebuild(dir, &n, rec_scan_report_line, &sc, &err)) {
		rec_fail("index", "%s", err);
		free(err);
		return 1;
	}
	printf("%s/%s: %zu log%s%s\n", dir, REC_INDEX_NAME, n, n == 1 ? "" : "s",
	       sc.bad ? "; the ones named above left out" : "");
	return sc.bad;
}
