/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter.ko's replay side in debugfs: loading scripts
 * (deter/replay), arming and stopping (deter/control), and reading each
 * script's progress back. Stateless; errors come back as a message in
 * *err (caller frees), one line, saying what to do where it can.
 */
#ifndef _REPLAY_KMOD_H
#define _REPLAY_KMOD_H

#include <stddef.h>
#include <stdint.h>

/* The state of one script, from one line of deter/replay. */
struct replay_status {
	char line[256];		/* the whole line, without newline */
	char state[16];		/* loaded, running, done or diverged */
	uint32_t done;		/* events replayed */
	uint32_t nevents;	/* events in the script */
	uint32_t diverged_nr;	/* k-th divergence of all scripts', 0: none */
	const char *msg;	/* points into line: "-" or why it diverged */
};

const char *replay_kmod_dir(void);
int replay_kmod_check(char **err);
int replay_kmod_load(const void *script, size_t len, const char *what,
		     char **err);
int replay_kmod_control(const char *cmd, char **err);
int replay_kmod_read(char **text, char **err);
int replay_kmod_parse(const char *text, const char *local,
		      struct replay_status *st);

#endif /* _REPLAY_KMOD_H */
