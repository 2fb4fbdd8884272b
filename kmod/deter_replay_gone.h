/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the replay's hold on segments for a replayed socket that
 * TCP's lookup no longer finds (deter_replay_gone.c).
 */
#ifndef _DETER_REPLAY_GONE_H
#define _DETER_REPLAY_GONE_H

#include <linux/types.h>

struct deter_rpl;

bool deter_rpl_gone_dead(struct deter_rpl *rpl, u16 id, bool ctl);
int deter_rpl_gone_start(void);
void deter_rpl_gone_exit(void);

#endif /* _DETER_REPLAY_GONE_H */
