// SPDX-License-Identifier: GPL-2.0
/*
 * Reading deter.ko's events from tracefs.
 *
 * deter's events go to a tracefs instance of its own, so that recording
 * never disturbs, nor is disturbed by, other tracing on the host:
 *
 *   deter.ko --trace_deter_*()--> instances/deter/per_cpu/cpuN (ring)
 *        --mmap() of trace_pipe_raw, kbuffer--> rec_trace_record()
 *        --fields at their offsets--> rec_table_{conn,event,state}()
 *
 * Each poll drains every CPU's buffer, a sub-buffer page at a time, from
 * per-CPU readers opened once, oldest record first across CPUs. Each CPU's
 * ring buffer is mapped into deter record (Linux 6.10 and later), which
 * reads the records where deter.ko wrote them; read() of trace_pipe_raw,
 * where mapping fails, copies each sub-buffer into a page of ours. A full
 * ring buffer overwrites (the per-CPU "overrun" counter) and a missing
 * event shows as a hole in its connection's sequence numbers, which the
 * table turns into an incomplete log; rec_trace_lost() reports the
 * overruns so the recorder can say so.
 */
#include "rec_trace.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <kbuffer.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <tracefs.h>
#include <unistd.h>

#include "deter_err.h"
#include "rec_conn.h"
#include "rec_log.h"

#define REC_TRACE_INSTANCE "deter"

enum rec_trace_field {
	F_CONN, F_N,				/* deter_ev: scalars */
	F_SEQ, F_TYPE, F_SUB, F_A, F_B, F_C,	/* arrays, one per event */
	F_MAX_EV,
};

static const char *const rec_trace_state_fields[DETER_ST_MAX] = {
	[DETER_ST_SND_UNA] = "snd_una",
	[DETER_ST_SND_NXT] = "snd_nxt",
	[DETER_ST_RCV_NXT] = "rcv_nxt",
	[DETER_ST_CWND] = "cwnd",
	[DETER_ST_SSTHRESH] = "ssthresh",
	[DETER_ST_PACKETS_OUT] = "packets_out",
	[DETER_ST_RETRANS_OUT] = "retrans_out",
	[DETER_ST_SACKED_OUT] = "sacked_out",
	[DETER_ST_LOST_OUT] = "lost_out",
	[DETER_ST_RCV_WND] = "rcv_wnd",
	[DETER_ST_TOTAL_RETRANS] = "total_retrans",
	[DETER_ST_TOTAL_RTO] = "total_rto",
	[DETER_ST_RX_ZERO_WND] = "rx_zero_wnd",
	[DETER_ST_STATE] = "state",
	[DETER_ST_BYTES_ACKED] = "bytes_acked",
	[DETER_ST_BYTES_RECEIVED] = "bytes_received",
};

static const char *const rec_trace_conn_fields[] = {
	"conn", "real_ns", "mono_ns", "seq", "saddr", "daddr", "netns", "iss",
	"irs", "ipid", "flags", "mss", "wscale", "tsoffset", "sport", "dport",
};

/*
 * The first fields of a mapped ring buffer's meta page, struct
 * trace_buffer_meta of <linux/trace_mmap.h> (Linux 6.10), which Debian
 * 12's kernel headers predate.
 */
struct rec_trace_meta {
	uint32_t meta_page_size;	/* bytes, whole pages: data after them */
	uint32_t meta_struct_len;	/* bytes of the kernel's struct */
	uint32_t subbuf_size;		/* bytes per sub-buffer, header included */
	uint32_t nr_subbufs;		/* the reader's included */
	struct {
		uint64_t lost_events;	/* at the last swap */
		uint32_t id;		/* the reader sub-buffer, 0..nr_subbufs-1 */
		uint32_t read;		/* its bytes the kernel counts read */
	} reader;
	uint64_t flags;			/* 0 */
	uint64_t entries;		/* events in the buffer */
	uint64_t overrun;		/* events overwritten */
	uint64_t read;			/* events read */
};

static_assert(offsetof(struct rec_trace_meta, reader.id) == 24, "trace_buffer_meta");
static_assert(offsetof(struct rec_trace_meta, read) == 56, "trace_buffer_meta");

#define REC_TRACE_GET_READER _IO('R', 0x20)	/* TRACE_MMAP_IOCTL_GET_READER */

