/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's debugfs files deter/control and deter/stats, the
 * switches of recording and replay and the counters of both.
 *
 * Process context only. Control writes are serialised by a mutex of
 * their own; what they switch is read by the hooks without it.
 */
#ifndef _DETER_CTL_H
#define _DETER_CTL_H

struct dentry;

void deter_ctl_init(struct dentry *dir);

#endif /* _DETER_CTL_H */
