/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the log library's error messages: a function that fails
 * returns -1 and hands its caller a malloc'd message in *err (the caller
 * frees it), which names what failed and where, "FILE:OFFSET: what".
 * Thread-safe.
 */
#ifndef _REC_ERR_H
#define _REC_ERR_H

int rec_err(char **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* _REC_ERR_H */