/* Map the ring buffers (0: read them, the tests' DETER_RECORD_NO_MMAP). */
int rec_trace_mmap = 1;

/* One CPU's reader: its buffer, the sub-buffer read last, where in it. */
struct rec_trace_cpu {
	int on;				/* 0: CPU absent */
	struct tracefs_cpu *tcpu;	/* read(), where mapping failed */
	int fd;				/* mapped: trace_pipe_raw, or -1 */
	const struct rec_trace_meta *meta; /* mapped: the meta page */
	size_t meta_len;		/* its bytes */
	char *subbufs;			/* mapped: the sub-buffers, by id */
	size_t subbufs_len;		/* their bytes */
	uint32_t id;			/* the reader sub-buffer */
	uint32_t end;			/* its bytes read, from its data's start */
	uint32_t rd;			/* the kernel's reader.read, as end */
	struct kbuffer *kbuf;
	void *page;			/* read() copies here */
	void *data;			/* next record, NULL: read another page */
	unsigned long long ts;		/* its time stamp */
};

struct rec_trace {
	struct tracefs_instance *inst;
	int lock;			/* REC_TRACE_LOCK, held; or -1 */
	struct rec_trace_cpu *cpu;	/* per-CPU readers */
	int ncpu;
	int page_size;
	struct tep_handle *tep;
	struct tep_event *ev, *conn, *state, *lost;
	struct tep_format_field *fev[F_MAX_EV];
	int off[F_MAX_EV];		/* their offsets */
	struct tep_format_field *fconn[16], *fcc;
	struct tep_format_field *fstate[DETER_ST_MAX], *fst_conn, *fst_seq,
				*fst_final;
	struct rec_table *table;	/* during a poll */
	unsigned long long events;	/* events read */
	unsigned long long lost_conns;	/* deter_lost events */
	int failed;			/* the table ran out of memory */
};

static struct tep_format_field *rec_trace_field(struct tep_event *ev,
						const char *name, int *ok)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	if (!f)
		*ok = 0;
	return f;
}

/*
 * A number field of a record, read in place: deter's events are the
 * host's own, so native byte order; rec_trace_open() checked the sizes.
 */
static unsigned long long rec_trace_num(const char *p, int size)
{
	uint64_t v8;
	uint32_t v4;
	uint16_t v2;

	switch (size) {
	case 8:
		memcpy(&v8, p, 8);
		return v8;
	case 4:
		memcpy(&v4, p, 4);
		return v4;
	case 2:
		memcpy(&v2, p, 2);
		return v2;
	default:
		return *(const uint8_t *)p;
	}
}

static unsigned long long rec_trace_val(const struct tep_format_field *f,
					const struct tep_record *r)
{
	return rec_trace_num((const char *)r->data + f->offset, f->size);
}

/*
 * Element @i of deter_ev's array field @f, which rec_trace_ev_ok() found
 * to have elements of @size: read without looking at the format.
 */
#define REC_TRACE_ELEM(t, f, r, i, size) ({				\
	uint##size##_t v_;						\
	memcpy(&v_, (const char *)(r)->data + (t)->off[f] + (i) * sizeof(v_), \
	       sizeof(v_));						\
	v_;								\
})

/*
 * Are deter_ev's fields the numbers rec_trace_record() reads in place:
 * conn and n, then arrays of DETER_EV_BATCH, elements of the sizes
 * struct rec_ev has?
 */
static int rec_trace_ev_ok(struct tep_format_field **f)
{
	static const unsigned int size[F_MAX_EV] = {
		[F_CONN] = 8, [F_N] = 4, [F_SEQ] = 4, [F_TYPE] = 2, [F_SUB] = 2,
		[F_A] = 8, [F_B] = 8, [F_C] = 8,
	};
	size_t i;

	for (i = 0; i < F_SEQ; i++)
		if ((unsigned int)f[i]->size != size[i])
			return 0;
	for (i = F_SEQ; i < F_MAX_EV; i++)
		if (!(f[i]->flags & TEP_FIELD_IS_ARRAY) ||
		    f[i]->arraylen != DETER_EV_BATCH ||
		    f[i]->elementsize != size[i] ||
		    (unsigned int)f[i]->size != size[i] * DETER_EV_BATCH)
			return 0;
	return 1;
}

