// SPDX-License-Identifier: GPL-2.0
/*
 * Writing log files: a connection's events, encoded (rec_enc.c) and
 * compressed, into DIR/ID.dlog.
 *
 * A log file is a struct deter_log_header (include/deter_abi.h) and the
 * body, its chunks each compressed into a zstd frame of its own:
 *
 *   header (248 B: magic, format, counts, the connection) | frame | frame | ...
 *
 * The header says the events (nevents), the frames' bytes (body_len) and
 * the body's bytes decompressed (body_raw_len, at most 4 GiB); each frame
 * says its decompressed size.
 *
 * deter record writes a log while its connection goes on
 * (struct rec_log_writer): events are encoded as they come
 * (rec_log_writer_add()), every rec_log_chunk_bytes (64 KiB) encoded
 * make a chunk compressed into a frame, and every rec_log_spill_bytes
 * (64 KiB) of frames go to the log's part file, DIR/.ID.dlog.part
 * (0600), so that what the recorder holds for a connection stays bounded
 * however long it lives:
 *
 *   events -> encoder -> chunk -> zstd frame -> memory -> part file
 *                                                           | finish
 *                                           DIR/ID.dlog <---+ (rename)
 *
 * The part file is a log: its header, rewritten after each spill, says
 * the frames before it and "not closed", so that a recorder killed
 * mid-connection leaves a log of what it spilled (rec_log_recover(),
 * rec_rewrite.c). rec_log_writer_finish() adds the last frames and the
 * final header and renames it into place; a log that never spilled is
 * written whole (rec_log_put()) through a temporary file, fsync'd and
 * renamed, mode 0600, so that a reader never sees half a log under a
 * log's name. A connection that outlives what a log holds (2^28 events,
 * or 4 GiB encoded) ends its log there (DETER_LOG_CUT, set by the
 * recorder).
 *
 * zstd: one compression context for every log written (not thread-safe:
 * deter record writes from one thread), and a block of its own for each
 * long stream of a chunk (rec_log_zcompress()).
 */
#include "rec_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "rec_codec.h"
#include "rec_enc.h"
#include "rec_err.h"

/* deter record --zstd-level; 0: rec_log_zstd_init()'s parameters. */
int rec_log_zstd_level;

/* One compression context for every log written, not one per log. */
static struct ZSTD_CCtx_s *rec_log_cctx;	/* ZSTD_CCtx */

/*
 * The compression parameters, set once: a level, or by default zstd's
 * double-fast matcher with 16 KiB tables. On RPC logs (callgrind, zstd
 * 1.5.4) that costs about level 3's instructions (a third of level 5's,
 * a quarter of level 9's) for a body 3 % smaller than level 3's, 6 %
 * larger than level 5's, 9 % larger than level 9's. The window: 128 KiB.
 */
static int rec_log_zstd_init(struct ZSTD_CCtx_s *cctx)
{
	static const struct {
		ZSTD_cParameter p;
		int v;
	} def[] = {
		{ ZSTD_c_strategy, ZSTD_dfast },
		{ ZSTD_c_windowLog, 17 },
		{ ZSTD_c_hashLog, 14 },
		{ ZSTD_c_chainLog, 14 },
		{ ZSTD_c_minMatch, 4 },
	};
	size_t i;

	if (rec_log_zstd_level)
		return ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
							   rec_log_zstd_level)) ? -1 : 0;
	for (i = 0; i < ARRAY_SIZE(def); i++)
		if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, def[i].p, def[i].v)))
			return -1;
	return 0;
}

/* A stream this long gets zstd blocks of its own (rec_log_zcompress()). */
#define REC_LOG_BLOCK_MIN 1024

/* Room for a body of @rawlen bytes compressed by rec_log_zcompress(). */
size_t rec_log_zbound(size_t rawlen)
{
	return ZSTD_compressBound(rawlen) + 2 * RS_MAX * 3 + 64;	/* block headers */
}

/*
 * Compress the body (or chunk) @raw into @z, ending zstd's block before
 * and after each stream of REC_LOG_BLOCK_MIN bytes or more: the literals
 * of a block share one entropy table, so each noisy stream gets its own
 * (RPC logs: -6 % against one block for them all). Return: the
 * compressed size, or a zstd error code.
 */
