/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every luf test program includes: the harness (with the fix in
 * patches/: a failed ASSERT's longjmp() must not lose the fork() result),
 * libluf, the workload assertions and the one main().  The 6.12 harness has
 * an unused parameter, and its wrapper keeps more across setjmp().
 */
#ifndef LUF_TEST_H
#define LUF_TEST_H

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

/*
 * After luf_wl_wait() (status @st): log, SKIP as the workload did; it ran,
 * its readers progressed and read only the file, and with @worked it unmapped.
 */
static inline void luf_wl_check(struct __test_metadata *_metadata,
				const struct luf_wl *w, int st, bool worked)
{
	luf_wl_log("luf_workload: ", w);
	if (st == KSFT_SKIP)	/* its output is the reason */
		SKIP(return, "%.*s", (int)strcspn(w->out, "\n"), w->out);
	ASSERT_EQ(0, st) TH_LOG("luf_workload failed (above)");
	ASSERT_EQ(0, luf_wl_get(w, "bad_words"))
		TH_LOG("readers saw words that are not the file's content");
	ASSERT_LT(0, luf_wl_get(w, "pages_read")) TH_LOG("readers made no progress");
	if (worked)
		ASSERT_EQ(0, luf_wl_get(w, "idle")) TH_LOG("the workload unmapped nothing");
}

/* Run luf_workload with @args (the workload first) into @w: luf_wl_check() */
#define LUF_WL_RUN(w, worked, ...) do {					\
	const char *const wl_args_[] = { __VA_ARGS__, NULL };		\
	int wl_st_;							\
									\
	ASSERT_EQ(0, luf_wl_start(w, wl_args_));			\
	wl_st_ = luf_wl_wait(w, 0);					\
	luf_wl_check(_metadata, w, wl_st_, worked);			\
	if (_metadata->exit_code)					\
		return;							\
} while (0)

/* x86 counts its flush IPIs in /proc/vmstat (CONFIG_DEBUG_TLBFLUSH); arm64 broadcasts TLBIs */
#ifdef __x86_64__
#define LUF_FLUSH_IPIS	1
#else
#define LUF_FLUSH_IPIS	0
#endif

/* x86: the run @w sent remote TLB flushes (are the readers running?) */
static inline void luf_assert_remote_flushes(struct __test_metadata *_metadata,
					     const struct luf_wl *w)
{
	if (!LUF_FLUSH_IPIS)
		return;
	ASSERT_LE(0, luf_wl_get(w, "nr_tlb_remote_flush"))
		TH_LOG("/proc/vmstat has no nr_tlb_remote_flush (CONFIG_DEBUG_TLBFLUSH?)");
	ASSERT_LT(0, luf_wl_get(w, "nr_tlb_remote_flush"))
		TH_LOG("no remote TLB flush: are the readers running?");
}

/* The page size, set by main() */
static size_t ps __attribute__((unused));

/* Must a test of mode @brk catch this broken run's mode (REUSE's catch FILTER too)? */
static inline bool luf_brk_mine(int brk)
{
	int b = luf_env()->brk;

	return !b || b == brk || (b == BRK_FILTER && brk == BRK_REUSE);
}

/* SKIP a test that does not catch the broken mode of this run */
#define LUF_BREAK_SKIP(mode) do {					\
	if (!luf_brk_mine(mode))					\
		SKIP(return, "not a test of broken mode %d", luf_env()->brk); \
} while (0)

/*
 * luf.ko for a test of broken mode @brk (0: none; others skip in a broken
 * run), LUF and MIGRC on, max_defer_ms=60000, @cpus CPUs or SKIP; pinned to CPU 0.
 */
static inline void luf_prepare(struct __test_metadata *_metadata, int brk, int cpus)
{
	int ret;

	LUF_BREAK_SKIP(brk);
	if (nr_cpus() < cpus)
		SKIP(return, "needs %d CPUs", cpus);
	ret = luf_module_fresh_brk();
	ASSERT_EQ(0, ret) TH_LOG("loading %s (LUF_BREAK=%d): %s", luf_ko_path(),
				 luf_env()->brk, strerror(-ret));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	ASSERT_EQ(0, luf_knob_write(KNOB(migrc_enabled), "1"));
	ASSERT_EQ(0, pin_to_cpu(0));
	sync();
}

/* luf_main() flags */
#define LUF_NEED_MODULE	1	/* skip the program without luf.ko */
#define LUF_QUIET	2	/* luf_quiet_cpus() for quiet reader CPUs */

/*
 * main(): a bad LUF_* variable fails; it skips where it cannot run (a broken
 * run fails: the mode would go untested); LUF_KEEP_MODULE=1 loads luf.ko first.
 */
static inline int luf_main(int argc, char **argv, unsigned int flags)
{
	const struct luf_env *e = luf_env();
	const char *why;

	ps = luf_page_size();
	if (e->err[0])
		ksft_exit_fail_msg("%s\n", e->err);
	/* listing or help needs neither root nor the module */
	if (argc > 1 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-h")))
		return test_harness_run(argc, argv);
	why = luf_skip_reason(flags & LUF_NEED_MODULE);
	if (why && e->brk)
		ksft_exit_fail_msg("broken mode %d cannot run: %s\n", e->brk, why);
	if (why)
		ksft_exit_skip("%s\n", why);
	if (e->keep && (flags & LUF_NEED_MODULE) && !luf_is_loaded() && luf_load(""))
		ksft_exit_fail_msg("loading %s failed\n", luf_ko_path());
	if (flags & LUF_QUIET)
		luf_quiet_cpus();
	return test_harness_run(argc, argv);
}

#define LUF_MAIN(flags)							\
	int main(int argc, char **argv)					\
	{								\
		return luf_main(argc, argv, flags);			\
	}

#endif /* LUF_TEST_H */
