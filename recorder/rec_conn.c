// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's connection table.
 *
 * deter.ko numbers every event of a connection 1, 2, 3, ... (identity,
 * events, checkpoints and the final summary alike). The table collects a
 * connection's events, encoding them into its log as soon as 4096 follow
 * the last encoded without a hole (rec_conn_encode(): memory stays
 * bounded however long the connection lives), until it holds the summary
 * and exactly as many records as the summary's sequence number, then
 * writes the log:
 *
 *   event --> conn = lookup(id) --> append --> 4096 in order? --> encode
 *                                      |
 *                                      +--> complete? --> sort by seq,
 *                                                         encode, write
 *
 * When recording stops, what is left is written too, marked incomplete:
 * not closed, or with events lost (records < highest sequence seen).
 * Never is a log with missing events written as complete, nor one whose
 * events say values it depends on were not recorded (DETER_V_MISSING).
 */
#include "rec_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deter_err.h"
#include "rec_edge.h"
#include "rec_index.h"
#include "rec_keep.h"

/*
 * Events a connection holds before they are encoded (rec_conn_encode());
 * a hole in their sequence may hold back 64 times as many.
 */
size_t rec_conn_chunk_events = 4096;
#define REC_CONN_CHUNK		rec_conn_chunk_events
#define REC_CONN_PENDING_MAX	(64 * REC_CONN_CHUNK)

/* The DETER_LOG_* bits that make a log incomplete, 1 << 0 to 1 << 5. */
#define REC_TABLE_WHY 6
_Static_assert(DETER_LOG_INCOMPLETE == (1u << REC_TABLE_WHY) - 1, "DETER_LOG_INCOMPLETE");

/* Buckets of the id hash; ids are a counter, so they spread evenly. */
#define REC_TABLE_BUCKETS 4096

struct rec_conn {
	struct rec_conn *next;		/* hash chain */
	uint64_t conn;			/* connection id */
	struct deter_log_header hdr;	/* identity, once known */
	int have_id;			/* hdr holds the identity */
	struct rec_ev *evs;		/* events, in arrival order */
	size_t nevs, cap;
	struct rec_state *states;	/* values of STATE events */
	size_t nstates, scap;
	uint32_t records;		/* records received, all kinds */
	uint32_t max_seq;		/* highest sequence seen */
	uint32_t final_seq;		/* the summary's sequence, 0 if none */
	int discard;			/* a handshake's losing duplicate */
	uint32_t status;		/* DETER_LOG_* bits its events set */
	uint64_t first_ts, last_ts;	/* trace timestamps, ns */
	/* What went into the log already (rec_conn_encode()). */
	struct rec_log_writer *w;	/* the log being written, once begun */
	uint32_t enc_seq;		/* the last sequence number encoded */
	uint32_t id_seq;		/* the identity's: no event has it */
	size_t retry_at;		/* events held before trying again */
	uint64_t gaps, late;		/* NET GAP and LATE counts */
	struct rec_edge edge;		/* the IP ID series' edges */
	struct rec_state last;		/* the last STATE's values */
	int have_last;
	/*
	 * No longer recorded: its log is full (cut: written as it is when
	 * the connection ends) or could not be written on (failed: what it
	 * spilled stays in its part file for the next start). Later records
	 * are counted, not kept.
	 */
	int cut, failed;
	uint64_t cut_ts;		/* last_ts at the cut */
};

struct rec_table {
	struct rec_conn *b[REC_TABLE_BUCKETS];
	unsigned int ready;		/* connections done, maybe not whole yet */
	struct rec_conn *last;		/* the last one looked up */
	char *dir, *host;
	unsigned int written, incomplete;
	unsigned int why[REC_TABLE_WHY];	/* incomplete, per DETER_LOG_* bit */
	unsigned int index_failed;	/* logs the index missed */
	unsigned int unwritten;		/* logs that could not be written */
	unsigned int settings_changed;	/* written, DETER_LOG_SETTINGS_CHANGED */
	struct rec_keep *keep;		/* told of every log written, or NULL */
};

