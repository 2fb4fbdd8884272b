// SPDX-License-Identifier: GPL-2.0
/*
 * Logs rewritten in place: the part file of a recorder that was killed
 * made a log (rec_log_recover()), and a log's body compressed again
 * (rec_log_compact()).
 *
 * Both read the file whole and decode it (rec_read.c) before they touch
 * it: a file that does not decode is an error and stays as it was. Both
 * leave a log under a log's name only by rename():
 *
 *   recover   DIR/.ID.dlog.part -> cut to what its header says (the
 *             frames the recorder had spilled) -> DIR/ID.dlog, or
 *             DIR/ID-N.dlog if that name is taken; marked not closed
 *   compact   DIR/ID.dlog -> its events encoded as one chunk, one zstd
 *             frame at the level asked -> a temporary file renamed over
 *             it, only if smaller; the header stays but for the body's
 *             lengths
 *
 * deter record recovers the part files it finds at start; deter compact
 * compacts the logs it is given. Neither is thread-safe on one file.
 */
#include "rec_rewrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "rec_enc.h"
#include "rec_err.h"
#include "rec_read.h"
#include "rec_write.h"

/**
 * rec_log_recover() - make the part file a recorder left into a log
 * @part: DIR/.ID.dlog.part, left by a recorder killed while the
 *	connection was open
 * @path: the log it became (malloc'd), named as rec_log_writer_finish()
 *	names logs; NULL when the part file held no events yet and was removed
 * @hdr: the log's header
 * @err: the error message, naming the part file and the offset
 *
 * The log is what the recorder had spilled: marked incomplete, not
 * closed. Frames written after the part file's last header are cut off.
 * A part file that does not decode is left as it is.
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_recover(const char *part, char **path, struct deter_log_header *hdr,
		    char **err)
{
	const char *slash = strrchr(part, '/');
	struct deter_log_header h;
	struct rec_log *log;
	char *dir, *dst;
	struct stat st;
	int fd;

	*path = NULL;
	fd = open(part, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st)) {
		rec_err(err, "%s: %s", part, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* A header that checks out says how much of the file is the log. */
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    !rec_log_check_header(part, &h, st.st_size, NULL)) {
		if (!h.body_len) {
			close(fd);
			unlink(part);	/* no frame spilled yet: nothing to keep */
			return 0;
		}
		if (ftruncate(fd, sizeof(h) + (uint64_t)h.body_len)) {
			rec_err(err, "%s: %s", part, strerror(errno));
			close(fd);
			return -1;
		}
	}
	close(fd);
	log = rec_log_read(part, err);	/* header, frames, events: all checked */
	if (!log)
		return -1;
	*hdr = log->hdr;
	rec_log_free(log);
	dir = slash ? strndup(part, slash - part) : strdup(".");
	dst = dir ? rec_log_new_name(dir, hdr->conn) : NULL;
	free(dir);
	if (!dst)
		return rec_err(err, "%s: no name left for its log", part);
	if (rename(part, dst)) {
		rec_err(err, "%s: %s", dst, strerror(errno));
		free(dst);
		return -1;
	}
	*path = dst;
	return 0;
}

/**
 * rec_log_compact() - compress a log's body again, at zstd @level
 * @path: the log; replaced only by a smaller one with the same events
 * @level: zstd level, 1 to 19
 * @before: its size
 * @after: its size now (@before if it was left alone)
 * @err: the error message, "PATH:OFFSET: what"
 *
 * The log is read and decoded whole first: a log that does not decode
 * is an error and is left as it is. The header stays but for body_len.
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_compact(const char *path, int level, size_t *before, size_t *after,
		    char **err)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct deter_log_header hdr;
	uint8_t *raw = NULL, *z = NULL;
	struct rec_log *log = NULL;
	size_t zcap, zlen, rawlen;
	struct stat st;
	int ret = -1;

	if (!cctx)
		return rec_err(err, "out of memory");
	/* Replacing a link would cut it, or move the log out from under it. */
	if (lstat(path, &st)) {
		rec_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		rec_err(err, "%s: not a regular file with one link; left as it is", path);
		goto out;
	}
	log = rec_log_read(path, err);
	if (!log)
		goto out;
	hdr = log->hdr;
	*before = *after = sizeof(hdr) + hdr.body_len;
	/* The recorder's chunks, as one: one frame, one set of tables. */
	if (rec_log_encode(log->evs, log->nevs, log->states, &raw, &rawlen, err))
		goto out;
	if (rawlen > UINT32_MAX) {
		rec_err(err, "%s: body of %zu bytes: too large for one chunk", path, rawlen);
		goto out;
	}
	hdr.body_raw_len = rawlen;
	zcap = rec_log_zbound(rawlen);
	z = malloc(zcap);
	if (!z) {
		rec_err(err, "out of memory");
		goto out;
	}
	zlen = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(zlen))
		zlen = rec_log_zcompress(cctx, z, zcap, raw, rawlen);
	if (ZSTD_isError(zlen)) {
		rec_err(err, "%s: zstd: %s", path, ZSTD_getErrorName(zlen));
		goto out;
	}
	ret = 0;
	if (zlen >= hdr.body_len)
		goto out;
	hdr.body_len = zlen;
	ret = rec_log_put(path, &hdr, z, zlen, err);
	if (!ret)
		*after = sizeof(hdr) + zlen;
out:
	rec_log_free(log);
	ZSTD_freeCCtx(cctx);
	free(raw);
	free(z);
	return ret;
}

