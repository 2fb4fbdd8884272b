// SPDX-License-Identifier: GPL-2.0
/*
 * Reading log files: the header checked against the file, the frames
 * decompressed, the body decoded (rec_dec.c), all strictly.
 *
 * A log file (rec_write.c) is a struct deter_log_header and the body in
 * zstd frames. Before it trusts a byte of the body, the reader checks
 * the header, each failure one line naming the file and the offset of
 * the field at fault:
 *
 *   0     magic "DETERLOG"
 *   8     the log format: this deter reads DETER_ABI_VERSION only
 *   12    header_len: sizeof(struct deter_log_header)
 *   112   nevents: at most REC_LOG_MAX_EVENTS
 *   ...   the file's size: the header's and body_len (a part file, a log
 *         being written, may have a frame past what its header says)
 *   164   the strings (cc, host) NUL-terminated
 *
 * then that every frame says its decompressed size and the sizes sum to
 * body_raw_len, decompresses, and decodes exactly nevents events, an
 * error in the body naming "FILE:body+N". deter ls reads headers only
 * (rec_log_read_header()); deter show and replay read logs whole
 * (rec_log_read()).
 */
#include "rec_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "rec_dec.h"
#include "rec_err.h"

_Static_assert(sizeof(struct deter_log_header) == 248, "log header layout");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "logs are little-endian; add conversions for this host");

/**
 * rec_log_is_part() - is @path a part file (a log being written, or left
 *	by a killed recorder: DIR/.ID.dlog.part)?
 * @path: a file name, with or without its directory
 */
int rec_log_is_part(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	return base[0] == '.' && len > 10 && !strcmp(base + len - 10, ".dlog.part");
}

/**
 * rec_log_check_header() - check a log's header against its file's size
 * @path: the log, for the message (and: is it a part file?)
 * @h: the header
 * @size: the file's size, or -1 not to check it
 * @err: the error message, "PATH:OFFSET: what", or NULL for none
 *
 * Return: 0, or -1 (with *err set).
 */
int rec_log_check_header(const char *path, const struct deter_log_header *h,
			 off_t size, char **err)
{
	if (memcmp(h->magic, DETER_LOG_MAGIC, sizeof(h->magic)))
		return rec_err(err, "%s:0: not a deter log (bad magic)", path);
	if (h->version != DETER_ABI_VERSION)
		return rec_err(err,
			       "%s:8: log format %u is not supported (this deter reads format %d)",
			       path, h->version, DETER_ABI_VERSION);
	if (h->header_len != sizeof(*h))
		return rec_err(err, "%s:12: header length %u, expected %zu",
			       path, h->header_len, sizeof(*h));
	if (h->nevents > REC_LOG_MAX_EVENTS)
		return rec_err(err, "%s:112: %u events is more than a log can hold",
			       path, h->nevents);
	/* A log being written (a part file) may have a frame past its header's. */
	if (size >= 0 && (uint64_t)size != sizeof(*h) + (uint64_t)h->body_len &&
	    !(rec_log_is_part(path) && (uint64_t)size > sizeof(*h) + (uint64_t)h->body_len))
		return rec_err(err, "%s:%lld: file is %lld bytes, header says %zu",
			       path, (long long)(size < (off_t)sizeof(*h) + h->body_len ?
			       size : (off_t)sizeof(*h) + h->body_len),
			       (long long)size, sizeof(*h) + h->body_len);
	if (h->cc[sizeof(h->cc) - 1] || h->host[sizeof(h->host) - 1])
		return rec_err(err, "%s:164: unterminated string in header", path);
	return 0;
}

/**
 * rec_log_read_header() - read and check a log's header only
 * @path: the log
 * @hdr: filled
 * @err: the error message, "PATH:OFFSET: what"
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_read_header(const char *path, struct deter_log_header *hdr,
			char **err)
{
	struct stat st;
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rec_err(err, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return rec_err(err, "%s: %s", path, strerror(errno));
	}
	got = read(fd, hdr, sizeof(*hdr));
	close(fd);
	if (got < 0)
		return rec_err(err, "%s: %s", path, strerror(errno));
	if (got < 8 || memcmp(hdr->magic, DETER_LOG_MAGIC, 8))
		return rec_err(err, "%s:0: not a deter log (bad magic)", path);
	if ((size_t)got < sizeof(*hdr))
		return rec_err(err, "%s:%zd: truncated header (%zd of %zu bytes)",
			       path, got, got, sizeof(*hdr));
	return rec_log_check_header(path, hdr, st.st_size, err);
}

/*
 * The decompressed size of the zstd frames at @z, one per chunk, each of
 * which must say its size; else ZSTD_CONTENTSIZE_ERROR.
 */
