/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kselftest_harness.h for the luf tests, which are built with
 * -Wall -Wextra -Werror: the 6.12 harness has an unused signal handler
 * parameter (-Wunused-parameter) and its TEST_F() wrapper keeps a local
 * across setjmp() (-Wclobbered, reported where TEST_F() is expanded, so
 * that one stays off for the whole test file).
 */
#ifndef LUF_HARNESS_H
#define LUF_HARNESS_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"

#include "libluf.h"

/* Standard main() for the luf tests: skip the binary when it cannot run. */
#define LUF_TEST_MAIN(need_module)					\
	int main(int argc, char **argv)					\
	{								\
		const char *why = luf_skip_reason(need_module);		\
									\
		/* listing or help needs neither root nor the module */	\
		if (argc > 1 && (!strcmp(argv[1], "-l") ||		\
				 !strcmp(argv[1], "-h")))		\
			why = NULL;					\
		if (why)						\
			ksft_exit_skip("%s\n", why);			\
		return test_harness_run(argc, argv);			\
	}

#endif /* LUF_HARNESS_H */