/* Are @f's number fields of a size rec_trace_val() reads? */
static int rec_trace_sizes_ok(struct tep_format_field **f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (f[i]->size != 1 && f[i]->size != 2 && f[i]->size != 4 &&
		    f[i]->size != 8)
			return 0;
	return 1;
}

/*
 * A parser for deter's four events only: the ring buffer's page header
 * and their formats. tracefs_local_events_system() would also parse
 * /proc/kallsyms, printk formats and saved cmdlines, which deter never
 * prints: two thirds of the recorder's instructions went there.
 */
static struct tep_handle *rec_trace_tep(void)
{
	static const char *const names[] = {
		"deter_ev", "deter_conn", "deter_state", "deter_lost", NULL,
	};
	struct tep_handle *tep = tep_alloc();
	char path[64], *buf;
	int size, bad;
	size_t i;

	if (!tep)
		return NULL;
	buf = tracefs_instance_file_read(NULL, "events/header_page", &size);
	bad = !buf || tep_parse_header_page(tep, buf, size, sizeof(long));
	free(buf);
	for (i = 0; names[i] && !bad; i++) {
		snprintf(path, sizeof(path), "events/deter/%s/format", names[i]);
		buf = tracefs_instance_file_read(NULL, path, &size);
		bad = !buf || tep_parse_event(tep, buf, size, "deter");
		free(buf);
	}
	if (bad) {
		tep_free(tep);
		return NULL;
	}
	return tep;
}

/* One record of event type @id (common_type) into the table. */
static void rec_trace_record(struct rec_trace *t, unsigned int id,
			     const struct tep_record *r)
{
	unsigned long long v[16];
	struct rec_state st;
	size_t i;

	if (id == (unsigned int)t->ev->id) {
		uint64_t conn = REC_TRACE_ELEM(t, F_CONN, r, 0, 64);
		uint32_t n = REC_TRACE_ELEM(t, F_N, r, 0, 32);
		struct rec_ev e[DETER_EV_BATCH];

		if (!n || n > DETER_EV_BATCH)	/* none, or not from this deter.ko */
			return;
		t->events += n;
		for (i = 0; i < n; i++) {
			e[i] = (struct rec_ev){
				.seq = REC_TRACE_ELEM(t, F_SEQ, r, i, 32),
				.type = REC_TRACE_ELEM(t, F_TYPE, r, i, 16),
				.sub = REC_TRACE_ELEM(t, F_SUB, r, i, 16),
				.a = REC_TRACE_ELEM(t, F_A, r, i, 64),
				.b = REC_TRACE_ELEM(t, F_B, r, i, 64),
				.c = REC_TRACE_ELEM(t, F_C, r, i, 64),
			};
		}
		if (rec_table_events(t->table, conn, r->ts, e, n))
			t->failed = 1;
	} else if (id == (unsigned int)t->state->id) {
		t->events++;
		for (i = 0; i < DETER_ST_MAX; i++)
			st.v[i] = rec_trace_val(t->fstate[i], r);
		if (rec_table_state(t->table, rec_trace_val(t->fst_conn, r), r->ts,
				    rec_trace_val(t->fst_seq, r),
				    rec_trace_val(t->fst_final, r), &st))
			t->failed = 1;
	} else if (id == (unsigned int)t->conn->id) {
		struct rec_conn_id cid;
		const char *cc;

		t->events++;
		for (i = 0; i < 16; i++)
			v[i] = rec_trace_val(t->fconn[i], r);
		cid = (struct rec_conn_id){
			.real_ns = v[1], .mono_ns = v[2], .seq = v[3],
			.saddr = v[4], .daddr = v[5], .netns = v[6],
			.iss = v[7], .irs = v[8], .ipid = v[9], .flags = v[10],
			.mss = v[11], .wscale = v[12], .tsoffset = v[13],
			.sport = v[14], .dport = v[15],
		};
		cc = (const char *)r->data + t->fcc->offset;
		memcpy(cid.cc, cc, sizeof(cid.cc) < (size_t)t->fcc->size ?
		       sizeof(cid.cc) : (size_t)t->fcc->size);
		cid.cc[sizeof(cid.cc) - 1] = '\0';
		if (rec_table_conn(t->table, v[0], r->ts, &cid))
			t->failed = 1;
	} else if (id == (unsigned int)t->lost->id) {
		t->events++;
		t->lost_conns++;
	}
}

