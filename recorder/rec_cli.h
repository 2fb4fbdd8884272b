/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for what the recording side's subcommands (record, ls, show,
 * compact, index) share: number arguments, a log directory's listing
 * with its unreadable entries said, a connection id resolved to its log,
 * and a header's address and start time as text. Errors are said through
 * deter_err.h (single threaded, like the subcommands).
 */
#ifndef _REC_CLI_H
#define _REC_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "rec_index.h"

/* Where logs are written and looked for unless -o or -d says otherwise. */
#define REC_DEFAULT_DIR "deter-logs"

int rec_cli_num(const char *s, unsigned long long max, unsigned long long *v);
int rec_cli_zstd_level(const char *s, int *level);
void rec_cli_addr(char *buf, size_t len, uint32_t addr, uint16_t port);
void rec_cli_time(char *buf, size_t len, uint64_t real_ns);
void rec_cli_report(const char *msg, void *bad);
int rec_cli_scan(const char *dir, int flags, struct rec_entry **out, size_t *n,
		 int *bad);
int rec_cli_is_path(const char *id);
char *rec_cli_find_in(const char *dir, const struct rec_entry *e, size_t n,
		      const char *id);
char *rec_cli_find(const char *dir, const char *id);

#endif /* _REC_CLI_H */
