/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the replay testbed: two network namespaces joined by a
 * veth pair, one per connection end (or one namespace for both ends of a
 * connection recorded over lo), configured like the recorded stacks,
 * with each host's incoming TCP queued to NFQUEUE for the packet
 * corrector; and the helper processes run in them (ip, sysctl, nft,
 * tcpdump, trace-cmd). Single-threaded callers only (fork/exec); errors
 * come back as a message in *err (caller frees), one line.
 */
#ifndef _REPLAY_NET_H
#define _REPLAY_NET_H

#include <stdint.h>
#include <sys/types.h>

#include "deter_abi.h"

struct rec_log;

/* One testbed host: the namespace one connection end replays in. */
struct replay_host {
	char name[2];		/* "a" (active end) or "b" */
	char ns[48];		/* network namespace, dtr-<pid>-<name> */
	char dev[16];		/* its veth end, or lo (one host) */
	char filter[96];	/* tcpdump's filter for its packets */
	uint32_t addr;		/* this end's address, IPv4, host order */
	uint32_t peer;		/* the other end's */
	uint16_t port;		/* this end's port */
	uint32_t flags;		/* DETER_CONN_* negotiated */
	uint64_t offload;	/* CONFIG OFFLOAD: DETER_OFFLOAD_*, MTU */
	uint16_t queue;		/* NFQUEUE number of its ingress TCP */
	int made;		/* 1: namespace exists */
	/* Recorded sysctls (CONFIG SYSCTL), "net.ipv4.NAME=VALUE" each. */
	char sysctl[DETER_SYSCTL_MAX][80];
	int nsysctl;
	/*
	 * Host-wide settings the end needs (enum deter_sysctl): its logged
	 * net.core.rmem_max, and the module parameters of the congestion
	 * controls it used.
	 */
	long long global[DETER_SYSCTL_MAX];
	unsigned char want[DETER_SYSCTL_MAX];
	char route[256];	/* the route's logged metrics, as ip route takes them */
};

/* A host-wide setting the testbed changed: which, and its value before. */
struct replay_global {
	unsigned int id;	/* enum deter_sysctl */
	long long saved;
};

struct replay_net {
	struct replay_host host[2];	/* [0] active end, [1] passive end */
	int local;			/* 1: both ends on one host, over lo */
	int direct;			/* 1: local, no drop, late or CE arrival: no corrector */
	struct replay_global set[1 + DETER_PARAMS];
	int nset;			/* settings changed, */
	int lock;			/* under this flock()ed file, or -1 */
};

/* A helper process whose output is watched (tcpdump, trace-cmd). */
struct replay_proc {
	pid_t pid;		/* 0 when not running */
	int out;		/* read end of its stdout + stderr */
	char what[32];		/* names it in messages */
};

int replay_net_create(struct replay_net *net, const struct rec_log *log[2],
		      int keep_host, char **err);
int replay_net_restore_host(struct replay_net *net, char **err);
int replay_net_destroy(struct replay_net *net, char **err);
int replay_net_enter(const char *ns, char **err);

int replay_proc_start(struct replay_proc *p, const char *what, const char *ns,
		      char *const argv[], const char *ready, int timeout_ms,
		      char **err);
int replay_proc_stop(struct replay_proc *p, int sig, int timeout_ms, char **err);

#endif /* _REPLAY_NET_H */
