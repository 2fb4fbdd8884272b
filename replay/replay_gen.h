/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the socket-call generator: re-issues one connection
 * end's recorded socket calls, one thread per recorded thread, in the
 * network namespace of the calling thread. Runs in a process of its own
 * (it may block for good when a replay diverges: its parent kills it).
 * Progress goes to report_fd as lines:
 *   L          the passive end listens (the active end may connect)
 *   D <msg>    a call returned other than recorded: the replay diverged
 *   E <msg>    the generator could not do its job
 *   K          every call was issued and returned as recorded
 */
#ifndef _REPLAY_GEN_H
#define _REPLAY_GEN_H

#include <stdint.h>

#include "replay_script.h"

struct replay_gen_cfg {
	int active;			/* 1: connect(), 0: listen() + accept() */
	uint32_t saddr, daddr;		/* this end, the peer; IPv4, host order */
	uint16_t sport, dport;		/* ports, host order */
	const char *cc;			/* congestion control, "" for the default */
	const struct replay_plan *plan;	/* calls to issue */
	int report_fd;			/* where progress lines go */
};

int replay_gen_run(const struct replay_gen_cfg *cfg);

#endif /* _REPLAY_GEN_H */
