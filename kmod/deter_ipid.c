// SPDX-License-Identifier: GPL-2.0
/*
 * IP ID arithmetic for detecting what the network did to a connection.
 *
 * Since Linux 6.x a connected TCP socket numbers its packets with a
 * per-socket IP ID counter (inet->inet_id) that starts at a random value
 * and advances by the number of segments of each transmitted skb, so the
 * receiver sees consecutive IDs unless the network dropped or reordered
 * packets (DETER §4). IDs are 16 bits and wrap every 65536 packets; deter
 * works on a 64-bit index instead, extended from the last index seen:
 *
 *   extend(ref, id) = the value x with (x mod 2^16) == id nearest to ref
 *
 * Nearest means within [ref - 2^15, ref + 2^15), so the extension is
 * correct while reordering and loss bursts stay below 32768 packets.
 */
#include <kunit/visibility.h>
#include <linux/export.h>

#include "deter_ipid.h"

/**
 * deter_ipid_extend() - extend a 16-bit IP ID to a 64-bit packet index
 * @ref: an index near the expected one (the last extended index)
 * @id: the IP ID seen on the wire
 *
 * Return: the index whose low 16 bits are @id, nearest to @ref; never
 * below 0 (an ID just below a @ref under 2^15 extends upwards).
 */
u64 deter_ipid_extend(u64 ref, u16 id)
{
	s16 delta = (s16)(id - (u16)ref);

	if (delta < 0 && ref < (u64)-delta)
		return ref + (u16)delta;
	return ref + delta;
}
EXPORT_SYMBOL_IF_KUNIT(deter_ipid_extend);

/**
 * deter_ipid_classify() - compare an arrival with the expected index
 * @expected: the index expected next (one past the highest seen)
 * @idx: the arrival's extended index
 *
 * Return: the class of the arrival, see enum deter_ipid_class.
 */
enum deter_ipid_class deter_ipid_classify(u64 expected, u64 idx)
{
	if (idx == expected)
		return DETER_IPID_NEXT;
	return idx > expected ? DETER_IPID_GAP : DETER_IPID_LATE;
}
EXPORT_SYMBOL_IF_KUNIT(deter_ipid_classify);