struct rec_table *rec_table_new(const char *dir, const char *host)
{
	struct rec_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->dir = strdup(dir);
	t->host = strdup(host);
	if (!t->dir || !t->host) {
		rec_table_free(t);
		return NULL;
	}
	return t;
}

/**
 * rec_table_keep() - tell @k of every log @t writes from now on
 * @t: the table
 * @k: the directory's logs, held to --max-size and --max-age; NULL: none
 */
void rec_table_keep(struct rec_table *t, struct rec_keep *k)
{
	t->keep = k;
}

static void rec_conn_free(struct rec_conn *c)
{
	rec_log_writer_free(c->w);
	free(c->evs);
	free(c->states);
	free(c);
}

void rec_table_free(struct rec_table *t)
{
	struct rec_conn *c, *n;
	size_t i;

	if (!t)
		return;
	for (i = 0; i < REC_TABLE_BUCKETS; i++)
		for (c = t->b[i]; c; c = n) {
			n = c->next;
			rec_conn_free(c);
		}
	free(t->dir);
	free(t->host);
	free(t);
}

/* Connection @conn, created if new, with @n records up to @seq counted. */
/* Has @c's summary or discard come (it is counted in the table's ready)? */
static int rec_conn_done(const struct rec_conn *c)
{
	return c->final_seq || c->discard;
}

static struct rec_conn *rec_table_get(struct rec_table *t, uint64_t conn,
				      uint64_t ts, uint32_t seq, uint32_t n)
{
	struct rec_conn **pp = &t->b[conn % REC_TABLE_BUCKETS], *c = t->last;

	/* A batch, and mostly the next too, is one connection's. */
	if (!c || c->conn != conn)
		for (c = *pp; c; c = c->next)
			if (c->conn == conn)
				break;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->conn = conn;
		c->hdr.conn = conn;
		snprintf(c->hdr.host, sizeof(c->hdr.host), "%s", t->host);
		c->first_ts = ts;
		c->next = *pp;
		*pp = c;
	}
	t->last = c;
	c->records += n;
	if (seq > c->max_seq)
		c->max_seq = seq;
	if (ts < c->first_ts)
		c->first_ts = ts;
	if (ts > c->last_ts)
		c->last_ts = ts;
	return c;
}

int rec_table_conn(struct rec_table *t, uint64_t conn, uint64_t ts,
		   const struct rec_conn_id *id)
{
	struct rec_conn *c = rec_table_get(t, conn, ts, id->seq, 1);
	struct deter_log_header *h;

	if (!c)
		return -1;
	c->id_seq = id->seq;
	h = &c->hdr;
	h->conn = conn;
	h->real_ns = id->real_ns;
	h->mono_ns = id->mono_ns;
	h->saddr = id->saddr;
	h->daddr = id->daddr;
	h->sport = id->sport;
	h->dport = id->dport;
	h->netns = id->netns;
	h->iss = id->iss;
	h->irs = id->irs;
	h->ipid = id->ipid;
	h->flags = id->flags;
	h->mss = id->mss;
	h->wscale = id->wscale;
	h->tsoffset = id->tsoffset;
	memcpy(h->cc, id->cc, sizeof(h->cc));
	h->cc[sizeof(h->cc) - 1] = '\0';
	snprintf(h->host, sizeof(h->host), "%s", t->host);
	c->have_id = 1;
	return 0;
}

static int rec_conn_encode(struct rec_table *t, struct rec_conn *c, int all,
			   char **err);

/* Let go of the events @c holds: it is no longer recorded. */
static void rec_conn_forget(struct rec_conn *c)
{
	free(c->evs);
	free(c->states);
	c->evs = NULL;
	c->states = NULL;
	c->nevs = 0;
	c->cap = 0;
	c->nstates = 0;
	c->scap = 0;
}

/*
 * Encode what @c holds once that is a chunk's worth. A log that cannot
 * take them (a full disk, an event it cannot encode) costs that
 * connection, not the recorder: said, and the connection is no longer
 * recorded; its part file, as of its last spill, becomes a log
 * (incomplete) when deter record next starts in the directory.
 */
