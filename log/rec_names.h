/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the names of a log's socket calls, socket options,
 * congestion controls and missing values (rec_names.c). Constant tables
 * and pure functions; thread-safe.
 */
#ifndef _REC_NAMES_H
#define _REC_NAMES_H

#include <stdint.h>

#include "deter_abi.h"

extern const char *const rec_tcpopts[DETER_TCPOPT_MAX];
extern const char *const rec_call_names[DETER_ABI_CALL_MAX];
const char *rec_setsockopt_name(uint64_t opt);
const char *rec_missing_what(uint64_t why);
long long rec_tcpopt_value(uint64_t a);
void rec_cc_name(uint64_t a, char name[DETER_CC_BYTES + 1]);

#endif /* _REC_NAMES_H */
