// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite deter_conn: a spliced send's pages (DETER_SPLICE_*), as
 * deter_conn_send_pages() and deter_conn_send_pages_done() work them out
 * from the message's bvecs, for record and replay alike; what a send
 * puts on the error queue (DETER_SEND_*), deter_conn_send_errq(); and a
 * splice read's pipe room and socket mode (DETER_SPLICE_RD_*),
 * deter_conn_splice_read_flags().
 */
#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/gfp.h>
#include <linux/net_tstamp.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <linux/tcp.h>

#include "deter_conn.h"

struct deter_conn_test {
	struct deter_sock *ds;
	struct page *pages;	/* four, contiguous: an order-2 allocation */
	struct bio_vec bv[4];
	struct msghdr msg;
};

static int deter_conn_test_init(struct kunit *test)
{
	struct deter_conn_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->ds = kunit_kzalloc(test, sizeof(*t->ds), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->ds);
	t->pages = alloc_pages(GFP_KERNEL, 2);
	KUNIT_ASSERT_NOT_NULL(test, t->pages);
	test->priv = t;
	return 0;
}

static void deter_conn_test_exit(struct kunit *test)
{
	struct deter_conn_test *t = test->priv;

	__free_pages(t->pages, 2);
}

/* A send of @n bvecs (@t->bv) of @len bytes, @flags as its msg_flags. */
static void deter_conn_send(struct deter_conn_test *t, unsigned int n,
			    size_t len, unsigned int flags)
{
	memset(&t->msg, 0, sizeof(t->msg));
	t->msg.msg_flags = flags;
	iov_iter_bvec(&t->msg.msg_iter, ITER_SOURCE, t->bv, n, len);
	deter_conn_send_pages(t->ds, &t->msg, 0);
}

static void deter_conn_send_pages_test(struct kunit *test)
{
	struct deter_conn_test *t = test->priv;
	struct page *p = t->pages;

	/* A file's bytes from offset 1000 of page 0 to 1000 into page 2. */
	bvec_set_page(&t->bv[0], p, PAGE_SIZE - 1000, 1000);
	bvec_set_page(&t->bv[1], p + 1, PAGE_SIZE, 0);
	bvec_set_page(&t->bv[2], p + 2, 1000, 0);
	deter_conn_send(t, 3, 2 * PAGE_SIZE, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 2 * PAGE_SIZE),
			DETER_SPLICE_KNOWN | 1000);

	/* The next bytes go on in page 2, from 1000: CONT. */
	bvec_set_page(&t->bv[0], p + 2, 500, 1000);
	deter_conn_send(t, 1, 500, MSG_SPLICE_PAGES);
	/* TCP took 200 of them: the next go on from 1200. */
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 200),
			DETER_SPLICE_KNOWN | DETER_SPLICE_CONT | 1000);
	bvec_set_page(&t->bv[0], p + 2, 300, 1200);
	deter_conn_send(t, 1, 300, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 300),
			DETER_SPLICE_KNOWN | DETER_SPLICE_CONT | 1200);

	/* The same offset in another page (another file): not CONT. */
	bvec_set_page(&t->bv[0], p + 3, 100, 1500);
	deter_conn_send(t, 1, 100, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 100),
			DETER_SPLICE_KNOWN | 1500);

	/* One bvec across two pages of a compound page, past its first. */
	bvec_set_page(&t->bv[0], p, 2 * PAGE_SIZE, PAGE_SIZE + 100);
	deter_conn_send(t, 1, 2 * PAGE_SIZE - 100, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, PAGE_SIZE - 100),
			DETER_SPLICE_KNOWN | 100);
	/* TCP stopped at the end of page 1: page 2 from 0 is not CONT. */
	bvec_set_page(&t->bv[0], p + 2, 100, 0);
	deter_conn_send(t, 1, 100, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 100),
			DETER_SPLICE_KNOWN);

	/* A send that copies (no MSG_SPLICE_PAGES): none. */
	deter_conn_send(t, 1, 100, 0);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 100), 0);
}

