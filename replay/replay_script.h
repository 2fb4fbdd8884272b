/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for turning a connection's two logs into what a replay
 * needs: the validated pair, the deter.ko script of each end, each
 * end's socket-call plan (one list per recorded thread) and each end's
 * packet arrival order for the corrector. Pure computation on decoded
 * logs: no I/O but reading log files. Not thread-safe per object;
 * errors come back as a message in *err (caller frees) naming the file.
 */
#ifndef _REPLAY_SCRIPT_H
#define _REPLAY_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "rec_log.h"

/* The two ends of one connection. */
enum replay_end {
	REPLAY_END_ACTIVE,	/* called connect(): host a */
	REPLAY_END_PASSIVE,	/* accepted: host b */
	REPLAY_END_MAX,
};

struct replay_pair {
	struct rec_log *log[REPLAY_END_MAX];	/* decoded logs, by end */
	char *path[REPLAY_END_MAX];		/* their files */
};

/* One recorded socket call, as the generator issues it. */
struct replay_call {
	uint32_t seq;		/* the CALL event's sequence number */
	uint32_t done_seq;	/* its CALL_DONE's, 0 if none was recorded */
	uint16_t call;		/* enum deter_abi_call */
	uint64_t arg;		/* bytes asked; SHUTDOWN: how + 1; CLOSE: linger, jiffies */
	/* MSG_* flags of send/recv, setsockopt's option, DETER_SPLICE_RD_* */
	uint32_t flags;
	int64_t ret;		/* recorded return value, if done_seq */
	uint64_t pages;		/* CALL_DONE's b: DETER_SPLICE_*, DETER_SEND_* (0 if none) */
	uint32_t opt_at;	/* options to set first: plan->opts[opt_at] on */
	uint32_t nopts;		/* how many */
	/*
	 * App lock turns since the previous call ended, its own included
	 * (the first call: since accept()'s, or since connect() when it did
	 * not wait); 0: not known (after a connect() that waited, or
	 * another call was under way).
	 * Those the options do not take are other socket calls deter does
	 * not replay as such (getsockopt(), setsockopt() of an option it
	 * does not record): the generator takes them with a call that does
	 * nothing but lock and release.
	 */
	uint32_t locks;
	/*
	 * 1: not the application's call but the kernel's, going on with
	 * the thread's previous spliced send, which returned short:
	 * splice_to_socket() sends what is left of its bytes at once
	 * (replay_plan_build()). The generator's splice() for that send
	 * makes this one too.
	 */
	uint8_t cont;
};

/* A socket option's value, as the log has it (enum deter_cfg). */
struct replay_opt {
	uint16_t cfg;		/* enum deter_cfg, one replay_cfg_is_opt() */
	uint64_t val;		/* as recorded (DETER_KA_PACK() ...) */
};

/* The calls one recorded thread made, in order. */
struct replay_thread {
	uint32_t tid;			/* recorded thread id */
	struct replay_call *calls;
	size_t ncalls;
	size_t cap;			/* calls allocated */
};

struct replay_plan {
	struct replay_thread *threads;	/* in order of each thread's first call */
	size_t nthreads;
	/* sk_sndbuf, sk_rcvbuf the app set before its first call, or 0 */
	uint32_t sndbuf, rcvbuf;
	/* options as the socket started with them (before connect/listen) */
	struct replay_opt *init;
	size_t ninit;
	/* options changed later, before a call: see replay_call.opt_at */
	struct replay_opt *opts;
	size_t nopts;
	/* connect() calls the application made (active end): 1 + retries */
	uint32_t connects;
	/* the active end's connect() waited for the handshake */
	int connect_waits;
	/* the first read of the error queue that found a message, or 0 */
	uint32_t errq_seq;
	int64_t errq_ret;
};

/* One data packet's arrival at a host, in arrival order. */
struct replay_arrival {
	uint64_t idx;		/* the sender's packet index (extended IP ID) */
	uint8_t ce;		/* 1: arrived marked CE */
	uint32_t segs;		/* GSO: indexes it covers; 0 after the first */
};

int replay_pair_load(const char *path0, const char *path1,
		     struct replay_pair *pair, char **err);
int replay_pair_find_peer(const char *dir, const char *path, char **peer,
			  char **err);
void replay_pair_free(struct replay_pair *pair);
int replay_settings_note(const struct rec_log *log, char *buf, size_t len);

int replay_log_rebuilds(const struct rec_log *log, const struct rec_log *peer);
int replay_script_build(const struct rec_log *log, int rebuild, uint8_t **buf,
			size_t *len, char **err);
int replay_cfg_is_opt(unsigned int cfg);
int replay_plan_build(const struct rec_log *log, struct replay_plan *plan,
		      char **err);
int replay_plan_check(const struct replay_plan *plan, char **err);
void replay_plan_free(struct replay_plan *plan);
int replay_arrivals_build(const struct rec_log *log,
			  struct replay_arrival **arr, size_t *n, char **err);

const char *replay_call_name(uint16_t call);

#endif /* _REPLAY_SCRIPT_H */
