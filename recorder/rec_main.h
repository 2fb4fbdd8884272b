/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the recording side's subcommands of deter: record, ls,
 * show, compact and index. Each takes its argv (argv[0] = the subcommand), prints, and
 * returns the exit status (0 ok, 1 failure, 2 usage).
 */
#ifndef _REC_MAIN_H
#define _REC_MAIN_H

#include <stdio.h>

int rec_cmd_record(int argc, char **argv);
int rec_cmd_ls(int argc, char **argv);
int rec_cmd_show(int argc, char **argv);
int rec_cmd_compact(int argc, char **argv);
int rec_cmd_index(int argc, char **argv);
void rec_usage_compact(FILE *f);
void rec_usage_index(FILE *f);
void rec_usage_record(FILE *f);
void rec_usage_ls(FILE *f);
void rec_usage_show(FILE *f);

#endif /* _REC_MAIN_H */
