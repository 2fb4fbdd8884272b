// SPDX-License-Identifier: GPL-2.0
/*
 * deter: the command-line front end.
 *
 *   deter [--help | --version] COMMAND [ARGS]
 *
 * Dispatches to one subcommand per job: record (arm deter.ko and write
 * per-connection logs), ls and show (find and read them), compact and
 * index (rewrite a log directory), replay (re-execute one connection on
 * a two-host testbed). Each subcommand owns its options and --help; all
 * of them print through log/deter_err.c, which this names the running
 * one for ("deter show: t.dlog:500: ...").
 * Exit status: 0 ok, 1 failure, 2 usage.
 *
 *   main(): COMMAND -> deter_cmds[] -> deter_err_cmd_set(COMMAND)
 *        |
 *        +--> recorder/rec_record.c   record
 *        +--> recorder/rec_ls.c       ls
 *        +--> recorder/rec_show.c     show
 *        +--> recorder/rec_compact.c  compact, index
 *        +--> replay/replay_main.c    replay
 *
 * Below those: the library in log/ (rec_log.h: the log format and the
 * directory's index; deter_err.h: messages and option parsing), which
 * both sides use and which includes neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "deter_abi.h"
#include "deter_err.h"
#include "rec_compact.h"
#include "rec_log.h"
#include "rec_ls.h"
#include "rec_record.h"
#include "rec_show.h"
#include "replay_main.h"

#ifndef DETER_VERSION
#define DETER_VERSION "0.1.0"
#endif

struct deter_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);	/* argv[0] is the command */
	void (*usage)(FILE *f);			/* its --help */
};

static const char *prog = "deter";

/* The options of version and help: --help alone. */
static const struct option deter_help_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void deter_version(void)
{
	printf("deter %s (log format %d, zstd %s)\n", DETER_VERSION,
	       DETER_ABI_VERSION, ZSTD_versionString());
}

static void deter_usage_version(FILE *f)
{
	fprintf(f, "usage: %s version\n\nPrint version information.\n", prog);
}

static int deter_cmd_version(int argc, char **argv)
{
	int c;

	while ((c = deter_getopt(argc, argv, "h", deter_help_opts)) != -1) {
		if (c != 'h')
			return 2;
		deter_usage_version(stdout);
		return 0;
	}
	if (optind != argc)
		return deter_usage_fail("unexpected argument '%s'", argv[optind]);
	deter_version();
	return 0;
}

static int deter_cmd_help(int argc, char **argv);
static void deter_usage_help(FILE *f);

static const struct deter_cmd deter_cmds[] = {
	{ "record", "record TCP connections into per-connection logs",
	  rec_cmd_record, rec_usage_record },
	{ "ls", "list recorded connections", rec_cmd_ls, rec_usage_ls },
	{ "show", "print one connection's log as events",
	  rec_cmd_show, rec_usage_show },
	{ "compact", "compress logs again, for less disk",
	  rec_cmd_compact, rec_usage_compact },
	{ "index", "write a log directory's index anew",
	  rec_cmd_index, rec_usage_index },
	{ "replay", "replay one connection deterministically",
	  replay_cmd_replay, replay_usage_replay },
	{ "version", "print version information",
	  deter_cmd_version, deter_usage_version },
	{ "help", "show help for deter or one of its commands",
	  deter_cmd_help, deter_usage_help },
};

static const struct deter_cmd *deter_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(deter_cmds); i++)
		if (!strcmp(deter_cmds[i].name, name))
			return &deter_cmds[i];
	return NULL;
}

static void deter_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s [--help | --version] COMMAND [ARGS]\n\n"
		"Deterministic TCP record and replay.\n\nCommands:\n", prog);
	for (i = 0; i < ARRAY_SIZE(deter_cmds); i++)
		fprintf(f, "  %-8s %s\n", deter_cmds[i].name, deter_cmds[i].summary);
	fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n", prog);
}

static void deter_usage_help(FILE *f)
{
	fprintf(f, "usage: %s help [COMMAND]\n\nShow help for deter or COMMAND.\n", prog);
}

static int deter_cmd_help(int argc, char **argv)
{
	const struct deter_cmd *cmd;
	int c;

	while ((c = deter_getopt(argc, argv, "h", deter_help_opts)) != -1) {
		if (c != 'h')
			return 2;
		deter_usage_help(stdout);
		return 0;
	}
	if (optind == argc) {
		deter_usage(stdout);
		return 0;
	}
	if (argc - optind > 1)
		return deter_usage_fail("unexpected argument '%s'", argv[optind + 1]);
	cmd = deter_cmd_find(argv[optind]);
	if (!cmd)
		return deter_usage_fail("unknown command '%s'", argv[optind]);
	cmd->usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const struct deter_cmd *cmd;

	if (argc < 2)
		return deter_usage_fail("no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		deter_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		deter_version();
		return 0;
	}
	if (argv[1][0] == '-')
		return deter_usage_fail("unknown option '%s'", argv[1]);
	cmd = deter_cmd_find(argv[1]);
	if (!cmd)
		return deter_usage_fail("unknown command '%s'", argv[1]);
	deter_err_cmd_set(cmd->name);
	return cmd->run(argc - 1, argv + 1);
}
