/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for recording's settings: the configuration a recorded
 * connection runs under that TCP reads but does not compute (its socket
 * options, its namespace's sysctls, its route's metrics, the congestion
 * controls' module parameters), logged as CONFIG events, and the
 * checkpoints at which changes to them are looked for.
 *
 * Called under the socket lock of a recorded socket (deter_rec_get());
 * deter_rec_param_set() in process context, under the control file's
 * mutex. Nothing here sleeps or allocates.
 */
#ifndef _DETER_REC_SETTINGS_H
#define _DETER_REC_SETTINGS_H

#include <linux/types.h>

struct deter_sock;
struct sock;

void deter_rec_settings(struct deter_sock *ds, struct sock *sk);
void deter_rec_settings_check(struct deter_sock *ds, struct sock *sk,
			      bool force);
void deter_rec_checkpoint(struct deter_sock *ds, struct sock *sk, u32 seq);
void deter_rec_config(struct deter_sock *ds, const struct sock *sk);
void deter_rec_reads_seen(struct deter_sock *ds, const struct sock *sk);
int deter_rec_param_set(char *p);

#endif /* _DETER_REC_SETTINGS_H */
