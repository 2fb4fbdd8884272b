/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for what a replay run records besides its verdict: each
 * host's packets (tcpdump, --pcap) and a kernel trace (trace-cmd,
 * --trace). Single threaded, like the run that owns it; errors are said
 * through deter_err.h and the functions return 1, else 0.
 */
#ifndef _REPLAY_CAPTURE_H
#define _REPLAY_CAPTURE_H

#include "replay_net.h"
#include "replay_script.h"

/* The capture helpers of one run; zeroed: none started. */
struct replay_capture {
	struct replay_proc dump[REPLAY_END_MAX];	/* tcpdump per host */
	char dump_path[REPLAY_END_MAX][4096];		/* its pcap file */
	struct replay_proc trace;			/* trace-cmd record */
};

int replay_capture_dump_start(struct replay_capture *cap, int e,
			      const struct replay_host *h, const char *path,
			      int verbose);
int replay_capture_trace_start(struct replay_capture *cap, const char *args,
			       const char *path, int verbose);
int replay_capture_stop(struct replay_capture *cap,
			struct rec_log *const log[REPLAY_END_MAX], int verbose);

#endif /* _REPLAY_CAPTURE_H */