static void rec_conn_maybe_encode(struct rec_table *t, struct rec_conn *c)
{
	char *err = NULL;

	if (c->nevs < REC_CONN_CHUNK || c->nevs < c->retry_at)
		return;
	if (!rec_conn_encode(t, c, 0, &err))
		return;
	deter_warn("%s; connection %016llx is no longer recorded",
		   err ? err : "out of memory", (unsigned long long)c->conn);
	free(err);
	c->failed = 1;
	rec_conn_forget(c);
	rec_log_writer_free(c->w);	/* its part file stays */
	c->w = NULL;
}

/* Append @n events to @c's. */
static int rec_conn_push(struct rec_conn *c, const struct rec_ev *ev, size_t n)
{
	struct rec_ev *ne;
	size_t cap;

	if (c->nevs + n > c->cap) {
		cap = c->cap ? c->cap * 2 : 256;
		while (cap < c->nevs + n)
			cap *= 2;
		ne = realloc(c->evs, cap * sizeof(*ne));
		if (!ne)
			return -1;
		c->evs = ne;
		c->cap = cap;
	}
	memcpy(c->evs + c->nevs, ev, n * sizeof(*ev));
	c->nevs += n;
	return 0;
}

/**
 * rec_table_events() - add @n events of connection @conn (one record)
 * @t: the table
 * @conn: the connection id
 * @ts: the record's trace time stamp, ns
 * @ev: the events
 * @n: how many
 *
 * Return: 0, or -1 when out of memory.
 */
int rec_table_events(struct rec_table *t, uint64_t conn, uint64_t ts,
		     const struct rec_ev *ev, size_t n)
{
	uint32_t max = 0, status = 0;
	struct rec_conn *c;
	size_t i;

	for (i = 0; i < n; i++) {
		if (ev[i].seq > max)
			max = ev[i].seq;
		if (ev[i].type == DETER_EV_VALUE && ev[i].sub == DETER_V_MISSING)
			status |= ev[i].a == DETER_MISSING_CALLS ? DETER_LOG_UNSEEN_CALLS :
				  ev[i].a == DETER_MISSING_SETTINGS ?
				  DETER_LOG_SETTINGS_CHANGED : DETER_LOG_MISSING_VALUES;
	}
	c = rec_table_get(t, conn, ts, max, n);
	if (!c)
		return -1;
	if (c->cut || c->failed)
		return 0;
	c->status |= status;
	if (rec_conn_push(c, ev, n))
		return -1;
	rec_conn_maybe_encode(t, c);
	return 0;
}

int rec_table_state(struct rec_table *t, uint64_t conn, uint64_t ts,
		    uint32_t seq, int final, const struct rec_state *st)
{
	struct rec_conn *c = rec_table_get(t, conn, ts, seq, 1);
	struct rec_state *ns;
	struct rec_ev ev = {
		.seq = seq, .type = DETER_EV_STATE, .sub = !!final,
	};

	if (!c)
		return -1;
	if (final && !rec_conn_done(c))
		t->ready++;
	if (final == DETER_STATE_DISCARD) {
		c->discard = 1;
		return 0;
	}
	if (final)
		c->final_seq = seq;
	if (c->cut || c->failed)
		return 0;
	if (c->nstates == c->scap) {
		c->scap = c->scap ? c->scap * 2 : 16;
		ns = realloc(c->states, c->scap * sizeof(*ns));
		if (!ns)
			return -1;
		c->states = ns;
	}
	ev.a = c->nstates;
	c->states[c->nstates++] = *st;
	if (rec_conn_push(c, &ev, 1))
		return -1;
	rec_conn_maybe_encode(t, c);
	return 0;
}

/* Free @c, unhashed already, and (but with @keep_part) its log's part file. */
static void rec_table_drop(struct rec_table *t, struct rec_conn *c, int keep_part)
{
	if (!keep_part)
		rec_log_writer_drop(c->w);
	else
		rec_log_writer_free(c->w);
	c->w = NULL;
	if (rec_conn_done(c))
		t->ready--;
	if (t->last == c)
		t->last = NULL;
	rec_conn_free(c);
}

