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
 *
 * The series' first packets (Linux 6.12, net/ipv4): connect() draws the
 * active end's counter and its SYN takes the first ID, each SYN sent
 * again the next, the handshake's ACK the one after. The SYN-ACK goes
 * out of the listener (ip_build_and_send_pkt(): ID 0 with DF), and the
 * passive end's child draws its own counter (tcp_v4_syn_recv_sock()), so
 * the active end cannot know the passive end's first ID, while the
 * passive end knows the active end's next one after the SYN it took:
 *
 *   head gap = [syn + 1, first arrival)     when no later SYN came
 *
 * A time-wait socket's answers and resets for no socket come from the
 * host's control socket (ip_send_unicast_reply(): ID 0), outside any
 * series.
 */
#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/string.h>

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

/**
 * deter_ipid_head_gap() - the packets lost before a passive end's first
 * @syn_id: the IP ID of the SYN its handshake began with
 * @again: the IDs of SYNs the peer sent again that reached this host
 *	before the end existed
 * @nagain: how many (at most DETER_IPID_SYN_AGAIN)
 * @first_id: the IP ID of the segment that created it
 * @gaps: set to the runs lost, in index order (room for @nagain + 1)
 *
 * The peer numbered its packets after the SYN from @syn_id + 1 on; each
 * ID before @first_id was taken by a SYN in @again, or by a packet that
 * never came. Indices count back from @first_id's, which is @first_id.
 *
 * Return: how many runs; 0 also when the gap is not a plausible loss
 * (@first_id at or before @syn_id, 2^15 or more apart). A run that would
 * start below index 0 is left out.
 */
unsigned int deter_ipid_head_gap(u16 syn_id, const u16 *again,
				 unsigned int nagain, u16 first_id,
				 struct deter_ipid_run *gaps)
{
	u16 back[DETER_IPID_SYN_AGAIN + 1], d;
	unsigned int n = 1, i, j, runs = 0;
	u32 lost;

	/* Each ID as its distance back from @first_id, farthest first. */
	back[0] = first_id - syn_id;
	if (nagain > DETER_IPID_SYN_AGAIN || !back[0] || back[0] > 0x8000)
		return 0;
	for (i = 0; i < nagain; i++) {
		d = first_id - again[i];
		if (!d || d >= back[0])
			continue;	/* not between the SYN and @first_id */
		j = n;
		while (j > 0 && back[j - 1] < d)
			j--;
		if (back[j - 1] == d)
			continue;	/* the network duplicated it */
		memmove(&back[j + 1], &back[j], (n - j) * sizeof(back[0]));
		back[j] = d;
		n++;
	}
	for (i = 0; i < n; i++) {
		lost = back[i] - (i + 1 < n ? back[i + 1] : 0) - 1;
		if (!lost || back[i] - 1 > first_id)
			continue;
		gaps[runs].start = first_id - back[i] + 1;
		gaps[runs++].count = lost;
	}
	return runs;
}
EXPORT_SYMBOL_IF_KUNIT(deter_ipid_head_gap);
