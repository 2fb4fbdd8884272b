// SPDX-License-Identifier: GPL-2.0
/*
 * The edges of the IP ID series: packets lost where no later arrival
 * shows them missing.
 *
 * A receiver counts a lost packet when a later one arrives with a higher
 * IP ID (a NET GAP). Two edges of the peer's series have no such later
 * packet:
 *
 *   head  the peer's first packets after the handshake. A passive end
 *         knows the peer's next ID from its SYN's, and logs the gap at
 *         its start (deter.ko, deter_rec_synack_emit()); an active end
 *         cannot know the passive end's first ID: the SYN-ACK has ID 0
 *         and the child socket draws its counter afresh.
 *   tail  the peer's last packets before its socket closed (e.g. its
 *         ACK of our FIN before it went to time-wait): what follows
 *         from the peer's host are its control socket's answers, ID 0,
 *         outside the series.
 *
 * What each end's log knows goes into its header (struct
 * deter_log_header, edges): the peer's ID this end's series accounting
 * starts at (rx_first: the first arrival or the start of a head gap),
 * the one it expects next at the end (rx_end), whether a time-wait
 * answer came after the last arrival (TW_LAST: the peer's socket had
 * closed, so nothing of its series was still to come; one with a TS
 * value, which tells it from the host's reset), and its own next ID at
 * its close (ipid_end, from NET TX_END). With both ends' headers:
 *
 *   head(me) = rx_first(me) - ipid(peer)              mod 2^16
 *   tail(me) = ipid_end(peer) - rx_end(me)            mod 2^16, if TW_LAST
 *
 * each counted only below 2^15 (otherwise the IDs are not in that
 * order, and nothing is counted). ipid is the peer's next ID at
 * ESTABLISHED, its first after the handshake. deter ls adds these to a
 * log's drops when the other end's log is in the directory; deter
 * replay's corrector drops those packets (replay_run.c).
 */
#include "rec_edge.h"

/* Account for the peer's series from index @idx, @n packets on. */
static void rec_edge_rx(struct rec_edge *ed, uint64_t idx, uint64_t n)
{
	if (!(ed->edges & DETER_EDGE_RX) || idx < ed->rx_min)
		ed->rx_min = idx;
	if (!(ed->edges & DETER_EDGE_RX) || idx + n > ed->rx_end)
		ed->rx_end = idx + n;
	ed->edges |= DETER_EDGE_RX;
}

/**
 * rec_edge_add() - take one event of a log into its edges
 * @ed: the log's edges so far, zeroed before its first event
 * @e: the next event, in sequence order
 */
void rec_edge_add(struct rec_edge *ed, const struct rec_ev *e)
{
	switch (e->type) {
	case DETER_EV_RX:
		if (e->b & DETER_RX_SYN)
			break;
		/*
		 * A time-wait answer carries the TS value (c). A reset does
		 * not: it ends this socket, and the peer's packets sent
		 * before it may arrive after it (sent from another CPU),
		 * unseen, not lost.
		 */
		if (e->b & DETER_RX_CTL) {
			if ((ed->edges & DETER_EDGE_RX) && e->c)
				ed->edges |= DETER_EDGE_TW_LAST;
			break;
		}
		rec_edge_rx(ed, e->a, e->c ? e->c : 1);
		ed->edges &= ~DETER_EDGE_TW_LAST;
		break;
	case DETER_EV_VALUE:
		if (e->sub == DETER_V_CHILD_IPID)
			rec_edge_rx(ed, e->a, e->b ? e->b : 1);
		break;
	case DETER_EV_NET:
		/* A gap at the start (a passive end's head) sets rx_first. */
		if (e->sub == DETER_NET_GAP && !(ed->edges & DETER_EDGE_RX)) {
			ed->rx_min = e->a;
			ed->rx_end = e->a + e->b;
			ed->edges |= DETER_EDGE_RX;
		} else if (e->sub == DETER_NET_TX_END) {
			ed->ipid_end = (uint16_t)e->a;
			ed->edges |= DETER_EDGE_TX_END;
		}
		break;
	}
}

/**
 * rec_edge_fill() - write a log's edges into its header
 * @ed: its edges, from all its events
 * @h: the header
 */
void rec_edge_fill(const struct rec_edge *ed, struct deter_log_header *h)
{
	h->edges = ed->edges;
	h->rx_first = ed->edges & DETER_EDGE_RX ? (uint16_t)ed->rx_min : 0;
	h->rx_end = ed->edges & DETER_EDGE_RX ? (uint16_t)ed->rx_end : 0;
	h->ipid_end = ed->edges & DETER_EDGE_TX_END ? ed->ipid_end : 0;
}

/**
 * rec_edge_pair() - are two logs the two ends of one connection?
 * @a: one log's header
 * @b: another's
 *
 * Return: 1 if @b's 4-tuple is @a's reversed and its ISNs @a's swapped,
 * both established; else 0.
 */
int rec_edge_pair(const struct deter_log_header *a,
		  const struct deter_log_header *b)
{
	return a->saddr == b->daddr && a->daddr == b->saddr &&
	       a->sport == b->dport && a->dport == b->sport &&
	       a->iss == b->irs && a->irs == b->iss &&
	       !((a->status | b->status) & DETER_LOG_NO_IDENTITY);
}

/* @to - @from as 16-bit IDs, or 0 when @to is not after @from. */
static uint32_t rec_edge_span(uint32_t from, uint32_t to)
{
	uint16_t d = (uint16_t)(to - from);

	return d < 0x8000 ? d : 0;
}

/**
 * rec_edge_head() - the peer's first packets after the handshake that
 *	never reached @me and @me's log does not count
 * @me: one end's header
 * @peer: its peer's (rec_edge_pair())
 *
 * Return: how many.
 */
uint32_t rec_edge_head(const struct deter_log_header *me,
		       const struct deter_log_header *peer)
{
	if (!(me->edges & DETER_EDGE_RX))
		return 0;
	return rec_edge_span(peer->ipid, me->rx_first);
}

/**
 * rec_edge_tail() - the peer's last packets before its socket closed
 *	that never reached @me
 * @me: one end's header
 * @peer: its peer's (rec_edge_pair())
 *
 * Counted only when a control answer of the peer's host came after
 * @me's last arrival (DETER_EDGE_TW_LAST): otherwise @me may have closed
 * first, and the peer's last packets reached a socket that was not
 * @me's any more.
 *
 * Return: how many.
 */
uint32_t rec_edge_tail(const struct deter_log_header *me,
		       const struct deter_log_header *peer)
{
	if (!(me->edges & DETER_EDGE_TW_LAST) ||
	    !(peer->edges & DETER_EDGE_TX_END))
		return 0;
	return rec_edge_span(me->rx_end, peer->ipid_end);
}
