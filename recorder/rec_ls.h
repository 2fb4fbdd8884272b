/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's ls subcommand. Takes its argv (argv[0] = "ls"),
 * prints, and returns the exit status (0 ok, 1 some log unreadable,
 * 2 usage).
 */
#ifndef _REC_LS_H
#define _REC_LS_H

#include <stdio.h>

int rec_cmd_ls(int argc, char **argv);
void rec_usage_ls(FILE *f);

#endif /* _REC_LS_H */