/*
 * Map @cpu's ring buffer: the meta page, then every sub-buffer. Return:
 * 0, or -1 (not mapped: an older kernel, or a buffer that cannot be; the
 * caller reads it instead).
 */
static int rec_trace_map(const struct rec_trace *t, struct rec_trace_cpu *c, int cpu)
{
	long pg = sysconf(_SC_PAGESIZE);
	const struct rec_trace_meta *m;
	char path[64], *file;
	void *p;

	if (!rec_trace_mmap)
		return -1;
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	file = tracefs_instance_get_file(t->inst, path);
	if (!file)
		return -1;
	c->fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	tracefs_put_tracing_file(file);
	if (c->fd < 0)
		return -1;
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, c->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	m = p;
	c->meta = m;
	c->meta_len = pg;
	if (m->meta_struct_len < sizeof(*m) || m->meta_page_size < pg ||
	    m->meta_page_size % pg || !m->nr_subbufs || m->subbuf_size < pg ||
	    m->reader.id >= m->nr_subbufs)
		goto fail;
	if (m->meta_page_size > pg) {
		munmap(p, pg);
		c->meta = NULL;
		p = mmap(NULL, m->meta_page_size, PROT_READ, MAP_SHARED, c->fd, 0);
		if (p == MAP_FAILED)
			goto fail;
		c->meta = p;
		c->meta_len = c->meta->meta_page_size;
	}
	c->subbufs_len = (size_t)c->meta->subbuf_size * c->meta->nr_subbufs;
	p = mmap(NULL, c->subbufs_len, PROT_READ, MAP_SHARED, c->fd, c->meta_len);
	if (p == MAP_FAILED)
		goto fail;
	c->subbufs = p;
	/* What the kernel counts read of the reader sub-buffer is read. */
	c->id = c->meta->reader.id;
	c->end = c->meta->reader.read;
	c->rd = c->end;
	return 0;
fail:
	if (c->meta)
		munmap((void *)c->meta, c->meta_len);
	c->meta = NULL;
	close(c->fd);
	c->fd = -1;
	return -1;
}

static void rec_trace_unmap(struct rec_trace_cpu *c)
{
	if (c->subbufs)
		munmap(c->subbufs, c->subbufs_len);
	if (c->meta)
		munmap((void *)c->meta, c->meta_len);
	if (c->fd >= 0)
		close(c->fd);
}

/* Open a reader on every CPU's buffer of the instance. */
static int rec_trace_readers(struct rec_trace *t, char **err)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct rec_trace_cpu *c;
	int cpu, on = 0;

	if (n < 1)
		n = 1;
	t->cpu = calloc(n, sizeof(*t->cpu));
	if (!t->cpu)
		return rec_err(err, "out of memory");
	t->ncpu = n;
	for (cpu = 0; cpu < t->ncpu; cpu++)
		t->cpu[cpu].fd = -1;
	for (cpu = 0; cpu < t->ncpu; cpu++) {
		char path[64];

		snprintf(path, sizeof(path), "per_cpu/cpu%d", cpu);
		if (!tracefs_dir_exists(t->inst, path))
			continue;	/* possible but not present */
		c = &t->cpu[cpu];
		c->kbuf = kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
					KBUFFER_ENDIAN_SAME_AS_HOST);
		if (!c->kbuf)
			return rec_err(err, "out of memory");
		c->on = 1;
		on++;
		if (!rec_trace_map(t, c, cpu))
			continue;
		c->tcpu = tracefs_cpu_open(t->inst, cpu, true);
		if (!c->tcpu)
			return rec_err(err, "cannot read CPU %d's trace buffer: %s", cpu,
				       strerror(errno));
		if (!t->page_size)
			t->page_size = tracefs_cpu_read_size(c->tcpu);
		if (t->page_size <= 0)
			return rec_err(err, "CPU %d's trace buffer: no sub-buffer size", cpu);
		c->page = malloc(t->page_size);
		if (!c->page)
			return rec_err(err, "out of memory");
	}
	if (!on)
		return rec_err(err, "no trace buffer to read");
	return 0;
}

