/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Replay captures with the original run's times (replay_pcap.c).
 */
#ifndef _REPLAY_PCAP_H
#define _REPLAY_PCAP_H

struct rec_log;

int replay_pcap_retime(const char *path, const struct rec_log *self,
		       const struct rec_log *peer, char **err);

#endif /* _REPLAY_PCAP_H */
