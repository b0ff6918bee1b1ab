/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The correctness oracles of luf.ko's deferred flushes, shared by the
 * luf_reuse, luf_write, luf_unmap, luf_fault, luf_nofault and luf_lifecycle
 * programs (correct.c, correct_rd.c).  Each test that guards a flush of the
 * module fails when that flush is removed on purpose (debug_break).
 *
 * Every test runs with a freshly loaded module, enabled=1, migrc_enabled=1
 * and max_defer_ms=60000, so that only the flush under test (not the timer)
 * can settle what reclaim or migration deferred.  Three reader threads
 * pinned on CPUs 1-3 spin over a 16-page read-only mapping and check every
 * 8-byte word; the main thread runs on CPU 0.  A word of a test file at
 * word index i (file offset / 8) of generation g is
 *	MAGIC (24 bits) | i (24 bits) | g (16 bits)
 * so old, new, reused and foreign content are told apart.  QEMU TCG keeps a
 * stale TLB entry until the guest flushes that vCPU's TLB, so a missing
 * flush shows up at once, millions of times a second, as long as nothing
 * else flushes the reader's CPU first.  Things that do: another task on the
 * CPU (CR3 switch), and any kernel thread, since the deferred unmap moved
 * the mm's tlb_gen and coming back from lazy TLB mode then flushes.  So the
 * programs opt in to luf_quiet_cpus() (libluf: every movable kernel thread,
 * device interrupt and the unbound workqueues go to CPU 0, the per-CPU
 * vmstat work slows down; all restored at exit), keep the window between
 * the page-out and the change short, and in a broken run make up to
 * LUF_TRIES attempts per test.
 *
 * Each test pages its mapping out with MADV_PAGEOUT (reclaim) or, in the
 * variants named *_migrate, moves it to node 1 with move_pages(2) (MIGRC:
 * the source pages are the ones held), and first asserts that a deferral
 * really happened (make_deferred(): deferred_folios moved and held_pages or
 * pending_folios is nonzero); if not, it fails.  Then the oracle.
 *
 * Broken modes: every fixture with variants has `int brk` as the first
 * member of its variant: the debug_break mode that variant must catch (1:
 * held pages released without a flush; 2: no flush on a page-cache change;
 * 3: no flush on a write fault), 0 for none.  Mode 5 (pages freed while
 * pending are not held: the free path's pfn filter misses) ends like mode
 * 1, a reused page that a stale translation still reaches, and is caught
 * by the variants of mode 1.  With LUF_BREAK=<n> in the
 * environment luf.ko is loaded with allow_unsafe=1 and debug_break=<n>; a
 * test whose variant does not catch <n> SKIPs, and one that does passes
 * only if its oracle DID see the violation (luf_break.sh runs the modes).
 *
 * Across the u32 wrap: with LUF_GEN_START=<n> every load of luf.ko gets
 * gen_start=<n> (luf_gen_wrap.sh; without arguments a program then runs
 * only the tests that cycle through generations).
 *
 * LUF_KEEP_MODULE=1 loads luf.ko once and never unloads it: each test
 * starts and ends with LUF and MIGRC disabled (everything settled) instead
 * of a reload; without arguments only the tests that need no reload run.
 * The multi-threaded TCG pass of make check uses it: under QEMU 7.2
 * thread=multi, patching a static call while other vCPUs execute it can
 * leave a vCPU executing the int3 of the patch after it finished.
 *
 * Between the page-out and the change, nothing in the system may settle
 * the deferred flush by accident: no write fault (every writable page of
 * the test process is written once before the readers start, and
 * everything the window needs is allocated before it) and no output (any
 * page-cache write settles everything in normal mode and in broken modes
 * 1 and 3).
 *
 * LUF_CORRECT_MARK=1 writes "unmap", "counted" and "publish" to
 * /sys/kernel/tracing/trace_marker, to see in a trace what ran in the
 * window.
 */
#ifndef LUF_CORRECT_H
#define LUF_CORRECT_H

#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#ifdef LUF_CORRECT_NO_HARNESS
#include "libluf.h"
struct __test_metadata;
#else
#include "luf_harness.h"
#endif

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define NPAGES		16
#define NREADERS	3
#define HOLD_MS		500	/* readers keep checking this long after the change */
#define MIN_POST_PASSES	20	/* ... and at least this many passes each */
#define WORD_MAGIC	0x4c5543ULL	/* "LUC" */
#define POISON		0x504f49534f4e2121ULL	/* "POISON!!" */
#define BREAK_PARAM	LUF_MODULE_DIR "/parameters/debug_break"
#define STR_(x)		#x
#define STR(x)		STR_(x)

static inline uint64_t word(uint64_t i, unsigned int gen)
{
	return WORD_MAGIC << 40 | (i & 0xffffff) << 16 | (gen & 0xffff);
}

/* A generation that differs from run to run, and whose successor differs */
static inline unsigned int first_gen(void)
{
	return ((unsigned int)getpid() * 7 + 3) & 0x7ffe;
}

/* ---- readers --------------------------------------------------------- */

enum rd_mode {
	RD_CONTENT,	/* reads must see old or new content (new once published) */
	RD_FAULT,	/* reads of [flo, fhi) must fault once published */
};

/* The readers of an oracle: libluf's engine and what its checks compare */
struct rd_ctl {
	struct luf_rd rd;
	enum rd_mode mode;
	unsigned int old_gen, new_gen;
	size_t zlo, zhi;	/* words that read zero once published */
	size_t flo, fhi;	/* RD_FAULT: words that must fault once published */
	bool fault_ok_before;	/* faults allowed before the publication */
};

struct rd_sum {
	uint64_t passes, post_passes, faults, post_faults, stale, corrupt;
	uint64_t poison, bad_fault, read_after;
};

/* ---- module, counters ------------------------------------------------ */

/* How a test makes the kernel unmap its read-only mapped pages */
enum how {
	BY_PAGEOUT,	/* reclaim: MADV_PAGEOUT */
	BY_MIGRATION,	/* MIGRC: move_pages(2) to MIGRATE_NODE */
	BY_DEMOTION,	/* MIGRC: memory.reclaim of our memcg, demotion on */
};

#define MIGRATE_NODE	1
/*
 * Whether a deferral survives until it is checked, or splice steals a
 * page, depends on what the other CPUs do meanwhile (make_deferred(),
 * luf_reuse steal): such a try is made again (LUF_TRIES, libluf.h).  A
 * stale entry lives until something flushes the reader's CPU, and the
 * deferred unmap moved the mm's tlb_gen, so a kernel thread that runs on a
 * reader CPU in the window (lazy TLB, then back) flushes it too: in a
 * broken run a test makes up to LUF_TRIES attempts and passes at the first
 * that catches the violation.  A normal run makes one attempt.
 */

struct outcome {
	uint64_t bad;		/* violations the oracle saw */
	uint64_t errors;	/* reader errors (unexpected faults) */
	int attempts;
	uint64_t bad_at[LUF_TRIES];
};

/*
 * The body of a test with attempts: @once(_metadata, self, variant, &s)
 * makes one attempt and fills the struct rd_sum s; the violations the
 * oracle saw are the stale and corrupt words read (@what: their meaning).
 */
#define RUN_ATTEMPTS(once, what) do {					\
	struct outcome o_ = { 0 };					\
	struct rd_sum s;						\
	int i_;								\
									\
	for (i_ = 0; i_ < nr_attempts(); i_++) {			\
		settle(i_);						\
		once(_metadata, self, variant, &s);			\
		if (attempt_done(&o_, i_, s.stale + s.corrupt, s.bad_fault)) \
			break;						\
	}								\
	verdict(_metadata, &o_, what);					\
} while (0)

