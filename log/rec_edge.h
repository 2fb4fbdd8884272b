/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the edges of a connection's IP ID series: what one log
 * knows of where the peer's series began and ended at this end, and the
 * packets the pair of logs, together, shows lost there. Plain functions
 * on caller-owned data; no locking.
 */
#ifndef _REC_EDGE_H
#define _REC_EDGE_H

#include <stdint.h>

#include "deter_abi.h"
#include "rec_ev.h"

/* What the events of one log say of the series' edges, so far. */
struct rec_edge {
	uint64_t rx_min;	/* lowest index of the peer's accounted for */
	uint64_t rx_end;	/* one past the highest that arrived */
	uint16_t ipid_end;	/* this end's next IP ID at its close */
	uint32_t edges;		/* DETER_EDGE_* bits */
};

void rec_edge_add(struct rec_edge *ed, const struct rec_ev *e);
void rec_edge_fill(const struct rec_edge *ed, struct deter_log_header *h);
int rec_edge_pair(const struct deter_log_header *a,
		  const struct deter_log_header *b);
uint32_t rec_edge_head(const struct deter_log_header *me,
		       const struct deter_log_header *peer);
uint32_t rec_edge_tail(const struct deter_log_header *me,
		       const struct deter_log_header *peer);

#endif /* _REC_EDGE_H */