/*
 * The next record of @c's mapped buffer. The reader sub-buffer is the
 * kernel's no more, but while it is the page being written to, records
 * are added to it: an ioctl() for the next one may give it again. The
 * kernel counts read what the page held at each ioctl() (reader.read),
 * and gives the next page only once nothing more was added; so a page
 * given again with nothing new for us (or only the padding that ends a
 * full page) asks once more, until the mark stands still. Stopping at
 * the first would leave the CPU's next pages to the next poll, its
 * records behind the other CPUs' (out of order). The records beyond
 * reader.read may be still being written on another CPU: they are read
 * up to the page's commit word only, and after it (the kernel's writer
 * sets it after an smp_wmb()).
 */
static int rec_trace_map_next(struct rec_trace_cpu *c, int cpu, char **err)
{
	uint32_t id, rd;

	if (c->data) {
		c->data = kbuffer_next_event(c->kbuf, &c->ts);
		if (c->data)
			return 0;
		c->end = kbuffer_subbuffer_size(c->kbuf);
	}
	for (;;) {
		if (ioctl(c->fd, REC_TRACE_GET_READER) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return rec_err(err, "reading CPU %d's trace buffer: %s", cpu,
				       strerror(errno));
		}
		id = c->meta->reader.id;	/* written by the ioctl() */
		rd = c->meta->reader.read;
		if (id >= c->meta->nr_subbufs)
			return rec_err(err, "CPU %d's trace buffer: reader sub-buffer %u of %u",
				       cpu, id, c->meta->nr_subbufs);
		if (id == c->id && rd <= c->end) {
			if (rd == c->rd)
				return 0;	/* nothing more for now */
			c->rd = rd;
			continue;
		}
		if (id != c->id) {
			c->id = id;
			c->end = 0;
		}
		c->rd = rd;
		if (kbuffer_load_subbuffer(c->kbuf, c->subbufs + (size_t)id * c->meta->subbuf_size))
			return rec_err(err, "CPU %d's trace buffer: bad sub-buffer", cpu);
		/* The commit word kbuffer read, then the records it covers. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		c->data = kbuffer_read_event(c->kbuf, &c->ts);
		while (c->data && (uint32_t)kbuffer_curr_index(c->kbuf) < c->end)
			c->data = kbuffer_next_event(c->kbuf, &c->ts);
		if (c->data)
			return 0;
		/* Nothing but padding (or discarded events) was added. */
		c->end = kbuffer_subbuffer_size(c->kbuf);
	}
}

/*
 * The next record of @c's buffer, reading another sub-buffer when the
 * last is done. Return: 0 (c->data set, or NULL: the buffer is empty for
 * now), or -1 with *err set.
 */
static int rec_trace_cpu_next(struct rec_trace_cpu *c, int cpu, char **err)
{
	int n;

	if (c->subbufs)
		return rec_trace_map_next(c, cpu, err);
	if (c->data)
		c->data = kbuffer_next_event(c->kbuf, &c->ts);
	while (!c->data) {
		n = tracefs_cpu_read(c->tcpu, c->page, true);
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return rec_err(err, "reading CPU %d's trace buffer: %s", cpu,
					       strerror(errno));
			return 0;
		}
		if (kbuffer_load_subbuffer(c->kbuf, c->page))
			return rec_err(err, "CPU %d's trace buffer: bad sub-buffer", cpu);
		c->data = kbuffer_read_event(c->kbuf, &c->ts);
	}
	return 0;
}

/*
 * One deter record at a time: it holds REC_TRACE_LOCK (flock(), so a
 * killed one lets go) as long as its tracefs instance exists. An
 * instance found while the lock is free is a killed recorder's: removed.
 */
#define REC_TRACE_LOCK "/run/deter-record.lock"

