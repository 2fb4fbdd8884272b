// SPDX-License-Identifier: GPL-2.0
/*
 * Rate-based sampling of packet send times (DETER §3.3, Algorithm 1).
 *
 * Recording every send time is too expensive, and recording one time per
 * burst has unbounded error when the rate changes inside a burst. Instead
 * a sample (s.idx, s.ns, gap) is kept only when no single gap can place
 * every packet since the last sample within th_ns of its true send time:
 *
 *   inferred(p) = s.ns + (p.idx - s.idx) * gap
 *   |inferred(p) - p.ns| <= th  <=>  gap in [(dt - th) / n, (dt + th) / n]
 *                                    with n = p.idx - s.idx, dt = p.ns - s.ns
 *
 * The sampler keeps the intersection [lo, hi] of these intervals over all
 * packets since s. A new packet p whose interval misses [lo, hi] closes
 * the sample with a gap from the middle of [lo, hi] and starts a new one
 * at p:
 *
 *      packet p --> interval(p) ∩ [lo, hi] != {} --yes--> narrow [lo, hi]
 *                                 |
 *                                 no --> emit (s, gap(lo, hi)); s = p;
 *                                        [lo, hi] = [0, inf)
 *
 * Gaps are Q10 fixed point, with lo rounded up and hi rounded down, so
 * that rounding never widens the interval; inference truncates, adding
 * less than 1 ns. A sample's own time is a whole microsecond (see
 * deter_sampler_restart()).
 *
 * This is the paper's algorithm with times per packet instead of packets
 * per time: the same intervals, inverted, with no division by a possibly
 * zero time difference. It runs at transmit time for every packet: O(1),
 * no allocation, no locking.
 */
#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/export.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>

#include "deter_sample.h"

/**
 * deter_sampler_init() - start sampling a flow
 * @s: the sampler
 * @th_ns: largest allowed error of an inferred send time, ns
 */
void deter_sampler_init(struct deter_sampler *s, u32 th_ns)
{
	*s = (struct deter_sampler){ .th_ns = th_ns, .hi_q10 = U64_MAX };
}
EXPORT_SYMBOL_IF_KUNIT(deter_sampler_init);

/*
 * A sample starts at its first packet's send time rounded down to a whole
 * microsecond when the threshold allows it (the log pays for no finer
 * time): that packet is then off by less than 1 us, and every later one
 * is still held to the threshold, since the intervals are taken from the
 * rounded start.
 */
static void deter_sampler_restart(struct deter_sampler *s, u64 idx, u64 ns)
{
	s->s_idx = idx;
	s->s_ns = s->th_ns >= NSEC_PER_USEC ? deter_floor_us(ns) : ns;
	s->lo_q10 = 0;
	s->hi_q10 = U64_MAX;
	s->primed = true;
}

/*
 * The gap to record: any in [lo, hi] keeps every packet within the
 * threshold. Take the middle half around the midpoint, so that errors
 * stay within 3/4 of what the threshold allows (the sample's own packet:
 * within its rounding to a microsecond), and in it the value with
 * the most trailing zero bits: the log stores gaps without them, so a
 * round gap costs 1-2 bytes instead of 4-5.
 */
static u64 deter_sampler_gap(u64 lo, u64 hi)
{
	u64 q = (hi - lo) / 4, a = lo + q, b = hi - q;

	if (a == b)
		return a;
	/* a and b agree above their highest differing bit, which b has. */
	return b & ~((1ULL << (fls64(a ^ b) - 1)) - 1);
}

static void deter_sampler_emit(const struct deter_sampler *s,
			       struct deter_sample *out)
{
	out->idx = s->s_idx;
	out->ns = s->s_ns;
	/* A lone packet has no gap to speak of. */
	out->gap_q10 = s->hi_q10 == U64_MAX ? s->lo_q10 :
		       deter_sampler_gap(s->lo_q10, s->hi_q10);
}

/**
 * deter_sampler_add() - account for one sent packet
 * @s: the sampler
 * @idx: the packet's index in the flow; strictly increasing
 * @ns: its send time, ns
 * @out: filled with the sample that @idx closed, if any
 *
 * A packet whose index does not advance is ignored: it adds nothing the
 * current sample does not already cover.
 *
 * Return: true if @out was filled and must be recorded.
 */
bool deter_sampler_add(struct deter_sampler *s, u64 idx, u64 ns,
		       struct deter_sample *out)
{
	u64 n, dt, lo, hi;

	if (!s->primed) {
		deter_sampler_restart(s, idx, ns);
		return false;
	}
	if (idx <= s->s_idx)
		return false;

	n = idx - s->s_idx;
	dt = ns > s->s_ns ? ns - s->s_ns : 0;
	lo = dt > s->th_ns ? dt - s->th_ns : 0;
	lo = div64_u64((lo << DETER_GAP_SHIFT) + n - 1, n);
	hi = div64_u64((dt + s->th_ns) << DETER_GAP_SHIFT, n);

	if (lo <= s->hi_q10 && hi >= s->lo_q10) {
		s->lo_q10 = max(s->lo_q10, lo);
		s->hi_q10 = min(s->hi_q10, hi);
		return false;
	}
	deter_sampler_emit(s, out);
	deter_sampler_restart(s, idx, ns);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(deter_sampler_add);

/**
 * deter_sampler_flush() - close the flow's last sample
 * @s: the sampler
 * @out: filled with the last sample
 *
 * Return: true if @out was filled (false when no packet was ever added).
 */
bool deter_sampler_flush(struct deter_sampler *s, struct deter_sample *out)
{
	if (!s->primed)
		return false;
	deter_sampler_emit(s, out);
	s->primed = false;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(deter_sampler_flush);

/**
 * deter_sample_infer() - inferred send time of a packet a sample covers
 * @smp: the sample
 * @idx: the packet's index, at least @smp->idx
 *
 * Return: the inferred send time, ns.
 */
u64 deter_sample_infer(const struct deter_sample *smp, u64 idx)
{
	return smp->ns + (((idx - smp->idx) * smp->gap_q10) >> DETER_GAP_SHIFT);
}
EXPORT_SYMBOL_IF_KUNIT(deter_sample_infer);
