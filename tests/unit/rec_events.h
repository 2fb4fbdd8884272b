/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the log tests' event generator: make_events() fills up to
 * NEV events of a plausible connection (runs of RX and LOCK, calls and
 * their returns, samples against clock reads, NET, CONFIG and VALUE
 * events, checkpoints, and holes where events were lost), the same
 * sequence each run from a fixed seed. Single-threaded, like the tests.
 */
#ifndef _REC_EVENTS_H
#define _REC_EVENTS_H

#include "rec_log.h"

#include <string.h>

#define NEV 5000

static uint32_t unit_rand_state = 12345;

static uint32_t unit_rand(void)
{
	unit_rand_state = unit_rand_state * 1103515245 + 12345;
	return unit_rand_state >> 8;
}

/* A plausible connection: runs of RX and LOCK, calls, samples, states. */
static size_t make_events(struct rec_ev *evs, struct rec_state *states,
			  size_t *nstates)
{
	uint64_t rx = 40000, smp = 1000, ns = 5000000, clk = 0;
	uint32_t seq = 1;
	size_t n = 0, j;

	*nstates = 0;
	while (n < NEV - 2) {
		struct rec_ev *e = &evs[n];
		uint32_t r = unit_rand() % 16;

		memset(e, 0, sizeof(*e));
		e->seq = seq++;
		if (r < 6) {
			e->type = DETER_EV_RX;
			e->a = r == 0 ? rx + 3 : rx;
			e->b = r == 1 ? DETER_RX_OWNED : 0;
			e->c = 1 + (r == 2);
			rx = e->a + e->c;
		} else if (r < 8) {
			e->type = DETER_EV_LOCK;
			e->sub = unit_rand() % DETER_LOCK_MAX;
			e->a = unit_rand() % 2;
		} else if (r < 10) {
			e->type = DETER_EV_CALL;
			e->sub = unit_rand() % 2;
			e->a = r == 8 ? 16384 : unit_rand() % 100000;
			e->b = 105;
			evs[++n] = (struct rec_ev){ .seq = seq++, .type = DETER_EV_CALL_DONE,
						    .sub = e->sub, .a = (uint64_t)-11 };
		} else if (r < 12) {
			e->type = DETER_EV_SAMPLE;
			smp += 1 + unit_rand() % 50;
			ns += unit_rand() % 100000;
			e->a = smp;
			e->b = ns - (r == 11 ? 700 : 0);
			/* Most samples: some us after a clock read. */
			if (clk && unit_rand() % 4)
				e->b = clk + unit_rand() % 300 * 1000 +
				       (unit_rand() % 8 ? 0 : 123);
			/* Gaps deter.ko rounds, and the largest. */
			e->c = r == 10 ? (uint64_t)unit_rand() << 40 : unit_rand();
		} else if (r < 13) {
			e->type = DETER_EV_NET;
			e->sub = unit_rand() % DETER_NET_MAX;
			e->a = rx - unit_rand() % 5;
			e->b = 1 + unit_rand() % 3;
			if (e->sub == DETER_NET_ICMP) {
				e->a = 3 << 8 | 4;
				e->b = (uint64_t)1400 << 32 | unit_rand();
			}
		} else if (r < 14 && unit_rand() % 2) {
			e->type = DETER_EV_CONFIG;
			e->sub = unit_rand() % DETER_CFG_MAX;
			e->a = unit_rand();
		} else if (r < 14) {
			e->type = DETER_EV_VALUE;
			e->sub = unit_rand() % DETER_V_MAX;
			e->a = unit_rand() % 1000;
			if (e->sub == DETER_V_CLOCK) {
				/* Whole us as deter.ko logs them, or any ns. */
				e->a = unit_rand() % 5000 * (unit_rand() % 2 ? 1000 : 1);
				clk += e->a;
			}
			if (e->sub == DETER_V_MEM)
				e->b = unit_rand() % (2 * DETER_MEM_MAX);
			else if (deter_value_has_b(e->sub))
				e->b = unit_rand();
		} else {
			e->type = DETER_EV_STATE;
			e->sub = r == 15;
			e->a = *nstates;
			for (j = 0; j < DETER_ST_MAX; j++)
				states[*nstates].v[j] = unit_rand() % 1000000;
			(*nstates)++;
		}
		if (unit_rand() % 50 == 0)
			seq += 3;	/* a hole: events lost */
		n++;
	}
	return n;
}

#endif /* _REC_EVENTS_H */
