// SPDX-License-Identifier: GPL-2.0
/*
 * deter/control and deter/stats: how `deter record` and `deter replay`
 * switch the module, and what it counted.
 *
 * Recording and replay exclude each other on a host: a socket is either
 * logged or driven from a log, and a hook asks replay first only while
 * some replay runs. The control file is where that is decided, so it sits
 * above both:
 *
 *   write "record [threshold_ns [port...]]"  --> deter_rec_start()
 *                                                (-EBUSY while replaying)
 *   write "replay"                           --> deter_replay_arm(true)
 *                                                (-EBUSY while recording)
 *   write "stop"                             --> both off; open
 *                                                connections' batches out
 *   write "param ID VALUE"                   --> deter_rec_param_set()
 *   read                                     --> "recording|stopped
 *                                                threshold_ns=N ports=..."
 *
 * "stop" stops only the replay of the writer's own scripts: each process
 * that loaded scripts is one replay (deter_replay_ctl.c).
 *
 * deter/stats is one "name value" line per counter: the sockets deter
 * tracked (deter_conn.c), then what recording selected and emitted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_ctl.h"

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "deter_conn.h"
#include "deter_rec_ctl.h"
#include "deter_rec_emit.h"
#include "deter_rec_settings.h"
#include "deter_replay_ctl.h"

static DEFINE_MUTEX(deter_ctl_mutex);	/* serialises control writes */

/* "record"'s arguments: a threshold, then ports (none: every port). */
static int deter_ctl_record(char *p)
{
	unsigned int th = DETER_SAMPLE_THRESHOLD_NS, n = 0, port;
	u16 ports[DETER_REC_PORTS_MAX];
	char *tok;

	if (deter_replay_active())
		return -EBUSY;
	tok = strsep(&p, " ");
	if (tok && *tok && kstrtouint(tok, 0, &th))
		return -EINVAL;
	/* Arguments that do not parse leave recording off. */
	deter_rec_disarm();
	while ((tok = strsep(&p, " "))) {
		if (!*tok)
			continue;
		if (n == DETER_REC_PORTS_MAX || kstrtouint(tok, 0, &port) ||
		    !port || port > 65535)
			return -EINVAL;
		ports[n++] = port;
	}
	deter_rec_start(th, ports, n);
	return 0;
}

static ssize_t deter_ctl_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	char buf[256], *p, *tok;
	int err;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	p = strim(buf);
	tok = strsep(&p, " ");

	mutex_lock(&deter_ctl_mutex);
	if (!strcmp(tok, "stop")) {
		deter_rec_disarm();
		deter_replay_arm(false);
		/* Open connections' batches, for the recorder's last poll. */
		deter_rec_flush_all();
		err = 0;
	} else if (!strcmp(tok, "param")) {
		err = deter_rec_param_set(p);
	} else if (!strcmp(tok, "replay")) {
		err = deter_rec_active() ? -EBUSY : deter_replay_arm(true);
	} else if (!strcmp(tok, "record")) {
		err = deter_ctl_record(p);
	} else {
		err = deter_replay_active() ? -EBUSY : -EINVAL;
	}
	mutex_unlock(&deter_ctl_mutex);
	return err ?: len;
}

static int deter_ctl_show(struct seq_file *m, void *v)
{
	deter_rec_ctl_show(m);
	return 0;
}

static int deter_ctl_open(struct inode *inode, struct file *file)
{
	return single_open(file, deter_ctl_show, NULL);
}

static const struct file_operations deter_ctl_fops = {
	.owner = THIS_MODULE,
	.open = deter_ctl_open,
	.read = seq_read,
	.write = deter_ctl_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int deter_ctl_stats_show(struct seq_file *m, void *v)
{
	deter_conn_stats_show(m);
	deter_rec_stats_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(deter_ctl_stats);

/**
 * deter_ctl_init() - create deter/control and deter/stats
 * @dir: deter's debugfs directory
 */
void deter_ctl_init(struct dentry *dir)
{
	debugfs_create_file("stats", 0400, dir, NULL, &deter_ctl_stats_fops);
	debugfs_create_file("control", 0600, dir, NULL, &deter_ctl_fops);
}
