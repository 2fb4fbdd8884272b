// SPDX-License-Identifier: GPL-2.0
/*
 * deter's one message printer and option-parsing skeleton.
 *
 * Every line deter writes to stderr starts with "deter CMD: ", CMD being
 * the subcommand that runs; what follows names the place in the input
 * first where there is one (a log and byte offset "t.dlog:500", a path,
 * an option), then what is wrong. Exit statuses follow from the printer
 * used: deter_fail() returns 1 (failure), deter_usage_fail() 2 (usage,
 * with a pointer to --help on a second line).
 *
 * Each subcommand parses its options with one loop:
 *
 *   while ((c = deter_getopt(argc, argv, "d:h", opts)) != -1) {
 *           switch (c) {
 *           case 'd': ...; break;
 *           case 'h': usage(stdout); return 0;	  --help: stdout, exit 0
 *           default: return 2;			  said by deter_getopt()
 *           }
 *   }
 *
 * deter_getopt() is getopt_long() with its own messages off: an unknown
 * option or a missing argument becomes one usage error in the format
 * above, never getopt's "deter: unrecognized option" beside ours.
 */
#include "deter_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *deter_err_cmd;	/* the running subcommand, or NULL */

/**
 * deter_err_cmd_set() - name the subcommand messages come from
 * @cmd: "record", "show", ...; NULL for deter itself
 */
void deter_err_cmd_set(const char *cmd)
{
	deter_err_cmd = cmd;
}

static void deter_vwarn(const char *fmt, va_list ap)
{
	if (deter_err_cmd)
		fprintf(stderr, "deter %s: ", deter_err_cmd);
	else
		fputs("deter: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/**
 * deter_warn() - say something on stderr, as "deter CMD: " and one line
 * @fmt: printf format of the line, without its newline
 */
void deter_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	deter_vwarn(fmt, ap);
	va_end(ap);
}

/**
 * deter_fail() - say an error on stderr
 * @fmt: printf format of the line, without its newline
 *
 * Return: 1, the exit status of a failure.
 */
int deter_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	deter_vwarn(fmt, ap);
	va_end(ap);
	return 1;
}

/**
 * deter_fail_err() - say the error a module returned, and free it
 * @err: its message (NULL: out of memory); set to NULL
 *
 * Return: 1, the exit status of a failure.
 */
int deter_fail_err(char **err)
{
	deter_fail("%s", *err ? *err : "out of memory");
	free(*err);
	*err = NULL;
	return 1;
}

/**
 * deter_usage_fail() - say a usage error, and where help is
 * @fmt: printf format of the error, without its newline
 *
 * Return: 2, the exit status of a usage error.
 */
int deter_usage_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	deter_vwarn(fmt, ap);
	va_end(ap);
	if (deter_err_cmd)
		fprintf(stderr, "Try 'deter %s --help'.\n", deter_err_cmd);
	else
		fputs("Try 'deter --help'.\n", stderr);
	return 2;
}

/**
 * deter_getopt() - the next option of a subcommand's command line
 * @argc: argument count, argv[0] being the subcommand
 * @argv: the arguments
 * @shortopts: getopt_long()'s short options (without a leading ':')
 * @longopts: getopt_long()'s long options
 *
 * getopt_long() from argv[1] on, permuting as it does, but an unknown
 * option, an argument given to an option that takes none, or a missing
 * argument is said here as a usage error.
 *
 * Return: the option's value, -1 after the last option, or '?' after a
 * usage error (said; the caller returns 2).
 */
int deter_getopt(int argc, char **argv, const char *shortopts,
		 const struct option *longopts)
{
	char opts[64];
	const char *arg;
	int c;

	/* ':' first: a missing argument is ':', told apart from '?'. */
	snprintf(opts, sizeof(opts), ":%s", shortopts);
	opterr = 0;
	c = getopt_long(argc, argv, opts, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	arg = argv[optind - 1];
	if (strncmp(arg, "--", 2)) {
		/* A short option, perhaps one of several in one argument. */
		if (c == ':')
			deter_usage_fail("option '-%c' needs an argument", optopt);
		else
			deter_usage_fail("unknown option '-%c'", optopt);
	} else if (c == ':') {
		deter_usage_fail("option '%s' needs an argument", arg);
	} else if (optopt && strchr(arg, '=')) {
		deter_usage_fail("option '%.*s' takes no argument",
				 (int)(strchr(arg, '=') - arg), arg);
	} else {
		deter_usage_fail("unknown option '%s'", arg);
	}
	return '?';
}