static int rec_trace_claim(struct rec_trace *t, char **err)
{
	struct tracefs_instance *old;
	char pid[32] = "";
	ssize_t n;

	t->lock = open(REC_TRACE_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (t->lock >= 0 && flock(t->lock, LOCK_EX | LOCK_NB)) {
		n = pread(t->lock, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		return rec_err(err, "another deter record is running (pid %s, holding %s)",
			       pid[0] ? pid : "?", REC_TRACE_LOCK);
	}
	if (t->lock >= 0) {
		n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (ftruncate(t->lock, 0) || pwrite(t->lock, pid, n, 0) != n)
			return rec_err(err, "%s: %s", REC_TRACE_LOCK, strerror(errno));
	}
	if (!tracefs_instance_exists(REC_TRACE_INSTANCE))
		return 0;
	if (t->lock < 0)	/* no lock to ask: refuse */
		return rec_err(err, "tracefs instance '%s' exists: %s (or remove %s/instances/%s)",
			       REC_TRACE_INSTANCE, "another deter record is running",
			       tracefs_tracing_dir(), REC_TRACE_INSTANCE);
	old = tracefs_instance_alloc(NULL, REC_TRACE_INSTANCE);
	if (old) {
		tracefs_event_disable(old, "deter", NULL);
		tracefs_instance_destroy(old);
		tracefs_instance_free(old);
	}
	if (tracefs_instance_exists(REC_TRACE_INSTANCE))
		return rec_err(err, "cannot remove tracefs instance '%s' %s: %s",
			       REC_TRACE_INSTANCE, "a killed deter record left", strerror(errno));
	deter_warn("removed tracefs instance '%s', %s",
		   REC_TRACE_INSTANCE, "left by a deter record that was killed");
	return 0;
}

/**
 * rec_trace_open() - create deter's tracefs instance and enable its events
 * @buffer_kb: ring buffer per CPU, KiB
 * @err: the error message
 *
 * Return: the reader, or NULL with *err set.
 */
struct rec_trace *rec_trace_open(unsigned int buffer_kb, char **err)
{
	struct rec_trace *t = calloc(1, sizeof(*t));
	char kb[32];
	size_t i;
	int ok = 1;

	if (!t) {
		rec_err(err, "out of memory");
		return NULL;
	}
	t->lock = -1;
	if (rec_trace_claim(t, err))
		goto fail;
	t->tep = rec_trace_tep();
	if (!t->tep) {
		rec_err(err, "cannot read deter's trace event formats from tracefs (is deter.ko loaded?)");
		goto fail;
	}
	t->ev = tep_find_event_by_name(t->tep, "deter", "deter_ev");
	t->conn = tep_find_event_by_name(t->tep, "deter", "deter_conn");
	t->state = tep_find_event_by_name(t->tep, "deter", "deter_state");
	t->lost = tep_find_event_by_name(t->tep, "deter", "deter_lost");
	if (!t->ev || !t->conn || !t->state || !t->lost) {
		rec_err(err, "deter.ko's trace events are missing (module too old or not loaded)");
		goto fail;
	}
	t->fev[F_CONN] = rec_trace_field(t->ev, "conn", &ok);
	t->fev[F_N] = rec_trace_field(t->ev, "n", &ok);
	t->fev[F_SEQ] = rec_trace_field(t->ev, "seq", &ok);
	t->fev[F_TYPE] = rec_trace_field(t->ev, "type", &ok);
	t->fev[F_SUB] = rec_trace_field(t->ev, "sub", &ok);
	t->fev[F_A] = rec_trace_field(t->ev, "a", &ok);
	t->fev[F_B] = rec_trace_field(t->ev, "b", &ok);
	t->fev[F_C] = rec_trace_field(t->ev, "c", &ok);
	for (i = 0; i < 16; i++)
		t->fconn[i] = rec_trace_field(t->conn, rec_trace_conn_fields[i], &ok);
	t->fcc = rec_trace_field(t->conn, "cc", &ok);
	for (i = 0; i < DETER_ST_MAX; i++)
		t->fstate[i] = rec_trace_field(t->state, rec_trace_state_fields[i], &ok);
	t->fst_conn = rec_trace_field(t->state, "conn", &ok);
	t->fst_seq = rec_trace_field(t->state, "seq", &ok);
	t->fst_final = rec_trace_field(t->state, "final", &ok);
	if (ok)
		ok = rec_trace_ev_ok(t->fev) &&
		     rec_trace_sizes_ok(t->fconn, 16) &&
		     rec_trace_sizes_ok(t->fstate, DETER_ST_MAX) &&
		     rec_trace_sizes_ok(&t->fst_conn, 1) && rec_trace_sizes_ok(&t->fst_seq, 1) &&
		     rec_trace_sizes_ok(&t->fst_final, 1);
	if (!ok) {
		rec_err(err, "deter.ko's trace events lack expected fields (version mismatch)");
		goto fail;
	}
	for (i = 0; i < F_MAX_EV; i++)
		t->off[i] = t->fev[i]->offset;

	t->inst = tracefs_instance_create(REC_TRACE_INSTANCE);
	if (!t->inst) {
		rec_err(err, "cannot create tracefs instance '%s': %s",
			REC_TRACE_INSTANCE, strerror(errno));
		goto fail;
	}
	snprintf(kb, sizeof(kb), "%u", buffer_kb);
	/*
	 * The instance records task names at context switches after its
	 * events (record-cmd, which it inherits from the top level), which
	 * deter does not need: 0.9 M of the 50 M extra guest instructions of
	 * 2000 RPCs recorded. It is left on: an instance has no file for
	 * the option, and turning it off through trace_options calls
	 * trace_event_enable_cmd_record(), which stops it for every enabled
	 * event of every instance, disturbing other tracing on the host.
	 */
	if (tracefs_instance_file_write(t->inst, "buffer_size_kb", kb) < 0 ||
	    tracefs_event_enable(t->inst, "deter", NULL)) {
		rec_err(err, "cannot set up tracefs instance '%s': %s",
			REC_TRACE_INSTANCE, strerror(errno));
		goto fail;
	}
	if (rec_trace_readers(t, err))
		goto fail;
	return t;
fail:
	rec_trace_close(t);
	return NULL;
}

/**
 * rec_trace_poll() - drain the ring buffers into @table
 * @t: the reader
 * @table: where the events go
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_trace_poll(struct rec_trace *t, struct rec_table *table, char **err)
{
	struct tep_record r = { 0 };
	struct rec_trace_cpu *c, *min;
	uint16_t id;
	int cpu;

	t->table = table;
	for (cpu = 0; cpu < t->ncpu; cpu++)
		if (t->cpu[cpu].on && !t->cpu[cpu].data &&
		    rec_trace_cpu_next(&t->cpu[cpu], cpu, err))
			return -1;
	/*
	 * Oldest record first across CPUs, as they were written: a
	 * connection's events then come in sequence and need no sorting.
	 */
	for (;;) {
		min = NULL;
		for (cpu = 0; cpu < t->ncpu; cpu++) {
			c = &t->cpu[cpu];
			if (c->data && (!min || c->ts < min->ts))
				min = c;
		}
		if (!min)
			break;
		memcpy(&id, min->data, sizeof(id));	/* common_type */
		r.ts = min->ts;
		r.data = min->data;
		rec_trace_record(t, id, &r);
		if (rec_trace_cpu_next(min, min - t->cpu, err))
			return -1;
	}
	if (t->failed)
		return rec_err(err, "out of memory for events");
	return 0;
}

/**
 * rec_trace_lost() - events the ring buffers lost so far
 * @t: the reader
 *
 * Return: the sum of the per-CPU overrun and dropped counters, plus the
 * sockets deter.ko could not track.
 */
unsigned long long rec_trace_lost(struct rec_trace *t)
{
	unsigned long long sum = t->lost_conns, v;
	char path[64], *s, *p;
	int cpu;

	for (cpu = 0; cpu < 4096; cpu++) {
		snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
		if (!tracefs_file_exists(t->inst, path))
			break;
		s = tracefs_instance_file_read(t->inst, path, NULL);
		if (!s)
			continue;
		p = strstr(s, "overrun:");
		if (p && sscanf(p, "overrun: %llu", &v) == 1)
			sum += v;
		p = strstr(s, "dropped events:");
		if (p && sscanf(p, "dropped events: %llu", &v) == 1)
			sum += v;
		free(s);
	}
	return sum;
}

unsigned long long rec_trace_events(const struct rec_trace *t)
{
	return t->events;
}

/**
 * rec_trace_close() - disable deter's events and remove the instance
 * @t: the reader, or NULL
 */
void rec_trace_close(struct rec_trace *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; t->cpu && i < t->ncpu; i++) {
		rec_trace_unmap(&t->cpu[i]);
		if (t->cpu[i].tcpu)
			tracefs_cpu_close(t->cpu[i].tcpu);
		if (t->cpu[i].kbuf)
			kbuffer_free(t->cpu[i].kbuf);
		free(t->cpu[i].page);
	}
	free(t->cpu);
	if (t->inst) {
		tracefs_event_disable(t->inst, "deter", NULL);
		tracefs_instance_destroy(t->inst);
		tracefs_instance_free(t->inst);
	}
	if (t->tep)
		tep_free(t->tep);
	if (t->lock >= 0)
		close(t->lock);		/* after the instance is gone */
	free(t);
}
