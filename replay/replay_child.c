// SPDX-License-Identifier: GPL-2.0
/*
 * The children of a replay run: a packet corrector and a socket-call
 * generator in each testbed namespace, each forked from deter replay
 * and reporting to it over a pipe, one line per report:
 *
 *   parent --fork--> child --setns(ns)--> its job
 *     ^                                       |
 *     +---- pipe (non-blocking read end) <----+  "L", "K", "D why",
 *                                                "E why", "S counters"
 *
 * The parent polls (replay_child_line()) rather than blocks, so one loop
 * watches both hosts' children and deter.ko's status. Children are only
 * ever signalled by their pid.
 */
#include "replay_child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay_net.h"

/**
 * replay_child_fork() - fork a child into a namespace, with a report pipe
 * @c: the child, reset
 * @ns: the network namespace it enters
 * @wfd: in the child, the pipe's write end for its reports
 *
 * A child that cannot enter @ns reports "E why" and exits 1.
 *
 * Return: the child's pid in the parent, 0 in the child, -1 (errno) if
 * it could not be started.
 */
pid_t replay_child_fork(struct replay_child *c, const char *ns, int *wfd)
{
	int pfd[2];
	char *err = NULL;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->out = -1;
	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		close(pfd[0]);
		signal(SIGINT, SIG_IGN);	/* the parent stops us */
		signal(SIGTERM, SIG_DFL);
		if (replay_net_enter(ns, &err)) {
			dprintf(pfd[1], "E %s\n", err);
			_exit(1);
		}
		*wfd = pfd[1];
		return 0;
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	c->pid = pid;
	c->out = pfd[0];
	return pid;
}

/** replay_child_read() - read what @c reported so far into its buffer */
void replay_child_read(struct replay_child *c)
{
	size_t len = strlen(c->buf);
	ssize_t n;

	while (c->out >= 0 && len < sizeof(c->buf) - 1) {
		n = read(c->out, c->buf + len, sizeof(c->buf) - 1 - len);
		if (n <= 0) {
			if (!n || (errno != EAGAIN && errno != EINTR)) {
				close(c->out);
				c->out = -1;
			}
			break;
		}
		len += n;
		c->buf[len] = '\0';
	}
}

/**
 * replay_child_line() - take the next whole line of @c's reports
 * @c: the child
 * @line: the line, without its newline
 * @len: @line's size
 *
 * Return: 1 if there was one, else 0.
 */
int replay_child_line(struct replay_child *c, char *line, size_t len)
{
	char *nl;

	replay_child_read(c);
	nl = strchr(c->buf, '\n');
	if (!nl)
		return 0;
	*nl = '\0';
	snprintf(line, len, "%s", c->buf);
	memmove(c->buf, nl + 1, strlen(nl + 1) + 1);
	return 1;
}

/**
 * replay_child_reap() - reap @c if it exited
 * @c: the child
 * @block: wait until it does
 *
 * Return: 1 if it is gone, else 0.
 */
int replay_child_reap(struct replay_child *c, int block)
{
	if (!c->pid)
		return 1;
	if (waitpid(c->pid, &c->status, block ? 0 : WNOHANG) != c->pid)
		return 0;
	c->pid = 0;
	return 1;
}

/** replay_child_kill() - SIGKILL @c, reap it and close its pipe */
void replay_child_kill(struct replay_child *c)
{
	if (c->pid) {
		kill(c->pid, SIGKILL);
		replay_child_reap(c, 1);
	}
	if (c->out >= 0) {
		close(c->out);
		c->out = -1;
	}
}