static unsigned long long rec_log_frames_size(const void *z, size_t zlen)
{
	unsigned long long sum = 0, one;
	size_t at = 0, flen;

	do {
		flen = ZSTD_findFrameCompressedSize((const char *)z + at, zlen - at);
		one = ZSTD_getFrameContentSize((const char *)z + at, zlen - at);
		if (ZSTD_isError(flen) || one >= ZSTD_CONTENTSIZE_ERROR ||
		    one > UINT32_MAX - sum)
			return ZSTD_CONTENTSIZE_ERROR;
		sum += one;
		at += flen;
	} while (at < zlen);
	return sum;
}

/**
 * rec_log_read() - read, check and decode a whole log
 * @path: the log
 * @err: the error message, "PATH:OFFSET: what"
 *
 * Return: the log (rec_log_free() it), or NULL with *err set.
 */
struct rec_log *rec_log_read(const char *path, char **err)
{
	struct rec_log *log = calloc(1, sizeof(*log));
	unsigned long long rawlen;
	uint8_t *z = NULL, *raw = NULL;
	char *derr = NULL;
	FILE *f = NULL;
	size_t got;
	int ret = -1;

	if (!log) {
		rec_err(err, "out of memory");
		return NULL;
	}
	if (rec_log_read_header(path, &log->hdr, err))
		goto out;
	f = fopen(path, "rb");
	z = malloc(log->hdr.body_len ? log->hdr.body_len : 1);
	raw = malloc(log->hdr.body_raw_len ? log->hdr.body_raw_len : 1);
	if (!f || !z || !raw) {
		rec_err(err, "%s: %s", path, f ? "out of memory" : strerror(errno));
		goto out;
	}
	if (fseek(f, sizeof(log->hdr), SEEK_SET) ||
	    fread(z, 1, log->hdr.body_len, f) != log->hdr.body_len) {
		rec_err(err, "%s:%zu: truncated body", path, sizeof(log->hdr));
		goto out;
	}
	rawlen = rec_log_frames_size(z, log->hdr.body_len);
	if (rawlen != log->hdr.body_raw_len) {
		rec_err(err, "%s:%zu: corrupt body (zstd frame size %lld, header says %u)",
			path, sizeof(log->hdr), (long long)rawlen, log->hdr.body_raw_len);
		goto out;
	}
	got = ZSTD_decompress(raw, log->hdr.body_raw_len, z, log->hdr.body_len);
	if (ZSTD_isError(got) || got != log->hdr.body_raw_len) {
		rec_err(err, "%s:%zu: corrupt body (%s)", path, sizeof(log->hdr),
			ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
		goto out;
	}
	if (rec_log_decode(raw, got, log->hdr.nevents, log, &derr)) {
		rec_err(err, "%s:%s", path, derr ? derr : "decode error");
		free(derr);
		goto out;
	}
	ret = 0;
out:
	if (f)
		fclose(f);
	free(z);
	free(raw);
	if (ret) {
		rec_log_free(log);
		return NULL;
	}
	return log;
}

/** rec_log_free() - free a log rec_log_read() returned (NULL: nothing) */
void rec_log_free(struct rec_log *log)
{
	if (!log)
		return;
	free(log->evs);
	free(log->states);
	free(log);
}

/**
 * rec_log_flagged() - whether deter ls --flagged lists a log
 * @h: its header
 *
 * Return: 1 for a connection with retransmissions, RTOs, drops, CE marks
 * or zero windows, or a log that is incomplete or says its settings
 * changed; else 0.
 */
int rec_log_flagged(const struct deter_log_header *h)
{
	return h->total_retrans || h->total_rto || h->drops || h->ce_marks ||
	       h->zero_wnd || h->status;
}

/**
 * rec_log_status_str() - a log header's status, as deter ls prints it
 * @status: DETER_LOG_* bits
 * @buf: where to write it
 * @len: its size
 *
 * Return: @buf: "complete", or "incomplete," and the reasons; then
 * ",settings-changed" if a setting changed during the connection.
 */
const char *rec_log_status_str(uint32_t status, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s%s%s",
		 status & DETER_LOG_INCOMPLETE ? "incomplete" : "complete",
		 status & DETER_LOG_LOST_EVENTS ? ",lost-events" : "",
		 status & DETER_LOG_NOT_CLOSED ? ",not-closed" : "",
		 status & DETER_LOG_NO_IDENTITY ? ",no-identity" : "",
		 status & DETER_LOG_MISSING_VALUES ? ",missing-values" : "",
		 status & DETER_LOG_CUT ? ",cut" : "",
		 status & DETER_LOG_UNSEEN_CALLS ? ",unseen-calls" : "",
		 status & DETER_LOG_SETTINGS_CHANGED ? ",settings-changed" : "");
	return buf;
}