size_t rec_log_zcompress(ZSTD_CCtx *cctx, void *z, size_t zcap,
			 const uint8_t *raw, size_t rawlen)
{
	size_t cut[2 * RS_MAX + 1], ncut = 0, at = 0, pos, used, r, i;
	ZSTD_outBuffer out = { z, zcap, 0 };
	uint64_t sl[RS_MAX];
	int k, nrd = RS_MAX;

	for (k = 0; k < nrd; k++, at += used)
		if (rec_varint_get(raw + at, rawlen - at, &sl[k], &used)) {
			nrd = 0;	/* not ours to judge: one block */
			break;
		}
	for (k = 0, pos = at; k < nrd && sl[k] <= rawlen - pos; pos += sl[k++]) {
		if (sl[k] < REC_LOG_BLOCK_MIN)
			continue;
		if (pos && (!ncut || cut[ncut - 1] < pos))
			cut[ncut++] = pos;
		if (pos + sl[k] < rawlen)
			cut[ncut++] = pos + sl[k];
	}
	cut[ncut++] = rawlen;
	r = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setPledgedSrcSize(cctx, rawlen);
	for (i = 0, at = 0; i < ncut && !ZSTD_isError(r); at = cut[i++]) {
		ZSTD_inBuffer in = { raw + at, cut[i] - at, 0 };
		ZSTD_EndDirective end = i + 1 < ncut ? ZSTD_e_flush : ZSTD_e_end;

		do {
			r = ZSTD_compressStream2(cctx, &out, &in, end);
		} while (!ZSTD_isError(r) && r && out.pos < out.size);
		if (!ZSTD_isError(r) && r)
			r = (size_t)-ZSTD_error_dstSize_tooSmall;
	}
	return ZSTD_isError(r) ? r : out.pos;
}

/** rec_log_write_end() - free what rec_log_write() keeps between logs */
void rec_log_write_end(void)
{
	ZSTD_freeCCtx(rec_log_cctx);
	rec_log_cctx = NULL;
}

/*
 * Write a log file @dst, 0600, through a new temporary file of a name of
 * its own in the same directory (mkostemp(): never an existing file or a
 * link someone planted), renamed over it: a reader never sees half a
 * log, a crash leaves the old file or none.
 */