#ifdef __aarch64__
#define ON_ARM64	1
#else
#define ON_ARM64	0
#endif
/*
 * Broken mode @n on x86, none on arm64, whose guest does not show the
 * violation (something of its own flushes first, or the test skips
 * there): the variant says why.
 */
#define BRK_X86(n)	(ON_ARM64 ? 0 : (n))

/*
 * Variants with .large = true: tfile_create() writes the whole file with
 * one write(2), which XFS turns into one large folio (16 pages: order 4),
 * and make_deferred() asserts that pages of large folios were deferred.
 * Set by the fixture's setup from its variant.
 */
extern bool g_large;

/* What every oracle fixture has: the readers, the test file, its mapping */
struct oracle {
	struct rd_ctl *rd;
	struct luf_file f;
	void *map;
};

/* correct.c */
const char *load_params(const char *base);
int module_fresh(const char *params);
void module_done(void);
void mark(const char *s);
void prefault_all(void);
void luf_prepare(struct __test_metadata *_metadata, int brk);
const char *how_skip(enum how how);
int demote_begin(void);
void demote_end(void);
int demote_deferred(const struct luf_ev *before);
int move_to_node(void *map, size_t len, int node);
void make_deferred(struct __test_metadata *_metadata, enum how how,
		   void *map, size_t len, struct luf_ev *before,
		   struct luf_ev *after, bool need_held);
