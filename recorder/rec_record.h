/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's record subcommand. Takes its argv (argv[0] =
 * "record"), prints, and returns the exit status (0 ok, 1 failure or
 * events lost, 2 usage).
 */
#ifndef _REC_RECORD_H
#define _REC_RECORD_H

#include <stdio.h>

int rec_cmd_record(int argc, char **argv);
void rec_usage_record(FILE *f);

#endif /* _REC_RECORD_H */
