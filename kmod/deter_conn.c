// SPDX-License-Identifier: GPL-2.0
/*
 * Per-connection bookkeeping for deter.
 *
 * Every TCP socket passes through three hooks: creation by socket(2)
 * (sk_init), creation of an accepted child by the handshake (sk_clone)
 * and destruction (sk_destroy). Today they only count, which is what the
 * testbed checks to prove the hook patch and the ops table are wired:
 *
 *   created + cloned - destroyed == sockets alive that deter has seen
 *
 * The recorder's per-connection state will hang off the same hooks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <net/sock.h>

#include "deter_conn.h"

static atomic64_t deter_conn_created;	/* sockets from socket(2) */
static atomic64_t deter_conn_cloned;	/* children from accepted handshakes */
static atomic64_t deter_conn_destroyed;	/* sockets destroyed */

void deter_conn_sk_init(struct sock *sk)
{
	atomic64_inc(&deter_conn_created);
}

void deter_conn_sk_clone(struct sock *newsk, const struct sock *parent,
			 const struct sk_buff *skb)
{
	atomic64_inc(&deter_conn_cloned);
}

void deter_conn_sk_destroy(struct sock *sk)
{
	atomic64_inc(&deter_conn_destroyed);
}

static int deter_conn_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "sockets_created %lld\n",
		   (long long)atomic64_read(&deter_conn_created));
	seq_printf(m, "sockets_cloned %lld\n",
		   (long long)atomic64_read(&deter_conn_cloned));
	seq_printf(m, "sockets_destroyed %lld\n",
		   (long long)atomic64_read(&deter_conn_destroyed));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(deter_conn_stats);

/**
 * deter_conn_debugfs_init() - create deter/stats
 * @dir: deter's debugfs directory
 */
void deter_conn_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("stats", 0400, dir, NULL, &deter_conn_stats_fops);
}
