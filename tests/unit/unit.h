/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter's userspace unit tests: each test_*() function is
 * one TAP test point, run by UNIT_RUN() from the test's main(); failed
 * checks print where and what. main() returns unit_done().
 */
#ifndef _UNIT_H
#define _UNIT_H

#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int unit_failed_checks;	/* checks failed in the running test */
static int unit_tests;		/* tests run */
static int unit_failed;		/* tests with a failed check */

#define UNIT_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			printf("# %s:%d: check failed: %s\n",		\
			       __FILE__, __LINE__, #cond);		\
			unit_failed_checks++;				\
		}							\
	} while (0)

#define UNIT_CHECK_EQ(a, b)						\
	do {								\
		unsigned long long _a = (a), _b = (b);			\
		if (_a != _b) {						\
			printf("# %s:%d: %s: expected %llu vs actual %llu\n", \
			       __FILE__, __LINE__, #a, _b, _a);		\
			unit_failed_checks++;				\
		}							\
	} while (0)

#define UNIT_RUN(fn)							\
	do {								\
		unit_failed_checks = 0;					\
		fn();							\
		unit_tests++;						\
		if (unit_failed_checks)					\
			unit_failed++;					\
		printf("%s %d - %s\n", unit_failed_checks ? "not ok" : "ok", \
		       unit_tests, #fn);				\
	} while (0)

static inline int unit_done(void)
{
	printf("1..%d\n", unit_tests);
	return unit_failed ? 1 : 0;
}

#endif /* _UNIT_H */
