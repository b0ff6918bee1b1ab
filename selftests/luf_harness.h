/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kselftest_harness.h for the luf tests, which are built with
 * -Wall -Wextra: the 6.12 harness has an unused signal handler
 * parameter (-Wunused-parameter).
 *
 * Its TEST_F() wrapper tells the test process from its parent by the
 * fork() result, which a failed ASSERT's longjmp() leaves indeterminate;
 * the harness the tests are built against carries the fix,
 * selftests/patches/0001-selftests-harness-run-the-teardown-in-the-test-proce.patch
 * (applied by scripts/selftests.sh, ready to send to kselftest).
 * -Wclobbered stays off for what else the wrapper keeps across setjmp().
 */
#ifndef LUF_HARNESS_H
#define LUF_HARNESS_H

/*
 * LUF_HARNESS_LIB: a file that uses the assertion macros for the tests of
 * another file of the same program but defines and runs no test itself
 * (correct.c).  The harness is written for one file per program: its
 * runner's few external symbols get other names there, and its static
 * test list stays empty and unused.
 */
#ifdef LUF_HARNESS_LIB
#define __active_test		luf_lib__active_test
#define __wait_for_test		luf_lib__wait_for_test
#define __run_test		luf_lib__run_test
#define _fixture_global		luf_lib__fixture_global
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"

#include "libluf.h"

#define REQUIRE_DIR(dir) do {						\
	if (!path_exists(dir))						\
		SKIP(return, "%s does not exist", dir);			\
} while (0)

/* @o: workload @kind's default options; SKIP unless this machine can run it */
#define LUF_WL_DEFAULTS(kind, o) do {					\
	luf_run_opts_default(o, kind);					\
	REQUIRE_WL(kind, o);						\
} while (0)

/* SKIP unless this machine has what workload @kind with @o needs */
#define REQUIRE_WL(kind, o) do {					\
	char why_[200];							\
									\
	if (luf_wl_missing(kind, o, why_, sizeof(why_)))		\
		SKIP(return, "%s", why_);				\
} while (0)

/*
 * Run workload @kind and log it; it must have run, its readers must have
 * made progress and never seen a word that is not the file's content.
 */
static inline void luf_run_ok(struct __test_metadata *_metadata,
			      enum luf_wl kind, const struct luf_run_opts *o,
			      struct luf_run_res *r)
{
	char prefix[32];
	int ret;

	ret = luf_run(kind, o, r);
	snprintf(prefix, sizeof(prefix), "%s: ", luf_wl_name(kind));
	luf_run_log(prefix, r);
	ASSERT_EQ(0, ret) TH_LOG("%s workload: %s", luf_wl_name(kind), r->err);
	ASSERT_EQ((uint64_t)0, r->bad_words)
		TH_LOG("readers saw words that are not the file's content");
	ASSERT_GT(r->pages_read, (uint64_t)0) TH_LOG("readers made no progress");
}

/*
 * luf_run_ok(), and the workload did its work: evicted, reclaimed,
 * migrated or demoted something (luf_wl_idle()).
 */
static inline void luf_run_worked(struct __test_metadata *_metadata,
				  enum luf_wl kind,
				  const struct luf_run_opts *o,
				  struct luf_run_res *r)
{
	const char *idle;

	luf_run_ok(_metadata, kind, o, r);
	idle = luf_wl_idle(kind, r);
	ASSERT_EQ(NULL, idle) TH_LOG("%s", idle);
}

/*
 * luf_run_worked() of workload @kind with its default options into @r;
 * SKIP unless this machine can run it.
 */
#define LUF_RUN_DEFAULT(kind, r) do {					\
	const enum luf_wl run_kind_ = (kind);				\
	struct luf_run_opts run_opts_;					\
									\
	LUF_WL_DEFAULTS(run_kind_, &run_opts_);				\
	luf_run_worked(_metadata, run_kind_, &run_opts_, r);		\
} while (0)

/*
 * x86 flushes remote TLBs with IPIs, counted in /proc/vmstat with
 * CONFIG_DEBUG_TLBFLUSH; arm64 broadcasts TLBIs, interrupts no CPU and
 * counts nothing there.
 */
#ifdef __x86_64__
#define LUF_FLUSH_IPIS	1
#else
#define LUF_FLUSH_IPIS	0
#endif

/* x86: the run sent remote TLB flushes (are the readers running?) */
static inline void luf_assert_remote_flushes(struct __test_metadata *_metadata,
					     const struct luf_run_res *r)
{
	if (!LUF_FLUSH_IPIS)
		return;
	ASSERT_TRUE(r->sys.has_tlb_vmstat)
		TH_LOG("/proc/vmstat has no nr_tlb_remote_flush (CONFIG_DEBUG_TLBFLUSH?)");
	ASSERT_GT(r->sys.tlb_remote_flush, (uint64_t)0)
		TH_LOG("no remote TLB flush: are the readers running?");
}

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
