/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's connection logs: encoding events into a log file
 * and decoding them back, strictly. Not thread-safe per object, and
 * rec_log_write() not at all (it keeps one compression context); errors
 * come back as a message in *err (caller frees) naming file and offset.
 */
#ifndef _REC_LOG_H
#define _REC_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "deter_abi.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* One event of a connection, in memory. */
struct rec_ev {
	uint32_t seq;		/* per-socket sequence number */
	uint16_t type;		/* enum deter_ev_type, or DETER_EV_STATE */
	uint16_t sub;		/* type-specific, see deter_abi.h */
	uint64_t a, b, c;	/* type-specific; STATE: a indexes states */
};

/* The values of a STATE event (enum deter_state_field). */
struct rec_state {
	uint64_t v[DETER_ST_MAX];
};

/* A record's tag is type << 4 | sub: an event type, or one of these. */
enum {
	REC_LOG_RUN = 0,	/* repeat the previous; sub: its event type */
	REC_LOG_SEQGAP = 14,	/* the next record's seq skips (format 4) */
	REC_LOG_CALLREF = 15,	/* a CALL from the dictionary */
};

/*
 * Where a log body's bytes go, per record tag (stat[type][sub]): records,
 * the events they stand for, and their encoded bytes.
 */
struct rec_log_stat {
	uint32_t records, events;
	uint64_t bytes;
};

struct rec_log {
	struct deter_log_header hdr;
	struct rec_ev *evs;
	size_t nevs;
	struct rec_state *states;
	size_t nstates;
	struct rec_log_stat stat[16][16];
	uint32_t stat_index;	/* bytes of the body's stream lengths */
	uint32_t nchunks;	/* chunks of the body (format 9 on; else 1) */
};

/* enum deter_sysctl as userspace sees it; a CONFIG SYSCTL is id << 32 | value. */
struct rec_sysctl {
	const char *name;	/* under net.ipv4, or net.core if core */
	int elem;		/* element of a vector (tcp_rmem), or -1 */
	int sgn;		/* value is signed */
	int core;		/* under net.core: the host's, not a namespace's */
	int route;		/* a metric of the connection's route (ip route) */
	const char *module;	/* a congestion control's module parameter */
};

extern const struct rec_sysctl rec_sysctls[DETER_SYSCTL_MAX];
extern const char *const rec_tcpopts[DETER_TCPOPT_MAX];
extern const char *const rec_call_names[DETER_ABI_CALL_MAX];
const char *rec_setsockopt_name(uint64_t opt);
const char *rec_missing_what(uint64_t why);
long long rec_tcpopt_value(uint64_t a);
void rec_cc_name(uint64_t a, char name[DETER_CC_BYTES + 1]);
int rec_param_parse(const char *s, long long *v);
void rec_sysctl_path(const struct rec_sysctl *sc, char *buf, size_t len);
void rec_settings_changed(const struct rec_log *log, size_t at, char *buf, size_t len);
void rec_log_cc_params(const struct rec_log *log, int used[DETER_SYSCTL_MAX]);

static inline const char *rec_sysctl_dir(const struct rec_sysctl *sc)
{
	return sc->module ? sc->module : sc->route ? "route" :
	       sc->core ? "net.core" : "net.ipv4";
}

static inline long long rec_sysctl_value(uint64_t a)
{
	return rec_sysctls[a >> 32].sgn ? (long long)(int32_t)a : (long long)(uint32_t)a;
}

int rec_err(char **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rec_log_encode(const struct rec_ev *evs, size_t n,
		   const struct rec_state *states, uint8_t **out, size_t *len,
		   char **err);
int rec_log_encode_v(const struct rec_ev *evs, size_t n,
		     const struct rec_state *states, unsigned int version,
		     uint8_t **out, size_t *len, char **err);
/* An encoder that goes on from one batch of events to the next. */
struct rec_log_enc;
struct rec_log_enc *rec_log_enc_new(unsigned int version);
int rec_log_enc_add(struct rec_log_enc *enc, const struct rec_ev *evs, size_t n,
		    const struct rec_state *states, char **err);
size_t rec_log_enc_pending(const struct rec_log_enc *enc);
int rec_log_enc_chunk(struct rec_log_enc *enc, uint8_t **out, size_t *len,
		      char **err);
void rec_log_enc_free(struct rec_log_enc *enc);
int rec_log_decode(const uint8_t *buf, size_t len, unsigned int version,
		   uint32_t nevents, struct rec_log *log, char **err);
/* zstd level of the logs rec_log_write() writes; 0: deter's default. */
extern int rec_log_zstd_level;

void rec_log_write_end(void);
int rec_log_write(const char *dir, struct deter_log_header *hdr,
		  const struct rec_ev *evs, size_t n,
		  const struct rec_state *states, char **path, char **err);
/*
 * A log written while its connection goes on; bounded memory: a chunk
 * (a zstd frame) per rec_log_chunk_bytes encoded, the frames moved to a
 * part file per rec_log_spill_bytes (test knobs).
 */
extern size_t rec_log_chunk_bytes, rec_log_spill_bytes;
/* What one log holds at most (test knobs): events, encoded bytes. */
extern size_t rec_log_max_events;
extern uint64_t rec_log_max_raw;
struct rec_log_writer;
struct rec_log_writer *rec_log_writer_new(void);
int rec_log_writer_full(const struct rec_log_writer *w, size_t n);
int rec_log_writer_add(struct rec_log_writer *w, const char *dir,
		       const struct deter_log_header *hdr,
		       const struct rec_ev *evs, size_t n,
		       const struct rec_state *states, char **err);
int rec_log_writer_finish(struct rec_log_writer *w, const char *dir,
			  struct deter_log_header *hdr, char **path, char **err);
void rec_log_writer_free(struct rec_log_writer *w);
void rec_log_writer_drop(struct rec_log_writer *w);
int rec_log_recover(const char *part, char **path, struct deter_log_header *hdr,
		    char **err);
int rec_log_is_part(const char *path);
int rec_log_check_header(const char *path, const struct deter_log_header *h,
			 off_t size, char **err);
int rec_log_read_header(const char *path, struct deter_log_header *hdr,
			char **err);
struct rec_log *rec_log_read(const char *path, char **err);
int rec_log_compact(const char *path, int level, size_t *before, size_t *after,
		    char **err);
void rec_log_free(struct rec_log *log);
const char *rec_log_status_str(uint32_t status, char *buf, size_t len);
int rec_log_flagged(const struct deter_log_header *h);

#endif /* _REC_LOG_H */
