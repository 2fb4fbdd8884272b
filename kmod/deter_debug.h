/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's debugging output, the module parameter
 * debug_clock: a line per TCP clock read, checkpoint, host check and
 * write-timer turn of a recorded or replayed socket, so that a
 * recording's kernel log and its replay's can be diffed to the first
 * read that differs.
 *
 * Callers test deter_debug_clock first (unlikely()); the functions print
 * with pr_info() from any context and never sleep.
 */
#ifndef _DETER_DEBUG_H
#define _DETER_DEBUG_H

#include <linux/types.h>
#include <net/deter.h>

struct sock;

extern bool deter_debug_clock;

void deter_debug_clock_read(const char *what, const struct sock *sk, u32 seq,
			    unsigned long jif);
void deter_debug_state(const char *what, const struct sock *sk, u32 seq);
void deter_debug_host(const char *what, const struct sock *sk,
		      enum deter_value check, u32 run, u64 val, u32 at,
		      unsigned int skip);
void deter_debug_timer(struct sock *sk, enum deter_site site, bool replay,
		       bool run);

/* Whether @what is one of the host's answers deter_debug_host() traces. */
static inline bool deter_debug_is_host(enum deter_value what)
{
	return what == DETER_VAL_XMIT || what == DETER_VAL_WAIT_LEFT ||
	       what == DETER_VAL_NOSPACE || what == DETER_VAL_SIGNAL;
}

#endif /* _DETER_DEBUG_H */
