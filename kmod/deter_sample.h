/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for rate-based send-time sampling (DETER Algorithm 1).
 *
 * Not locked: one sampler belongs to one direction of one connection and
 * is only touched by whoever serialises that connection's transmits.
 */
#ifndef _DETER_SAMPLE_H
#define _DETER_SAMPLE_H

#include <linux/math64.h>
#include <linux/time64.h>
#include <linux/types.h>

/* Gaps are kept in Q10 fixed point: 1/1024 ns resolution. */
#define DETER_GAP_SHIFT 10

/**
 * struct deter_sample - one recorded sample: packets from @idx up to the
 * next sample's index were sent at @ns + (i - @idx) * @gap_q10 / 1024
 */
struct deter_sample {
	u64 idx;	/* packet index within the flow */
	u64 ns;		/* its send time, ns */
	u64 gap_q10;	/* inferred time between packets, ns << 10 */
};

/*
 * Send times and the TCP clock are logged in whole microseconds: the
 * nanoseconds below are noise the log would pay for. A sampler with a
 * threshold under 1 us keeps nanoseconds (deter_sampler_restart()).
 */
static inline u64 deter_floor_us(u64 ns)
{
	u32 rem;

	div_u64_rem(ns, NSEC_PER_USEC, &rem);
	return ns - rem;
}

struct deter_sampler {
	u64 s_idx;	/* index of the current sample's first packet */
	u64 s_ns;	/* its send time, ns */
	u64 lo_q10;	/* lowest gap consistent with every packet so far */
	u64 hi_q10;	/* highest such gap; U64_MAX until a second packet */
	u32 th_ns;	/* allowed inference error, ns */
	bool primed;	/* a first packet has been seen */
};

void deter_sampler_init(struct deter_sampler *s, u32 th_ns);
bool deter_sampler_add(struct deter_sampler *s, u64 idx, u64 ns,
		       struct deter_sample *out);
bool deter_sampler_flush(struct deter_sampler *s, struct deter_sample *out);
u64 deter_sample_infer(const struct deter_sample *smp, u64 idx);

#endif /* _DETER_SAMPLE_H */
