/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's messages on stderr and its option parsing, shared
 * by every subcommand so that all of them speak one format:
 *
 *   deter CMD: WHERE: what		an error or a note; WHERE, when there
 *					is one, points into the input
 *					(t.dlog:500, a path, an option)
 *   deter CMD: what			the rest
 *   Try 'deter CMD --help'.		second line of a usage error
 *
 * CMD is the subcommand deter_err_cmd_set() named (the dispatcher sets it
 * before running one); without one the prefix is plain "deter". Single
 * threaded; forked children inherit the name.
 */
#ifndef _DETER_ERR_H
#define _DETER_ERR_H

#include <getopt.h>

void deter_err_cmd_set(const char *cmd);
void deter_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int deter_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int deter_fail_err(char **err);
int deter_usage_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int deter_getopt(int argc, char **argv, const char *shortopts,
		 const struct option *longopts);

#endif /* _DETER_ERR_H */