static int rec_ev_cmp(const void *a, const void *b)
{
	const struct rec_ev *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Put @n events in sequence order. The reader hands them over nearly so:
 * deter.ko numbers a connection's records in the order it emits them,
 * and the reader merges the CPUs' buffers by their trace clocks, which
 * may disagree by a little. An insertion sort, then, unless it would
 * move more than REC_SORT_MOVES events per event: qsort().
 */
#define REC_SORT_MOVES 4

static void rec_ev_sort(struct rec_ev *ev, size_t n)
{
	size_t i, j, moves = 0;
	struct rec_ev e;

	for (i = 1; i < n; i++) {
		if (ev[i - 1].seq <= ev[i].seq)
			continue;
		for (j = i - 1; j > 0 && ev[j - 1].seq > ev[i].seq; j--)
			;
		moves += i - j;
		if (moves > REC_SORT_MOVES * n) {
			qsort(ev, n, sizeof(*ev), rec_ev_cmp);
			return;
		}
		e = ev[i];
		memmove(&ev[j + 1], &ev[j], (i - j) * sizeof(*ev));
		ev[j] = e;
	}
}

/* Count @n events about to be encoded into @c's summaries for deter ls. */
static void rec_conn_account(struct rec_conn *c, const struct rec_ev *evs, size_t n)
{
	struct deter_log_header *h = &c->hdr;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct rec_ev *e = &evs[i];

		rec_edge_add(&c->edge, e);
		if (e->type == DETER_EV_STATE) {
			c->last = c->states[e->a];
			c->have_last = 1;
		}
		if (e->type != DETER_EV_NET)
			continue;
		if (e->sub == DETER_NET_GAP) {
			c->gaps += e->b;
		} else if (e->sub == DETER_NET_LATE) {
			c->late += e->b;
			h->reorders++;
		} else if (e->sub == DETER_NET_CE) {
			h->ce_marks += e->b;
		}
	}
}

/* Summaries for deter ls, from the events and the final state. */
static void rec_conn_summarise(struct rec_conn *c)
{
	struct deter_log_header *h = &c->hdr;

	h->drops = c->gaps > c->late ? c->gaps - c->late : 0;
	rec_edge_fill(&c->edge, h);
	if (c->have_last) {
		h->total_retrans = c->last.v[DETER_ST_TOTAL_RETRANS];
		h->total_rto = c->last.v[DETER_ST_TOTAL_RTO];
		h->zero_wnd = c->last.v[DETER_ST_RX_ZERO_WND];
		h->bytes_acked = c->last.v[DETER_ST_BYTES_ACKED];
		h->bytes_received = c->last.v[DETER_ST_BYTES_RECEIVED];
	}
	h->duration_ns = (c->cut ? c->cut_ts : c->last_ts) - c->first_ts;
}

/*
 * Encode @c's events that can be: all of them (@all: the connection is
 * being written), or those that follow the last encoded in sequence
 * without a hole (the identity's number aside), REC_CONN_CHUNK or more
 * at a time. A hole that holds REC_CONN_PENDING_MAX events back is taken
 * for lost: the events after it up to the next hole are encoded, the log
 * marked incomplete, and the missing events, should they come late,
 * dropped. What is encoded
 * leaves memory (the log writer keeps it compressed, or on disk), so a
 * connection costs the recorder about the same however long it lives.
 */
