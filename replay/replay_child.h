/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for a replay run's children: processes forked into one
 * testbed namespace that report to deter replay in lines over a pipe.
 * Single threaded (fork).
 */
#ifndef _REPLAY_CHILD_H
#define _REPLAY_CHILD_H

#include <stddef.h>
#include <sys/types.h>

/* A child's report text not yet consumed, and a line of it. */
#define REPLAY_CHILD_BUF 1024

/* A child process running in one testbed namespace. */
struct replay_child {
	pid_t pid;		/* 0 when reaped or never started */
	int out;		/* its report pipe, non-blocking; -1 if none */
	char buf[REPLAY_CHILD_BUF];	/* report text not yet consumed */
	int status;		/* wait status once reaped */
};

pid_t replay_child_fork(struct replay_child *c, const char *ns, int *wfd);
void replay_child_read(struct replay_child *c);
int replay_child_line(struct replay_child *c, char *line, size_t len);
int replay_child_reap(struct replay_child *c, int block);
void replay_child_kill(struct replay_child *c);

#endif /* _REPLAY_CHILD_H */
