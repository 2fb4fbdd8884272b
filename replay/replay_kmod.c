// SPDX-License-Identifier: GPL-2.0
/*
 * deter.ko's replay files in debugfs.
 *
 *   deter/replay   write: one script per write() (struct deter_replay_hdr,
 *                  events, states; include/deter_abi.h)
 *                  read:  one line per loaded script,
 *                  "<saddr>:<sport> <daddr>:<dport> <state> <done>/<n> <k> <msg>"
 *   deter/control  "replay" arms the scripts this process loaded, "stop"
 *                  ends their replay and drops them
 *
 * A replay is    load(a) load(b) -> "replay" -> read ... read -> "stop",
 * one per process: replays of different connections run side by side
 * (each on its own testbed), and a replay whose process died is dropped
 * at the next load.
 *
 * The kernel says why it refuses through errno, mapped to one line:
 *   ENOENT  no such file: deter.ko not loaded, or a kernel without
 *           deter's hooks
 *   EPERM   no CAP_NET_ADMIN      EBUSY   recording is armed
 *   EEXIST  a running replay has a script for the same endpoint
 *   ENOSPC  64 scripts (32 replays) are loaded already
 *   EALREADY  a script loaded after this process's "replay" (a bug here)
 *   EINVAL  a malformed script (a bug on this side: the script is built
 *           from a log that decoded cleanly)
 *
 * DETER_DEBUGFS overrides the directory (default /sys/kernel/debug/deter),
 * for tests that stand a plain directory in for deter.ko.
 */
#include "replay_kmod.h"

#include "rec_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPLAY_KMOD_DIR "/sys/kernel/debug/deter"
/* The status text of two scripts is two short lines; allow many more. */
#define REPLAY_KMOD_STATUS_MAX 65536

/**
 * replay_kmod_dir() - deter.ko's debugfs directory
 *
 * Return: $DETER_DEBUGFS if set, else /sys/kernel/debug/deter.
 */
const char *replay_kmod_dir(void)
{
	const char *d = getenv("DETER_DEBUGFS");

	return d && *d ? d : REPLAY_KMOD_DIR;
}

static int replay_kmod_errno(int e, const char *path, const char *what,
			     char **err)
{
	switch (e) {
	case ENOENT:
		return rec_err(err,
			       "%s missing: deter.ko is not loaded (insmod deter.ko) or this kernel lacks deter's replay hooks",
			       path);
	case EPERM:
	case EACCES:
		return rec_err(err, "%s: needs CAP_NET_ADMIN (run as root)", path);
	case EBUSY:
		return rec_err(err, "%s: recording is active: stop deter record first",
			       path);
	case EEXIST:
		return rec_err(err, "%s: %s: another replay of this connection is running",
			       path, what);
	case ENOSPC:
		return rec_err(err, "%s: %s: too many replays running at once", path, what);
	case EINVAL:
		return rec_err(err, "%s: deter.ko rejected %s as invalid", path, what);
	default:
		return rec_err(err, "%s: %s: %s", path, what, strerror(e));
	}
}

/**
 * replay_kmod_check() - is deter.ko's replay interface there?
 * @err: set if not
 *
 * Return: 0, or -1 with *err set.
 */
int replay_kmod_check(char **err)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/replay", replay_kmod_dir());
	if (access(path, W_OK))
		return replay_kmod_errno(errno, path, "access", err);
	snprintf(path, sizeof(path), "%s/control", replay_kmod_dir());
	if (access(path, W_OK))
		return replay_kmod_errno(errno, path, "access", err);
	return 0;
}

static int replay_kmod_write(const char *file, const void *buf, size_t len,
			     const char *what, char **err)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", replay_kmod_dir(), file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return replay_kmod_errno(errno, path, what, err);
	n = write(fd, buf, len);
	if (n < 0) {
		int e = errno;

		close(fd);
		return replay_kmod_errno(e, path, what, err);
	}
	if ((size_t)n != len) {
		close(fd);
		return rec_err(err, "%s: %s: short write (%zd of %zu bytes)",
			       path, what, n, len);
	}
	if (close(fd))
		return replay_kmod_errno(errno, path, what, err);
	return 0;
}

/**
 * replay_kmod_load() - hand one end's script to deter.ko
 * @script: the script (replay_script_build())
 * @len: its length, bytes
 * @what: names the script in messages
 * @err: set on failure
 *
 * Return: 0, or -1 with *err set.
 */
int replay_kmod_load(const void *script, size_t len, const char *what,
		     char **err)
{
	return replay_kmod_write("replay", script, len, what, err);
}

/**
 * replay_kmod_control() - write a command to deter/control
 * @cmd: "replay" or "stop"
 * @err: set on failure
 *
 * Return: 0, or -1 with *err set.
 */
int replay_kmod_control(const char *cmd, char **err)
{
	char what[64];

	snprintf(what, sizeof(what), "'%s'", cmd);
	return replay_kmod_write("control", cmd, strlen(cmd), what, err);
}

/**
 * replay_kmod_read() - read deter/replay's status text
 * @text: set to the NUL-terminated text (caller frees)
 * @err: set on failure
 *
 * Return: 0, or -1 with *err set.
 */
int replay_kmod_read(char **text, char **err)
{
	char path[512], *buf;
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/replay", replay_kmod_dir());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return replay_kmod_errno(errno, path, "read", err);
	buf = malloc(REPLAY_KMOD_STATUS_MAX + 1);
	if (!buf) {
		close(fd);
		return rec_err(err, "out of memory");
	}
	while (len < REPLAY_KMOD_STATUS_MAX) {
		n = read(fd, buf + len, REPLAY_KMOD_STATUS_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			free(buf);
			return replay_kmod_errno(e, path, "read", err);
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	*text = buf;
	return 0;
}

/**
 * replay_kmod_parse() - find one script's status in deter/replay's text
 * @text: the text (replay_kmod_read())
 * @local: the script's end, "<saddr>:<sport>" (dotted quad)
 * @st: filled from the first line whose first field is @local
 *
 * Return: 0; -1 if no line is about @local; -2 if the first one is not
 * in this format (a deter.ko of another build), left in st->line.
 */
int replay_kmod_parse(const char *text, const char *local,
		      struct replay_status *st)
{
	const char *p = text, *eol;
	size_t len, llen = strlen(local);
	char remote[64];
	int off = 0;

	for (; *p; p = *eol ? eol + 1 : eol) {
		eol = strchrnul(p, '\n');
		len = eol - p;
		if (len <= llen || strncmp(p, local, llen) || p[llen] != ' ')
			continue;
		if (len >= sizeof(st->line))
			len = sizeof(st->line) - 1;
		memcpy(st->line, p, len);
		st->line[len] = '\0';
		if (sscanf(st->line + llen, " %63s %15s %u/%u %u %n", remote,
			   st->state, &st->done, &st->nevents, &st->diverged_nr,
			   &off) != 5 || !off)
			return -2;
		st->msg = st->line + llen + off;
		if (!*st->msg)
			st->msg = "-";
		return 0;
	}
	return -1;
}
