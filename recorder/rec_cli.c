// SPDX-License-Identifier: GPL-2.0
/*
 * What the recording side's subcommands share.
 *
 * A connection is named on the command line by its log's path, or by its
 * id as deter ls prints it (16 hex digits) or any prefix of that which
 * only one log in the directory has:
 *
 *   "d/x.dlog", "./x" (a '/' or ".dlog")  -> that file, as given
 *   "106f"                                -> the one log whose id starts
 *                                            so, else an error: none, or
 *                                            ambiguous (how many match)
 *
 * Listings come from rec_dir_scan() (the index where it is current, the
 * logs' headers elsewhere); a log or index it cannot read is said, one
 * line each, and the subcommand goes on with the rest but exits 1.
 */
#include "rec_cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deter_err.h"

/**
 * rec_cli_num() - a decimal argument
 * @s: the argument
 * @max: the largest value it may have
 * @v: its value
 *
 * Return: 0, or -1 if @s is not a number from 0 to @max.
 */
int rec_cli_num(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *v > max ? -1 : 0;
}

/**
 * rec_cli_zstd_level() - a --zstd-level argument
 * @s: the argument
 * @level: its value, 1 to 19
 *
 * Return: 0, or 2 (a usage error, said).
 */
int rec_cli_zstd_level(const char *s, int *level)
{
	unsigned long long v;

	if (rec_cli_num(s, 19, &v) || !v)
		return deter_usage_fail("--zstd-level: '%s' is not a level from 1 to 19", s);
	*level = v;
	return 0;
}

/** rec_cli_addr() - "10.0.1.1:60268" of @addr, @port (host order) into @buf */
void rec_cli_addr(char *buf, size_t len, uint32_t addr, uint16_t port)
{
	struct in_addr in = { .s_addr = htonl(addr) };
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, port);
}

/** rec_cli_time() - "2026-01-02T03:04:05" (UTC) of @real_ns into @buf */
void rec_cli_time(char *buf, size_t len, uint64_t real_ns)
{
	time_t t = real_ns / 1000000000ULL;
	struct tm tm;

	gmtime_r(&t, &tm);
	len = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	(void)len;
}

/**
 * rec_cli_report() - say one log or index rec_dir_scan() could not read
 * @msg: what is wrong with it
 * @bad: an int, set to 1
 */
void rec_cli_report(const char *msg, void *bad)
{
	deter_warn("%s", msg);
	*(int *)bad = 1;
}

/**
 * rec_cli_scan() - every log in @dir, oldest first
 * @dir: the log directory
 * @flags: rec_dir_scan()'s (REC_SCAN_PARTS)
 * @out: the logs (rec_entries_free())
 * @n: how many
 * @bad: set to 1 if some could not be read (said), else 0
 *
 * Return: 0, or -1 if @dir could not be listed (said).
 */
int rec_cli_scan(const char *dir, int flags, struct rec_entry **out, size_t *n,
		 int *bad)
{
	char *err = NULL;

	*bad = 0;
	if (rec_dir_scan(dir, flags, out, n, rec_cli_report, bad, &err)) {
		deter_fail_err(&err);
		return -1;
	}
	return 0;
}

/** rec_cli_is_path() - does @id name a file rather than a connection id? */
int rec_cli_is_path(const char *id)
{
	return strchr(id, '/') || strstr(id, ".dlog");
}

/**
 * rec_cli_find_in() - the log of connection @id among a directory's logs
 * @dir: the directory, for the message
 * @e: its logs
 * @n: how many
 * @id: a unique prefix of a connection id
 *
 * Return: the log's path (caller frees), or NULL (said).
 */
char *rec_cli_find_in(const char *dir, const struct rec_entry *e, size_t n,
		      const char *id)
{
	size_t i, hits = 0;
	char *path = NULL, want[32];

	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "%016llx", (unsigned long long)e[i].h.conn);
		if (!strncmp(want, id, strlen(id))) {
			hits++;
			free(path);
			path = strdup(e[i].path);
		}
	}
	if (hits == 1)
		return path;
	free(path);
	if (hits)
		deter_fail("%s: ambiguous id prefix in %s (%zu matches)", id, dir, hits);
	else
		deter_fail("%s: no such connection in %s", id, dir);
	return NULL;
}

/**
 * rec_cli_find() - the log @id names: a file, or a unique id prefix in @dir
 * @dir: the log directory
 * @id: the command line's argument
 *
 * Return: the log's path (caller frees), or NULL (said).
 */
char *rec_cli_find(const char *dir, const char *id)
{
	struct rec_entry *e;
	char *path;
	size_t n;
	int bad;

	if (rec_cli_is_path(id))
		return strdup(id);
	if (rec_cli_scan(dir, 0, &e, &n, &bad))
		return NULL;
	path = rec_cli_find_in(dir, e, n, id);
	rec_entries_free(e, n);
	return path;
}
