// SPDX-License-Identifier: GPL-2.0
/*
 * deter record: arm deter.ko and write each connection's log.
 *
 *   start:  part files a killed recorder left in DIR -> logs (incomplete)
 *           open the tracefs instance (one recorder per host: its lock)
 *           hand deter.ko the congestion controls' module parameters
 *           "record THRESHOLD_NS [PORT]..." -> debugfs deter/control
 *   every 100 ms, until SIGINT, SIGTERM or --duration:
 *           tracefs ring buffers --(rec_trace)--> connection table
 *           (rec_conn) --> each log written once whole; --max-size and
 *           --max-age applied (rec_keep); parameters again once a second
 *   stop:   "stop" -> control, drain the buffers, write what is left
 *           marked incomplete, one summary line per kind on stderr
 *
 * Exit status 1 if events were lost or a log could not be written, so a
 * script notices a recording it cannot trust. Logs never hold payload
 * bytes: deter.ko never reads any.
 */
#include "rec_record.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deter_abi.h"
#include "deter_err.h"
#include "rec_cli.h"
#include "rec_conn.h"
#include "rec_index.h"
#include "rec_keep.h"
#include "rec_log.h"
#include "rec_trace.h"

#define REC_CONTROL "/sys/kernel/debug/deter/control"
#define REC_STATS "/sys/kernel/debug/deter/stats"
/* Per-CPU ring buffer: 16 MiB holds ~0.4 M events, seconds of line rate. */
#define REC_BUFFER_KB 16384

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
	if (rec_cli_num(s, 1ULL << 30, &n) || !n) {
		deter_warn("%s='%s' is not a size from 1 to 2^30", name, s);
		return -1;
	}
	*v = n;
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
	deter_warn("%s", msg);
}

