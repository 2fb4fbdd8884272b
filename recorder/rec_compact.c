// SPDX-License-Identifier: GPL-2.0
/*
 * deter compact and deter index: rewrite what a log directory holds.
 *
 *   compact:  each log (all of DIR's, or those named) decoded whole and
 *             encoded again at a higher zstd level; the file is replaced
 *             atomically, only by a smaller one with the same events
 *             (rec_log_compact()), and its index record renewed
 *   index:    DIR's index written anew from its logs' headers
 *             (rec_index_rebuild())
 *
 * Both go on past a log they cannot handle, say it, and exit 1 at the end.
 */
#include "rec_compact.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deter_abi.h"
#include "deter_err.h"
#include "rec_cli.h"
#include "rec_index.h"
#include "rec_log.h"

void rec_usage_compact(FILE *f)
{
	fprintf(f,
		"usage: deter compact [-d DIR] [-z N] [ID|FILE]...\n"
		"\n"
		"Compress logs again, harder: deter record compresses for little CPU,\n"
		"this for little disk (offline, e.g. before archiving). Every log in\n"
		"DIR, or the ones given. A log is read and decoded whole first and\n"
		"replaced, atomically, only by a smaller one with the same events.\n"
		"\n"
		"  -d, --dir DIR        log directory (default ./%s)\n"
		"  -z, --zstd-level N   1 to 19 (default 19)\n",
		REC_DEFAULT_DIR);
}

/* Compact one log, counted in @n; say why not in one line. Return: 0, or 1. */
static int rec_compact_one(const char *path, int level, size_t *n,
			   size_t *before, size_t *after)
{
	struct deter_log_header h;
	size_t b = 0, a = 0;
	char *err = NULL;

	if (rec_log_compact(path, level, &b, &a, &err)) {
		deter_fail("%s", err ? err : "cannot compact");
		free(err);
		return 1;
	}
	(*n)++;
	*before += b;
	*after += a;
	if (a == b)
		return 0;
	/* Rewritten: its index record names the old file. */
	if (rec_log_read_header(path, &h, &err) || rec_index_add(path, &h, &err)) {
		deter_fail("%s (compacted, but not indexed)", err);
		free(err);
		return 1;
	}
	return 0;
}

int rec_cmd_compact(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "zstd-level", required_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR;
	int level = 19;
	size_t before = 0, after = 0, n = 0, ne = 0, i;
	struct rec_entry *e = NULL;
	int bad = 0, scanned = 0, other, c;
	char *path;

	while ((c = deter_getopt(argc, argv, "d:z:h", opts)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'z':
			if (rec_cli_zstd_level(optarg, &level))
				return 2;
			break;
		case 'h':
			rec_usage_compact(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind == argc) {
		if (rec_cli_scan(dir, 0, &e, &ne, &bad))
			return 1;
		for (i = 0; i < ne; i++)
			bad |= rec_compact_one(e[i].path, level, &n, &before, &after);
		rec_entries_free(e, ne);
	} else {
		/* Ids are looked up in one scan of @dir, files taken as named. */
		for (i = optind; i < (size_t)argc; i++) {
			if (!scanned && !rec_cli_is_path(argv[i])) {
				if (rec_cli_scan(dir, 0, &e, &ne, &other))
					return 1;
				scanned = 1;
			}
			path = rec_cli_is_path(argv[i]) ? strdup(argv[i]) :
			       rec_cli_find_in(dir, e, ne, argv[i]);
			if (!path) {
				bad = 1;
				continue;
			}
			bad |= rec_compact_one(path, level, &n, &before, &after);
			free(path);
		}
		rec_entries_free(e, ne);
	}
	printf("%zu log%s: %zu B -> %zu B (%.1f %%)%s\n", n, n == 1 ? "" : "s",
	       before, after, before ? 100.0 * after / before : 100.0,
	       bad ? "; the ones named above left as they were" : "");
	return bad ? 1 : 0;
}

void rec_usage_index(FILE *f)
{
	fprintf(f,
		"usage: deter index [-d DIR]\n"
		"\n"
		"Write DIR/%s anew from the headers of the logs in DIR. deter record\n"
		"and deter compact keep it up to date as they write logs; deter ls\n"
		"and deter replay read it instead of every log. A log it does not\n"
		"describe as the log is now is read directly, so this only saves\n"
		"time: after copying logs in, or if the index was damaged.\n"
		"\n"
		"  -d, --dir DIR  log directory (default ./%s)\n",
		REC_INDEX_NAME, REC_DEFAULT_DIR);
}

int rec_cmd_index(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR;
	char *err = NULL;
	size_t n;
	int c, bad = 0;

	while ((c = deter_getopt(argc, argv, "d:h", opts)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'h':
			rec_usage_index(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc)
		return deter_usage_fail("unexpected argument '%s'", argv[optind]);
	if (rec_index_rebuild(dir, &n, rec_cli_report, &bad, &err))
		return deter_fail_err(&err);
	printf("%s/%s: %zu log%s%s\n", dir, REC_INDEX_NAME, n, n == 1 ? "" : "s",
	       bad ? "; the ones named above left out" : "");
	return bad;
}
