/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's show subcommand. Takes its argv (argv[0] =
 * "show"), prints, and returns the exit status (0 ok, 1 failure, 2 usage).
 */
#ifndef _REC_SHOW_H
#define _REC_SHOW_H

#include <stdio.h>

int rec_cmd_show(int argc, char **argv);
void rec_usage_show(FILE *f);

#endif /* _REC_SHOW_H */