static void deter_conn_send_pages_other_test(struct kunit *test)
{
	struct deter_conn_test *t = test->priv;
	struct page *p = t->pages;

	/* A later page that starts past 0 (a socket's bytes spliced on). */
	bvec_set_page(&t->bv[0], p, PAGE_SIZE, 0);
	bvec_set_page(&t->bv[1], p + 1, 1448, 100);
	deter_conn_send(t, 2, PAGE_SIZE + 1448, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, PAGE_SIZE + 1448),
			DETER_SPLICE_KNOWN | DETER_SPLICE_OTHER);

	/* An earlier page that ends short. */
	bvec_set_page(&t->bv[0], p, 1448, 0);
	bvec_set_page(&t->bv[1], p + 1, 1448, 0);
	deter_conn_send(t, 2, 2 * 1448, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 2 * 1448),
			DETER_SPLICE_KNOWN | DETER_SPLICE_OTHER);

	/* Nothing taken: where the last send stopped stays (page 1, 1448). */
	bvec_set_page(&t->bv[0], p + 1, 100, 1448);
	deter_conn_send(t, 1, 100, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, -EAGAIN),
			DETER_SPLICE_KNOWN | DETER_SPLICE_CONT | 1448);
	deter_conn_send(t, 1, 100, MSG_SPLICE_PAGES);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 100),
			DETER_SPLICE_KNOWN | DETER_SPLICE_CONT | 1448);
}

/* @msg's control message: SO_TIMESTAMPING_NEW (at @level) of @tsflags. */
static void deter_conn_cmsg(struct msghdr *msg, u8 *buf, size_t len,
			    int level, u32 tsflags)
{
	struct cmsghdr *cmsg = (struct cmsghdr *)buf;

	memset(buf, 0, len);
	cmsg->cmsg_len = CMSG_LEN(sizeof(u32));
	cmsg->cmsg_level = level;
	cmsg->cmsg_type = SO_TIMESTAMPING_NEW;
	memcpy(CMSG_DATA(cmsg), &tsflags, sizeof(tsflags));
	msg->msg_control = buf;
	msg->msg_controllen = len;
	msg->msg_control_is_user = false;
}

static void deter_conn_send_errq_test(struct kunit *test)
{
	struct deter_conn_test *t = test->priv;
	struct sock *sk = kunit_kzalloc(test, sizeof(struct tcp_sock), GFP_KERNEL);
	u8 cbuf[CMSG_SPACE(sizeof(u32))] __aligned(8);
	struct msghdr *msg = &t->msg;
	struct kvec kv = { .iov_len = 100 };

	KUNIT_ASSERT_NOT_NULL(test, sk);
	memset(msg, 0, sizeof(*msg));
	iov_iter_kvec(&msg->msg_iter, ITER_SOURCE, &kv, 1, 100);
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), 0);

	/* MSG_ZEROCOPY counts only on a socket with SO_ZEROCOPY. */
	msg->msg_flags = MSG_ZEROCOPY;
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), 0);
	sock_set_flag(sk, SOCK_ZEROCOPY);
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), DETER_SEND_ZEROCOPY);
	/* ... and with bytes to send. */
	iov_iter_kvec(&msg->msg_iter, ITER_SOURCE, &kv, 1, 0);
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), 0);
	iov_iter_kvec(&msg->msg_iter, ITER_SOURCE, &kv, 1, 100);
	msg->msg_flags = 0;

	/* SO_TIMESTAMPING: its TX bits only. */
	sk->sk_tsflags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), 0);
	sk->sk_tsflags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_OPT_ID;
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), DETER_SEND_TXSTAMP);

	/* A send's control message replaces the socket's TX bits. */
	deter_conn_cmsg(msg, cbuf, sizeof(cbuf), SOL_SOCKET, 0);
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), 0);
	sk->sk_tsflags = 0;
	deter_conn_cmsg(msg, cbuf, sizeof(cbuf), SOL_SOCKET, SOF_TIMESTAMPING_TX_SCHED);
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), DETER_SEND_TXSTAMP);
	/* Not at another level. */
	deter_conn_cmsg(msg, cbuf, sizeof(cbuf), SOL_IP, SOF_TIMESTAMPING_TX_ACK);
	KUNIT_EXPECT_EQ(test, deter_conn_send_errq(sk, msg), 0);

	/* A send's return carries them, with a spliced send's pages. */
	deter_conn_send_pages(t->ds, msg, DETER_SEND_TXSTAMP);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 100), DETER_SEND_TXSTAMP);
	/* Unless it took no bytes. */
	deter_conn_send_pages(t->ds, msg, DETER_SEND_TXSTAMP);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, -EAGAIN), 0);
	bvec_set_page(&t->bv[0], t->pages, 100, 0);
	memset(msg, 0, sizeof(*msg));
	msg->msg_flags = MSG_SPLICE_PAGES;
	iov_iter_bvec(&msg->msg_iter, ITER_SOURCE, t->bv, 1, 100);
	deter_conn_send_pages(t->ds, msg, DETER_SEND_ZEROCOPY);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 100),
			DETER_SEND_ZEROCOPY | DETER_SPLICE_KNOWN);
	/* The next send's own. */
	deter_conn_send(t, 1, 100, 0);
	KUNIT_EXPECT_EQ(test, deter_conn_send_pages_done(t->ds, 100), 0);
}