static int rec_conn_encode(struct rec_table *t, struct rec_conn *c, int all,
			   char **err)
{
	struct rec_state *ns;
	size_t n, i, keep;
	uint32_t next;

	rec_ev_sort(c->evs, c->nevs);
	/* Events that came after their hole was given up on: lost. */
	for (i = 0; i < c->nevs && c->w && c->evs[i].seq <= c->enc_seq; i++)
		c->status |= DETER_LOG_LOST_EVENTS;
	if (i) {
		memmove(c->evs, c->evs + i, (c->nevs - i) * sizeof(*c->evs));
		c->nevs -= i;
	}
	n = c->nevs;
	if (!all) {
		next = c->enc_seq + 1;
		for (n = 0; n < c->nevs; n++, next++) {
			if (next == c->id_seq)
				next++;
			if (c->evs[n].seq == next)
				continue;
			/* Held back too much: the first hole is lost, not the rest. */
			if (n || c->nevs < REC_CONN_PENDING_MAX)
				break;
			c->status |= DETER_LOG_LOST_EVENTS;
			next = c->evs[n].seq;
		}
		if (n < REC_CONN_CHUNK) {
			/* A hole: look again once another chunk came, not per record. */
			c->retry_at = c->nevs + REC_CONN_CHUNK;
			return 0;
		}
	}
	if (!c->w) {
		c->w = rec_log_writer_new();
		if (!c->w)
			return rec_err(err, "out of memory");
	}
	if (rec_log_writer_full(c->w, n)) {
		/* The log ends here, whole up to its last event. */
		deter_warn("connection %016llx: its log is full; %s",
			   (unsigned long long)c->conn,
			   "the rest of the connection is not recorded");
		c->cut = 1;
		c->cut_ts = c->last_ts;
		c->status |= DETER_LOG_CUT;
		rec_conn_forget(c);
		return 0;
	}
	rec_conn_account(c, c->evs, n);
	/* The header so far, for the part file's (rec_table_write() ends it). */
	rec_conn_summarise(c);
	c->hdr.status = c->status | (c->have_id ? 0 : DETER_LOG_NO_IDENTITY);
	if (rec_log_writer_add(c->w, t->dir, &c->hdr, c->evs, n, c->states, err))
		return -1;
	if (n)
		c->enc_seq = c->evs[n - 1].seq;
	c->retry_at = 0;
	memmove(c->evs, c->evs + n, (c->nevs - n) * sizeof(*c->evs));
	c->nevs -= n;
	/*
	 * The states the events left still index, renumbered from 0 into a
	 * new array: they need not be in the order of their events.
	 */
	for (i = 0, keep = 0; i < c->nevs; i++)
		keep += c->evs[i].type == DETER_EV_STATE;
	if (!keep) {
		c->nstates = 0;
		return 0;
	}
	ns = malloc(keep * sizeof(*ns));
	if (!ns)
		return rec_err(err, "out of memory");
	for (i = 0, keep = 0; i < c->nevs; i++)
		if (c->evs[i].type == DETER_EV_STATE) {
			ns[keep] = c->states[c->evs[i].a];
			c->evs[i].a = keep++;
		}
	free(c->states);
	c->states = ns;
	c->nstates = keep;
	c->scap = keep;
	return 0;
}

static int rec_table_write(struct rec_table *t, struct rec_conn *c,
			   uint32_t status, char **err)
{
	char *path = NULL, *ierr = NULL;
	int r, b;

	if (!c->have_id)	/* its id and host, from rec_table_get() */
		status |= DETER_LOG_NO_IDENTITY;
	r = rec_conn_encode(t, c, 1, err);
	if (r)
		return r;
	rec_conn_summarise(c);
	status |= c->status;
	c->hdr.status = status;
	r = rec_log_writer_finish(c->w, t->dir, &c->hdr, &path, err);
	if (!r && rec_index_add(path, &c->hdr, &ierr)) {
		/* The log is there; deter ls reads its header instead. */
		if (!t->index_failed++)
			deter_warn("%s (said once)", ierr);
		free(ierr);
	}
	if (!r && t->keep && rec_keep_add(t->keep, path, &c->hdr))
		deter_warn("%s: not counted against the limits on logs: %s",
			   path, strerror(errno));
	free(path);
	if (!r) {
		t->written++;
		if (status & DETER_LOG_INCOMPLETE)
			t->incomplete++;
		for (b = 0; b < REC_TABLE_WHY; b++)
			if (status & 1u << b)
				t->why[b]++;
		if (status & DETER_LOG_SETTINGS_CHANGED)
			t->settings_changed++;
	}
	return r;
}

