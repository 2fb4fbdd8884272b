// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the IP ID series' edges (rec_edge.c): what one log's
 * events say of them, and the drops the pair of logs counts at the head
 * and at the tail, wrap included.
 */
#include <string.h>

#include "rec_edge.h"
#include "unit.h"

static struct rec_ev ev(uint16_t type, uint16_t sub, uint64_t a, uint64_t b,
			uint64_t c)
{
	struct rec_ev e = { .type = type, .sub = sub, .a = a, .b = b, .c = c };

	return e;
}

/* Fill @h from @n events and give it a connection of its own. */
static void edges_of(const struct rec_ev *evs, size_t n,
		     struct deter_log_header *h)
{
	struct rec_edge ed;
	size_t i;

	memset(&ed, 0, sizeof(ed));
	memset(h, 0, sizeof(*h));
	for (i = 0; i < n; i++)
		rec_edge_add(&ed, &evs[i]);
	rec_edge_fill(&ed, h);
}

/* An active end whose peer's first two packets never came. */
static void test_head_active(void)
{
	struct rec_ev evs[] = {
		ev(DETER_EV_RX, 0, 0, DETER_RX_SYN, 0),
		ev(DETER_EV_RX, 0, 502, 0, 1),
		ev(DETER_EV_RX, 0, 503, 0, 2),
		ev(DETER_EV_NET, DETER_NET_TX_END, 77, 0, 0),
	};
	struct deter_log_header me, peer;

	edges_of(evs, ARRAY_SIZE(evs), &me);
	UNIT_CHECK_EQ(me.edges, DETER_EDGE_RX | DETER_EDGE_TX_END);
	UNIT_CHECK_EQ(me.rx_first, 502);
	UNIT_CHECK_EQ(me.rx_end, 505);
	UNIT_CHECK_EQ(me.ipid_end, 77);
	memset(&peer, 0, sizeof(peer));
	peer.ipid = 500;
	UNIT_CHECK_EQ(rec_edge_head(&me, &peer), 2);
	/* No control answer after the last arrival: no tail. */
	peer.ipid_end = 510;
	peer.edges = DETER_EDGE_TX_END;
	UNIT_CHECK_EQ(rec_edge_tail(&me, &peer), 0);
}

/*
 * A passive end that counted its head gap as it recorded (NET GAP before
 * its first arrival): the pair adds nothing there. A late arrival below
 * does not move the start either.
 */
static void test_head_passive(void)
{
	struct rec_ev evs[] = {
		ev(DETER_EV_NET, DETER_NET_GAP, 101, 1, 0),
		ev(DETER_EV_VALUE, DETER_V_CHILD_IPID, 102, 0, 0),
		ev(DETER_EV_RX, 0, 103, 0, 1),
		ev(DETER_EV_RX, 0, 101, 0, 1),
	};
	struct deter_log_header me, peer;

	edges_of(evs, ARRAY_SIZE(evs), &me);
	UNIT_CHECK_EQ(me.rx_first, 101);
	UNIT_CHECK_EQ(me.rx_end, 104);
	memset(&peer, 0, sizeof(peer));
	peer.ipid = 101;
	UNIT_CHECK_EQ(rec_edge_head(&me, &peer), 0);
	/* IDs not in order (the peer's first after ours): nothing. */
	peer.ipid = 120;
	UNIT_CHECK_EQ(rec_edge_head(&me, &peer), 0);
}

/* The peer's last ACK lost before its time-wait socket answered. */
static void test_tail(void)
{
	struct rec_ev evs[] = {
		ev(DETER_EV_RX, 0, 65534, 0, 1),
		ev(DETER_EV_RX, 0, 65535, 0, 1),
		ev(DETER_EV_RX, 0, 65536, DETER_RX_CTL, 1001),
	};
	struct deter_log_header me, peer;

	edges_of(evs, ARRAY_SIZE(evs), &me);
	UNIT_CHECK_EQ(me.edges, DETER_EDGE_RX | DETER_EDGE_TW_LAST);
	UNIT_CHECK_EQ(me.rx_end, 0);
	memset(&peer, 0, sizeof(peer));
	peer.ipid = 65534;
	peer.ipid_end = 1;
	peer.edges = DETER_EDGE_TX_END;
	UNIT_CHECK_EQ(rec_edge_head(&me, &peer), 0);
	UNIT_CHECK_EQ(rec_edge_tail(&me, &peer), 1);
	/* Without the peer's end, nothing. */
	peer.edges = 0;
	UNIT_CHECK_EQ(rec_edge_tail(&me, &peer), 0);
}

/*
 * The peer host's reset (no TS value) after the last arrival: it ended
 * this socket, and what the peer sent before it could come after it.
 */
static void test_tail_reset(void)
{
	struct rec_ev evs[] = {
		ev(DETER_EV_RX, 0, 10, 0, 1),
		ev(DETER_EV_RX, 0, 11, DETER_RX_CTL, 0),
	};
	struct deter_log_header me;

	edges_of(evs, ARRAY_SIZE(evs), &me);
	UNIT_CHECK_EQ(me.edges, DETER_EDGE_RX);
}

/* A series arrival after the control answer: the peer was not done. */
static void test_tail_not_last(void)
{
	struct rec_ev evs[] = {
		ev(DETER_EV_RX, 0, 10, 0, 1),
		ev(DETER_EV_RX, 0, 11, DETER_RX_CTL, 0),
		ev(DETER_EV_RX, 0, 11, 0, 1),
	};
	struct deter_log_header me;

	edges_of(evs, ARRAY_SIZE(evs), &me);
	UNIT_CHECK_EQ(me.edges, DETER_EDGE_RX);
}

/* Two ends pair by reversed 4-tuple and swapped ISNs. */
static void test_pair(void)
{
	struct deter_log_header a, b;

	memset(&a, 0, sizeof(a));
	a.saddr = 1;
	a.daddr = 2;
	a.sport = 40000;
	a.dport = 5201;
	a.iss = 7;
	a.irs = 9;
	b = a;
	b.saddr = 2;
	b.daddr = 1;
	b.sport = 5201;
	b.dport = 40000;
	b.iss = 9;
	b.irs = 7;
	UNIT_CHECK(rec_edge_pair(&a, &b));
	b.irs = 8;
	UNIT_CHECK(!rec_edge_pair(&a, &b));
	b.irs = 7;
	b.status = DETER_LOG_NO_IDENTITY;
	UNIT_CHECK(!rec_edge_pair(&a, &b));
}

int main(void)
{
	UNIT_RUN(test_head_active);
	UNIT_RUN(test_head_passive);
	UNIT_RUN(test_tail);
	UNIT_RUN(test_tail_reset);
	UNIT_RUN(test_tail_not_last);
	UNIT_RUN(test_pair);
	return unit_done();
}