static void deter_conn_splice_read_flags_test(struct kunit *test)
{
	struct deter_conn_test *t = test->priv;
	struct sock *sk = kunit_kzalloc(test, sizeof(struct tcp_sock), GFP_KERNEL);
	struct socket *sock = kunit_kzalloc(test, sizeof(*sock), GFP_KERNEL);
	struct file *file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);
	const u32 room = DETER_SPLICE_RD_ROOM_SHIFT;

	KUNIT_ASSERT_NOT_NULL(test, sk);
	KUNIT_ASSERT_NOT_NULL(test, sock);
	KUNIT_ASSERT_NOT_NULL(test, file);
	/* No room handed over, no socket: the splice flags alone. */
	KUNIT_EXPECT_EQ(test, deter_conn_splice_read_flags(t->ds, sk, 0x4), 0x4);
	sk->sk_socket = sock;
	sock->file = file;
	t->ds->pipe_room = 16;
	KUNIT_EXPECT_EQ(test, deter_conn_splice_read_flags(t->ds, sk, 0x2),
			16 << room | 0x2);
	/* The room is the call's it came with: taken once. */
	KUNIT_EXPECT_EQ(test, t->ds->pipe_room, 0);
	KUNIT_EXPECT_EQ(test, deter_conn_splice_read_flags(t->ds, sk, 0), 0);
	/* A nonblocking file; unknown flag bits dropped. */
	file->f_flags = O_NONBLOCK | O_CLOEXEC;
	t->ds->pipe_room = 1;
	KUNIT_EXPECT_EQ(test, deter_conn_splice_read_flags(t->ds, sk, 0x10f),
			1 << room | DETER_SPLICE_RD_NONBLOCK | 0xf);
	/* More room than the log holds: the most it can say. */
	t->ds->pipe_room = U32_MAX;
	KUNIT_EXPECT_EQ(test, DETER_SPLICE_RD_ROOM(deter_conn_splice_read_flags(t->ds, sk, 0)),
			DETER_SPLICE_RD_ROOM_MAX);
}

static struct kunit_case deter_conn_test_cases[] = {
	KUNIT_CASE(deter_conn_send_pages_test),
	KUNIT_CASE(deter_conn_send_pages_other_test),
	KUNIT_CASE(deter_conn_send_errq_test),
	KUNIT_CASE(deter_conn_splice_read_flags_test),
	{}
};

static struct kunit_suite deter_conn_test_suite = {
	.name = "deter_conn",
	.init = deter_conn_test_init,
	.exit = deter_conn_test_exit,
	.test_cases = deter_conn_test_cases,
};

kunit_test_suite(deter_conn_test_suite);
