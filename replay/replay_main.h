/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's replay subcommand. Takes its argv (argv[0] =
 * "replay"), prints, and returns the exit status (0 verified, 1 failure
 * or divergence, 2 usage).
 */
#ifndef _REPLAY_MAIN_H
#define _REPLAY_MAIN_H

#include <stdio.h>

int replay_cmd_replay(int argc, char **argv);
void replay_usage_replay(FILE *f);

#endif /* _REPLAY_MAIN_H */