/**
 * rec_table_flush() - write the logs of connections that are done
 * @t: the table
 * @stopping: recording stops: write everything, incomplete if need be
 * @lost: the ring buffers lost events (overruns); with @stopping, any
 *	connection not provably whole is marked as having lost events
 *
 * A log that cannot be written is said on stderr and counted
 * (rec_table_unwritten()); the others are written all the same.
 */
void rec_table_flush(struct rec_table *t, int stopping, unsigned int lost)
{
	struct rec_conn **pp, *c;
	uint32_t status;
	char *err = NULL;
	size_t i;

	/* Between polls, only a connection that is done can be written. */
	if (!stopping && !t->ready)
		return;
	for (i = 0; i < REC_TABLE_BUCKETS; i++) {
		pp = &t->b[i];
		while ((c = *pp)) {
			int whole = c->records == c->max_seq;

			if (c->discard && (whole || stopping)) {
				*pp = c->next;
				rec_table_drop(t, c, 0);
				continue;
			}
			if (c->failed && ((c->final_seq && whole) || stopping)) {
				/* Said when it failed; its part file stays. */
				*pp = c->next;
				t->unwritten++;
				rec_table_drop(t, c, 1);
				continue;
			}
			if (c->final_seq && whole) {
				status = 0;
			} else if (stopping) {
				status = (c->final_seq ? 0 : DETER_LOG_NOT_CLOSED) |
					 (whole && !lost ? 0 : DETER_LOG_LOST_EVENTS);
			} else {
				pp = &c->next;
				continue;
			}
			if (!status && !whole)
				status = DETER_LOG_LOST_EVENTS;
			*pp = c->next;
			if (rec_table_write(t, c, status, &err)) {
				/*
				 * One log not written (a full disk, a connection past
				 * what a log holds): said, and the others go on. What
				 * it spilled stays in its part file for the next start.
				 */
				deter_warn("%s; %s %016llx is not written",
					   err ? err : "out of memory", "the log of connection",
					   (unsigned long long)c->conn);
				free(err);
				err = NULL;
				t->unwritten++;
				rec_table_drop(t, c, 1);
				continue;
			}
			rec_table_drop(t, c, 0);
		}
	}
}

/** rec_table_unwritten() - logs rec_table_flush() could not write */
unsigned int rec_table_unwritten(const struct rec_table *t)
{
	return t->unwritten;
}

/** rec_table_settings_changed() - logs written whose settings changed */
unsigned int rec_table_settings_changed(const struct rec_table *t)
{
	return t->settings_changed;
}

/**
 * rec_table_incomplete_why() - the incomplete logs written, by reason
 * @t: the table
 * @buf: for " (12 not-closed, 1 lost-events)": each reason deter ls
 *	shows and how many logs have it; "" when every log is complete
 * @len: its size
 *
 * A log incomplete for two reasons counts under both.
 *
 * Return: @buf.
 */
const char *rec_table_incomplete_why(const struct rec_table *t, char *buf, size_t len)
{
	char name[160];
	size_t at = 0;
	int b, n;

	buf[0] = '\0';
	for (b = 0; b < REC_TABLE_WHY; b++) {
		if (!t->why[b])
			continue;
		/* "incomplete,REASON" */
		rec_log_status_str(1u << b, name, sizeof(name));
		n = snprintf(buf + at, len - at, "%s%u %s", at ? ", " : " (", t->why[b],
			     strchr(name, ',') + 1);
		if (n < 0 || (size_t)n >= len - at)
			break;
		at += n;
	}
	if (at && at + 1 < len)
		strcat(buf, ")");
	return buf;
}

void rec_table_counts(const struct rec_table *t, unsigned int *written,
		      unsigned int *incomplete, unsigned int *open)
{
	struct rec_conn *c;
	size_t i;

	*written = t->written;
	*incomplete = t->incomplete;
	*open = 0;
	for (i = 0; i < REC_TABLE_BUCKETS; i++)
		for (c = t->b[i]; c; c = c->next)
			(*open)++;
}
