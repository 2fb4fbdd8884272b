/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's compact and index subcommands. Each takes its
 * argv (argv[0] = the subcommand), prints, and returns the exit status
 * (0 ok, 1 some log left as it was, 2 usage).
 */
#ifndef _REC_COMPACT_H
#define _REC_COMPACT_H

#include <stdio.h>

int rec_cmd_compact(int argc, char **argv);
void rec_usage_compact(FILE *f);
int rec_cmd_index(int argc, char **argv);
void rec_usage_index(FILE *f);

#endif /* _REC_COMPACT_H */