static uint64_t rec_realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int rec_control(const char *msg)
{
	FILE *f = fopen(REC_CONTROL, "w");

	if (!f) {
		if (errno == ENOENT)
			return deter_fail("deter.ko is not loaded (%s missing): insmod deter.ko",
					  REC_CONTROL);
		if (errno == EACCES || errno == EPERM)
			return deter_fail("%s: needs CAP_NET_ADMIN (run as root)", REC_CONTROL);
		return deter_fail("%s: %s", REC_CONTROL, strerror(errno));
	}
	if (fputs(msg, f) < 0 || fclose(f)) {
		if (errno == EPERM)
			return deter_fail("%s: needs CAP_NET_ADMIN (run as root)", REC_CONTROL);
		return deter_fail("%s: '%s': %s", REC_CONTROL, msg, strerror(errno));
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
			deter_warn("%s: not a number, Y or N; logged as %s",
				   path, rp->have[i] ? "last read" : "the default");
			rp->warned[i] = 1;
		}
		if (!ok || (rp->have[i] && rp->v[i] == v))
			continue;
		snprintf(msg, sizeof(msg), "param %u %lld", DETER_PARAM_FIRST + i, v);
		if (rec_control(msg))
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
			deter_fail("%s", err);
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
		deter_warn("%u log%s of connections open %s%s",
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

	while ((c = deter_getopt(argc, argv, "o:p:t:D:b:z:s:a:h", opts)) != -1) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case 'p':
			if (rec_cli_num(optarg, 65535, &v) || !v)
				return deter_usage_fail("--port: '%s' is not a port", optarg);
			if (nports == 16)
				return deter_usage_fail("at most 16 --port options");
			ports[nports++] = v;
			break;
		case 't':
			if (rec_cli_num(optarg, 1000000, &th_us))
				return deter_usage_fail("--threshold-us: '%s' is %s", optarg,
							"not a number of microseconds");
			break;
		case 'D':
			if (rec_cli_num(optarg, 86400 * 365, &duration) || !duration)
				return deter_usage_fail("--duration: '%s' is %s", optarg,
							"not a number of seconds");
			break;
		case 'b':
			if (rec_cli_num(optarg, 1 << 22, &buffer_kb) || buffer_kb < 64)
				return deter_usage_fail("--buffer-kb: '%s' is %s", optarg,
							"not a size from 64 to 4194304");
			break;
		case 'z':
			if (rec_cli_zstd_level(optarg, &rec_log_zstd_level))
				return 2;
			break;
		case 's':
			if (rec_size_arg(optarg, &v))
				return deter_usage_fail("--max-size: '%s' is %s", optarg,
							"not a size (bytes, or a number and K, M, G or T)");
			lim.max_bytes = v;
			size_arg = optarg;
			break;
		case 'a':
			if (rec_age_arg(optarg, &v))
				return deter_usage_fail("--max-age: '%s' is %s", optarg,
							"not an age (seconds, or a number and s, m, h or d)");
			lim.max_age_ns = v;
			age_arg = optarg;
			break;
		case 'h':
			rec_usage_record(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc)
		return deter_usage_fail("unexpected argument '%s'", argv[optind]);
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
		return deter_fail("deter.ko is not loaded (%s missing): insmod deter.ko",
				  REC_CONTROL);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return deter_fail("%s: %s", dir, strerror(errno));
	rec_recover_parts(dir);
	gethostname(host, sizeof(host) - 1);
	table = rec_table_new(dir, host);
	if (!table)
		return deter_fail("out of memory");
	trace = rec_trace_open(buffer_kb, &err);
	if (!trace) {
		deter_fail("%s", err ? err : "cannot open tracefs");
		goto out;
	}
	/* Only the recorder that holds the lock (rec_trace_open()) removes. */
	if (lim.max_bytes || lim.max_age_ns) {
		keep = rec_keep_open(dir, &lim, rec_keep_report_line, NULL, &err);
		if (!keep) {
			deter_fail("%s", err);
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
	if (rec_control(ctl))
		goto out;
	/* SIGINT and SIGTERM stop recording: wait for them as the poll tick. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	blocked = 1;
	deter_warn("recording into %s (threshold %llu us%s); stop with Ctrl-C",
		   dir, th_us, nports ? ", selected ports" : "");
	clock_gettime(CLOCK_MONOTONIC, &start);
	params_at = start.tv_sec;

	while (sigtimedwait(&stop, NULL, &tick) < 0) {
		if (rec_trace_poll(trace, table, &err)) {
			deter_fail("%s", err);
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
	rec_control("stop");
	if (rec_trace_poll(trace, table, &err)) {
		deter_fail("%s", err);
		goto out;
	}
	lost = rec_trace_lost(trace);
	rec_table_flush(table, 1, lost > 0);
	rec_table_counts(table, &written, &incomplete, &open);
	unwritten = rec_table_unwritten(table);
	deter_warn("%u connection%s recorded in %s, %u incomplete%s%s; %llu events read, %llu lost",
		   written, written == 1 ? "" : "s", dir, incomplete,
		   rec_table_incomplete_why(table, why, sizeof(why)),
		   unwritten ? ", some not written (said above)" : "",
		   rec_trace_events(trace), lost);
	if (rec_table_settings_changed(table))
		deter_warn("%u log%s say%s a setting TCP reads changed during the connection (deter ls: settings-changed)",
			   rec_table_settings_changed(table),
			   rec_table_settings_changed(table) == 1 ? "" : "s",
			   rec_table_settings_changed(table) == 1 ? "s" : "");
	if (keep) {
		struct rec_keep_stats ks;
		char rb[32], kb[32];

		rec_keep_stop(keep, rec_realtime_ns());
		rec_keep_stats(keep, &ks);
		deter_warn("%llu log%s removed (%s, %llu flagged) by%s%s%s%s%s; %s keeps %llu log%s, %s on disk",
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
		deter_warn("%llu IPv6 connection%s not recorded (IPv4 only)",
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
