/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for one replay run on the testbed: what deter replay builds
 * from the logs and its options once (struct replay_ctx), and a run of
 * it. Single threaded; a run says its verdict on stdout and any error on
 * stderr (deter_err.h) itself.
 */
#ifndef _REPLAY_RUN_H
#define _REPLAY_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "corrector.h"
#include "replay_script.h"

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
	int rebuild[REPLAY_END_MAX];		/* replay_log_rebuilds() */
	struct replay_plan plan[REPLAY_END_MAX];	/* generator calls */
	struct corr_arrival *arr[REPLAY_END_MAX];	/* corrector orders */
	size_t narr[REPLAY_END_MAX];
	char local[REPLAY_END_MAX][32];		/* "addr:port", status key */
};

void replay_run_interrupt(void);
int replay_run_once(struct replay_ctx *ctx, unsigned long long n);

#endif /* _REPLAY_RUN_H */