int rec_log_put(const char *dst, const struct deter_log_header *hdr,
		const void *z, size_t zlen, char **err)
{
	const char *base = strrchr(dst, '/');
	char *tmp = NULL;
	int fd, ret = -1;

	base = base ? base + 1 : dst;
	if (asprintf(&tmp, "%.*s.%s.XXXXXX", (int)(base - dst), dst, base) < 0)
		return rec_err(err, "out of memory");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	if (fchmod(fd, 0600) ||
	    write(fd, hdr, sizeof(*hdr)) != (ssize_t)sizeof(*hdr) ||
	    write(fd, z, zlen) != (ssize_t)zlen || fsync(fd)) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, dst)) {
		rec_err(err, "%s: %s", dst, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

/*
 * Bytes encoded per chunk, and compressed bytes held per connection
 * before they go to its part file (test knobs): 64 KiB each bounds what
 * the recorder holds for a connection, and a chunk that long compresses
 * within a few percent of a whole body.
 */
size_t rec_log_chunk_bytes = 64 << 10;
size_t rec_log_spill_bytes = 64 << 10;
#define REC_LOG_CHUNK_RAW	rec_log_chunk_bytes
#define REC_LOG_SPILL		rec_log_spill_bytes

/*
 * What one log holds (test knobs): its events, and its body's bytes
 * before compression, which the header counts in 32 bits; 1/128 of that
 * is left for what zstd may add to incompressible chunks.
 */
size_t rec_log_max_events = REC_LOG_MAX_EVENTS;
uint64_t rec_log_max_raw = UINT32_MAX - UINT32_MAX / 128;

/* The most bytes one event encodes to: a STATE's, a RUN and a SEQGAP. */
#define REC_LOG_EV_RAW_MAX	(REC_VARINT_MAX * (DETER_ST_MAX + 6))

/* A log being written while its connection goes on. */
struct rec_log_writer {
	struct rec_log_enc *enc;	/* its body's encoder */
	struct rec_buf z;	/* frames not in the part file yet */
	char *part;		/* the part file, once there is one */
	uint64_t zlen;		/* every frame's bytes */
	uint64_t rawlen;	/* and decompressed */
	uint64_t nevents;	/* events added */
	uint64_t framed;	/* of those, in frames */
	uint64_t file_zlen;	/* frame bytes in the part file */
};

/** rec_log_writer_new() - a log to write */
struct rec_log_writer *rec_log_writer_new(void)
{
	struct rec_log_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->enc = rec_log_enc_new();
	if (!w->enc) {
		free(w);
		return NULL;
	}
	return w;
}

/*
 * rec_log_writer_free() - free a writer; a log not finished keeps its
 * part file, a log of what was spilled (rec_log_recover())
 */
void rec_log_writer_free(struct rec_log_writer *w)
{
	if (!w)
		return;
	free(w->part);
	rec_log_enc_free(w->enc);
	free(w->z.p);
	free(w);
}

/** rec_log_writer_drop() - free a writer and its part file: no log */
void rec_log_writer_drop(struct rec_log_writer *w)
{
	if (w && w->part)
		unlink(w->part);
	rec_log_writer_free(w);
}

static int rec_log_cctx_get(char **err)
{
	if (!rec_log_cctx) {
		rec_log_cctx = ZSTD_createCCtx();
		if (rec_log_cctx && rec_log_zstd_init(rec_log_cctx)) {
			rec_log_write_end();
			return rec_err(err, "zstd: cannot set the compression parameters");
		}
	}
	return rec_log_cctx ? 0 : rec_err(err, "out of memory");
}

/* The events encoded since the last frame, as a frame of their own. */
static int rec_log_writer_frame(struct rec_log_writer *w, char **err)
{
	uint8_t *raw = NULL;
	size_t rawlen, zlen;
	int ret = -1;

	if (rec_log_enc_chunk(w->enc, &raw, &rawlen, err) || rec_log_cctx_get(err))
		goto out;
	if (rec_buf_reserve(&w->z, rec_log_zbound(rawlen))) {
		rec_err(err, "out of memory");
		goto out;
	}
	zlen = rec_log_zcompress(rec_log_cctx, w->z.p + w->z.len, w->z.cap - w->z.len,
				 raw, rawlen);
	if (ZSTD_isError(zlen)) {
		rec_err(err, "zstd: %s", ZSTD_getErrorName(zlen));
		goto out;
	}
	w->z.len += zlen;
	w->zlen += zlen;
	w->rawlen += rawlen;
	w->framed = w->nevents;
	ret = 0;
out:
	free(raw);
	return ret;
}

/* @hdr as a log of this format with @nevents in @zlen bytes. */
static int rec_log_hdr_fill(struct deter_log_header *hdr, uint64_t nevents,
			    uint64_t zlen, uint64_t rawlen, char **err)
{
	if (nevents > REC_LOG_MAX_EVENTS || zlen > UINT32_MAX || rawlen > UINT32_MAX)
		return rec_err(err,
			       "connection %016llx: %llu events, %llu bytes: more than a log holds",
			       (unsigned long long)hdr->conn, (unsigned long long)nevents,
			       (unsigned long long)rawlen);
	memcpy(hdr->magic, DETER_LOG_MAGIC, sizeof(hdr->magic));
	hdr->version = DETER_ABI_VERSION;
	hdr->header_len = sizeof(*hdr);
	hdr->nevents = nevents;
	hdr->body_len = zlen;
	hdr->body_raw_len = rawlen;
	hdr->pad = 0;
	return 0;
}

/*
 * The frames held in memory onto the end of the part file (@flags: to
 * open it with), then the header @h, which says them; with @sync, on disk.
 */
static int rec_log_part_put(struct rec_log_writer *w, const struct deter_log_header *h,
			    int flags, int sync, char **err)
{
	int fd = open(w->part, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | flags, 0600);

	if (fd < 0)
		return rec_err(err, "%s: %s", w->part, strerror(errno));
	if (pwrite(fd, w->z.p, w->z.len, sizeof(*h) + w->file_zlen) != (ssize_t)w->z.len ||
	    pwrite(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) || (sync && fsync(fd))) {
		rec_err(err, "%s: %s", w->part, strerror(errno));
		close(fd);
		return -1;
	}
	if (close(fd))
		return rec_err(err, "%s: %s", w->part, strerror(errno));
	w->file_zlen += w->z.len;
	w->z.len = 0;
	return 0;
}

/* The frames held in memory, into the part file, with a header "not closed". */
static int rec_log_writer_spill(struct rec_log_writer *w, const char *dir,
				const struct deter_log_header *hdr, char **err)
{
	struct deter_log_header ph = *hdr;
	int flags = 0;

	if (!w->part) {
		if (asprintf(&w->part, "%s/.%016llx.dlog.part", dir,
			     (unsigned long long)hdr->conn) < 0) {
			w->part = NULL;
			return rec_err(err, "out of memory");
		}
		unlink(w->part);	/* a stale one of an earlier boot's id */
		flags = O_CREAT | O_EXCL;
	}
	ph.status |= DETER_LOG_NOT_CLOSED;
	if (rec_log_hdr_fill(&ph, w->framed, w->zlen, w->rawlen, err))
		return -1;
	return rec_log_part_put(w, &ph, flags, 0, err);
}

/**
 * rec_log_writer_full() - would @n more events take @w past what a log
 *	holds?
 * @w: the log
 * @n: events
 *
 * A connection that outlives its log (2^28 events, or 4 GiB encoded)
 * ends its log there (DETER_LOG_CUT): the log stays one the decoder and
 * the replay can take whole.
 */
int rec_log_writer_full(const struct rec_log_writer *w, size_t n)
{
	uint64_t raw = w->rawlen + rec_log_enc_pending(w->enc);

	return n > rec_log_max_events - w->nevents ||
	       raw > rec_log_max_raw ||
	       n > (rec_log_max_raw - raw) / REC_LOG_EV_RAW_MAX;
}

/**
 * rec_log_writer_add() - encode more of a connection's events
 * @w: the log
 * @dir: its directory (for the part file)
 * @hdr: the connection's header as it is so far (for the part file's)
 * @evs: events sorted by sequence number, all after those added before
 * @n: how many
 * @states: the values their STATE events index
 * @err: the error message
 *
 * Return: 0, or -1 with *err set (also when the log would be full:
 * check rec_log_writer_full() first).
 */
int rec_log_writer_add(struct rec_log_writer *w, const char *dir,
		       const struct deter_log_header *hdr,
		       const struct rec_ev *evs, size_t n,
		       const struct rec_state *states, char **err)
{
	if (rec_log_writer_full(w, n))
		return rec_err(err, "connection %016llx: %llu events: more than a log holds",
			       (unsigned long long)hdr->conn,
			       (unsigned long long)(w->nevents + n));
	if (rec_log_enc_add(w->enc, evs, n, states, err))
		return -1;
	w->nevents += n;
	if (rec_log_enc_pending(w->enc) < REC_LOG_CHUNK_RAW)
		return 0;
	if (rec_log_writer_frame(w, err))
		return -1;
	return w->z.len < REC_LOG_SPILL ? 0 : rec_log_writer_spill(w, dir, hdr, err);
}

/*
 * DIR/ID.dlog, or if a log has that name (the part of the connection a
 * killed recorder had written, made a log of), DIR/ID-N.dlog. Malloc'd.
 */
char *rec_log_new_name(const char *dir, uint64_t conn)
{
	unsigned int i;
	char *p;

	for (i = 0; i < 1000; i++) {
		if ((i ? asprintf(&p, "%s/%016llx-%u.dlog", dir, (unsigned long long)conn, i) :
			 asprintf(&p, "%s/%016llx.dlog", dir, (unsigned long long)conn)) < 0)
			return NULL;
		if (access(p, F_OK))
			return p;
		free(p);
	}
	return NULL;
}

/**
 * rec_log_writer_finish() - write the log into @dir
 * @w: the log, every event added (rec_log_writer_free() it after)
 * @dir: the log directory
 * @hdr: the header; body_len, body_raw_len and nevents are filled in
 * @path: the file written, malloc'd
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_writer_finish(struct rec_log_writer *w, const char *dir,
			  struct deter_log_header *hdr, char **path, char **err)
{
	char *dst = NULL;

	/* The last chunk: what is left, or the whole body (maybe empty). */
	if ((!w->zlen || !rec_log_enc_empty(w->enc)) &&
	    rec_log_writer_frame(w, err))
		return -1;
	if (rec_log_hdr_fill(hdr, w->nevents, w->zlen, w->rawlen, err))
		return -1;
	dst = rec_log_new_name(dir, hdr->conn);
	if (!dst)
		return rec_err(err, "%s: no name left for a log of connection %016llx",
			       dir, (unsigned long long)hdr->conn);
	if (!w->part) {
		if (rec_log_put(dst, hdr, w->z.p, w->z.len, err)) {
			free(dst);
			return -1;
		}
		*path = dst;
		return 0;
	}
	/* The part file becomes the log: the rest of it, its header, its name. */
	if (rec_log_part_put(w, hdr, 0, 1, err)) {
		free(dst);
		return -1;
	}
	if (rename(w->part, dst)) {
		rec_err(err, "%s: %s", dst, strerror(errno));
		free(dst);
		return -1;
	}
	free(w->part);
	w->part = NULL;
	*path = dst;
	return 0;
}

/**
 * rec_log_write() - write one connection's log into @dir
 * @dir: the log directory
 * @hdr: the header; body_len, body_raw_len and nevents are filled in
 * @evs: events sorted by sequence
 * @n: how many
 * @states: the values STATE events index
 * @path: the file written, malloc'd
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_write(const char *dir, struct deter_log_header *hdr,
		  const struct rec_ev *evs, size_t n,
		  const struct rec_state *states, char **path, char **err)
{
	struct rec_log_writer *w = rec_log_writer_new();
	int r;

	if (!w)
		return rec_err(err, "out of memory");
	r = rec_log_writer_add(w, dir, hdr, evs, n, states, err);
	if (!r)
		r = rec_log_writer_finish(w, dir, hdr, path, err);
	rec_log_writer_drop(w);
	return r;
}

