// SPDX-License-Identifier: GPL-2.0
/*
 * A replay run's captures: tcpdump on each host's veth end (--pcap) and
 * trace-cmd record around the whole run (--trace). Where both ends share
 * one host (a connection over lo), each end's capture on lo keeps the
 * packets that end sent.
 *
 *   start (before deter.ko is armed):
 *     tcpdump -i DEV -s 128 --immediate-mode -U -w PATH FILTER   in host a, b
 *       (FILTER: tcp; over lo, tcp and src host ADDR and src port PORT)
 *     stdbuf -oL trace-cmd record -o PATH ARGS...              in the host
 *   each ready once it says so ("listening on", "Hit Ctrl^C")
 *
 *   stop (after the verdict):
 *     wait until the pcap files stop growing (tcpdump lags on a slow
 *     machine), SIGINT each tcpdump, then retime its packets to the
 *     original run's inferred send and receive times (replay_pcap.c);
 *     SIGINT trace-cmd and wait while it writes the trace out
 *
 * Headers only (-s 128): logs hold no payload, and the comparison with
 * the original needs none. Helpers are signalled by their pid only.
 */
#include "replay_capture.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <wordexp.h>

#include "deter_err.h"
#include "replay_pcap.h"

/* tcpdump gets this long to start or to stop: it takes ~0.1 s. */
#define REPLAY_DUMP_MS 10000
/*
 * trace-cmd needs a while to start (patching the traced functions in) and
 * longer to stop: it then copies every event format and kallsyms into the
 * file, 10-30 s in a TCG guest. Killing it loses the trace, so wait.
 */
#define REPLAY_TRACE_START_MS 120000
#define REPLAY_TRACE_STOP_MS 300000

/**
 * replay_capture_dump_start() - start capturing one host's packets
 * @cap: the run's captures
 * @e: the host's end (enum replay_end)
 * @h: the host
 * @path: the pcap file to write
 * @verbose: say where it goes
 *
 * Return: 0 once tcpdump listens, or 1 (said).
 */
int replay_capture_dump_start(struct replay_capture *cap, int e,
			      const struct replay_host *h, const char *path,
			      int verbose)
{
	char what[32], *err = NULL;

	snprintf(cap->dump_path[e], sizeof(cap->dump_path[e]), "%s", path);
	snprintf(what, sizeof(what), "tcpdump %s", h->name);
	if (replay_proc_start(&cap->dump[e], what, h->ns,
			      (char *const[]){ "tcpdump", "-i", (char *)h->dev, "-s", "128",
					       "--immediate-mode", "-U", "-n", "-w",
					       cap->dump_path[e], (char *)h->filter, NULL },
			      "listening on", REPLAY_DUMP_MS, &err))
		return deter_fail_err(&err);
	if (verbose)
		deter_warn("capturing host %s into %s", h->name, path);
	return 0;
}

/**
 * replay_capture_trace_start() - start trace-cmd record
 * @cap: the run's captures
 * @args: trace-cmd record's arguments, as a shell would split them
 * @path: the trace file to write
 * @verbose: say where it goes
 *
 * Return: 0 once trace-cmd records, or 1 (said).
 */
int replay_capture_trace_start(struct replay_capture *cap, const char *args,
			       const char *path, int verbose)
{
	char *err = NULL, **argv;
	wordexp_t we;
	size_t i;
	int ret;

	if (wordexp(args, &we, WRDE_NOCMD | WRDE_UNDEF))
		return deter_fail("--trace: cannot parse '%s'", args);
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
	argv[5] = (char *)path;
	for (i = 0; i < we.we_wordc; i++)
		argv[6 + i] = we.we_wordv[i];
	ret = replay_proc_start(&cap->trace, "trace-cmd", NULL, argv, "Hit Ctrl^C",
				REPLAY_TRACE_START_MS, &err);
	free(argv);
	wordfree(&we);
	if (ret)
		return deter_fail_err(&err);
	if (verbose)
		deter_warn("tracing into %s", path);
	return 0;
}

/*
 * Wait until the tcpdumps have written what they were handed: their files
 * (written per packet, -U) have not grown for 300 ms. They may lag the
 * connection by many packets on a slow (emulated) machine; what is still
 * in a ring when it is stopped is lost. At most 5 s.
 */
static void replay_capture_settle(const struct replay_capture *cap)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	off_t last[REPLAY_END_MAX] = { -1, -1 };
	struct stat st;
	int i, e, same = 0, moved;

	for (i = 0; i < 50 && same < 3; i++) {
		nanosleep(&tick, NULL);
		moved = 0;
		for (e = 0; e < REPLAY_END_MAX; e++) {
			if (!cap->dump[e].pid || stat(cap->dump_path[e], &st))
				continue;
			moved |= st.st_size != last[e];
			last[e] = st.st_size;
		}
		same = moved ? 0 : same + 1;
	}
}

/**
 * replay_capture_stop() - stop what replay_capture_*_start() started
 * @cap: the run's captures
 * @log: the logs by end, whose times the pcap files are given
 * @verbose: say that trace-cmd is being waited for
 *
 * Return: 0, or 1 if some capture failed (said; the others are stopped
 * all the same).
 */
int replay_capture_stop(struct replay_capture *cap,
			struct rec_log *const log[REPLAY_END_MAX], int verbose)
{
	char *err = NULL;
	int e, ret = 0;

	replay_capture_settle(cap);
	for (e = 0; e < REPLAY_END_MAX; e++) {
		if (!cap->dump[e].pid)
			continue;
		if (replay_proc_stop(&cap->dump[e], SIGINT, REPLAY_DUMP_MS, &err)) {
			ret = deter_fail_err(&err);
			continue;
		}
		/* Timestamps: the original's inferred send and receive times. */
		if (replay_pcap_retime(cap->dump_path[e], log[e], log[!e], &err))
			ret = deter_fail_err(&err);
	}
	if (cap->trace.pid && verbose)
		deter_warn("stopping trace-cmd (it writes the trace out)");
	if (cap->trace.pid &&
	    replay_proc_stop(&cap->trace, SIGINT, REPLAY_TRACE_STOP_MS, &err))
		ret = deter_fail_err(&err);
	return ret;
}