/*
 * The window opens: the readers of @rd start over the @len bytes at @map,
 * then make_deferred() unmaps them.
 */
void assert_still_deferred(struct __test_metadata *_metadata,
			   const struct luf_ev *before, const char *what);
void open_window(struct __test_metadata *_metadata, struct rd_ctl *rd,
		 void *map, size_t len, enum how how, struct luf_ev *before,
		 struct luf_ev *after, bool need_held);
/*
 * FIXTURE_SETUP: swap on LUF_SWAP_DEV, and *@on, or SKIP without it;
 * FIXTURE_TEARDOWN: swap_off() turns it off again if *@on.
 */
void swap_on(struct __test_metadata *_metadata, bool *on);
void swap_off(struct __test_metadata *_metadata, bool *on);
int tfile_create(struct luf_file *f, const char *dir, const char *tag,
		 size_t npages, unsigned int gen);
int tfile_charge_cg(const struct luf_file *f);
/* map_file()'s alignment: a PMD on x86 and on arm64 with 4 KiB pages */
#define MAP_ALIGN	(2UL << 20)
void *map_file(struct luf_file *f, int prot, int flags);
void *anon_buf(size_t len);
int nr_attempts(void);
void settle(int i);
bool attempt_done(struct outcome *o, int i, uint64_t bad,
		  uint64_t errors);
void verdict(struct __test_metadata *_metadata, const struct outcome *o,
	     const char *what);
void ev_report(const struct luf_ev *e0, const struct luf_ev *e1,
	       const struct luf_ev *e2, const char *what);
void oracle_check(struct __test_metadata *_metadata, struct rd_ctl *rd,
		  const struct luf_ev *e0, const struct luf_ev *e1, struct luf_ev *e2,
			 const char *what, struct rd_sum *s);
void oracle_release(struct oracle *o);
void oracle_setup(struct __test_metadata *_metadata, struct oracle *o,
		  int brk, const char *dir, enum how how);

/* correct_rd.c: readers on CPUs 1..NREADERS (rd_stop(NULL) is fine) */
struct rd_ctl *rd_alloc(void);
void rd_stop(struct rd_ctl *c);
int rd_start(struct rd_ctl *c, const void *base, size_t words);
int rd_pause(struct rd_ctl *c);
void rd_resume(struct rd_ctl *c);
void rd_publish(struct rd_ctl *c);
bool rd_hold(struct rd_ctl *c);
void rd_summary(struct rd_ctl *c, struct rd_sum *s);

extern int g_break;
extern unsigned long g_gen_start;
extern bool g_keep;
extern size_t ps;
extern char g_cg[256];

/*
 * The start of main() of a correctness program: the environment (above),
 * luf_quiet_cpus(), and the arguments for test_harness_run() (*@argc and
 * the return value).  Without arguments, @wrap (with LUF_GEN_START) and
 * @keep (with LUF_KEEP_MODULE=1) are the harness filter arguments ("-f",
 * "fixture", "-r", "fixture.variant.test", ..., NULL) of the tests that
 * run in that mode; NULL: all of them.
 */
char **luf_correct_args(int *argc, char **argv, const char *const *wrap,
			const char *const *keep);

#define LUF_CORRECT_MAIN(wrap, keep)					\
	int main(int argc, char **argv)					\
	{								\
		char **av = luf_correct_args(&argc, argv, wrap, keep);	\
									\
		return test_harness_run(argc, av);			\
	}

#endif /* LUF_CORRECT_H */
