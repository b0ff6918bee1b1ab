/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The correctness oracles of luf.ko's deferred flushes, shared by the
 * luf_reuse, luf_write, luf_unmap, luf_fault, luf_nofault and
 * luf_lifecycle programs (each includes this header once).
 * Documentation/mm/luf/testing.rst has the broken modes, the gen_wrap and
 * keep runs and the LUF_* variables.
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
 * programs opt in to luf_quiet_cpus(), keep the window between the
 * page-out and the change short, and in a broken run make up to LUF_TRIES
 * attempts per test.
 *
 * Each test pages its mapping out with MADV_PAGEOUT (reclaim) or, in the
 * variants named *_migrate, moves it to node 1 with move_pages(2) (MIGRC:
 * the source pages are the ones held), and first asserts that a deferral
 * really happened (make_deferred()); if not, it fails.  Then the oracle.
 * Every fixture with variants has `int brk` as the first member of its
 * variant: the debug_break mode that variant must catch, 0 for none; in a
 * broken run (LUF_BREAK) a test of that mode passes only if its oracle saw
 * the violation, and the others skip.
 *
 * Between the page-out and the change, nothing in the system may settle
 * the deferred flush by accident: no write fault (every writable page of
 * the test process is written once before the readers start, and
 * everything the window needs is allocated before it) and no output (any
 * page-cache write settles everything in normal mode and in broken modes
 * 1 and 3).
 */
#ifndef LUF_ORACLE_H
#define LUF_ORACLE_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/wait.h>

#include "luf_test.h"

#define NPAGES		16
#define NREADERS	3
#define HOLD_MS		500	/* readers keep checking this long after the change */
#define MIN_POST_PASSES	20	/* ... and at least this many passes each */
#define WORD_MAGIC	0x4c5543ULL	/* "LUC" */
#define POISON		0x504f49534f4e2121ULL	/* "POISON!!" */
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

/* A broken run makes up to LUF_TRIES attempts, a normal run one */

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
 * Set by oracle_setup() (NEED_LARGE).
 */
static bool g_large __attribute__((unused));

/* What every oracle fixture has: the readers, the test file, its mapping */
struct oracle {
	struct rd_ctl *rd;
	struct luf_file f;
	void *map;
	bool swapon;		/* swap_on() turned swap on */
	char mthp_saved[32];	/* mthp_on(): the 64 KiB knob's setting */
};

/* map_file()'s alignment: a PMD on x86 and on arm64 with 4 KiB pages */
#define MAP_ALIGN	(2UL << 20)

/* ---- readers --------------------------------------------------------- */

static inline const struct rd_ctl *ctl_of(const struct luf_rd *rd)
{
	return (const struct rd_ctl *)rd;	/* the first member */
}

static inline uint64_t rd_old(const struct rd_ctl *c, size_t i)
{
	return word(i, c->old_gen);
}

static inline uint64_t rd_new(const struct rd_ctl *c, size_t i)
{
	return i >= c->zlo && i < c->zhi ? 0 : word(i, c->new_gen);
}

/*
 * Every byte of @v is the byte of @a or of @b: a word read while the
 * kernel changed it in place (x86's memset() zeroes a punched hole or a
 * truncated tail byte by byte, rep stosb, and under multi-threaded TCG a
 * reader on another vCPU sees the word half done).
 */
static inline bool rd_torn(uint64_t v, uint64_t a, uint64_t b)
{
	uint64_t m;

	for (m = 0xff; m; m <<= 8)
		if ((v & m) != (a & m) && (v & m) != (b & m))
			return false;
	return true;
}

static inline int rd_check(const struct luf_rd *rd, size_t i, uint64_t v, bool pub)
{
	const struct rd_ctl *c = ctl_of(rd);

	if (c->mode == RD_FAULT) {
		if (pub && i >= c->flo && i < c->fhi)
			return LUF_RD_READ_AFTER;
		return v == rd_old(c, i) ? LUF_RD_OK : LUF_RD_CORRUPT;
	}
	if (v == rd_new(c, i))
		return LUF_RD_OK;
	if (v == rd_old(c, i))
		return pub ? LUF_RD_STALE : LUF_RD_OK;
	/* the change itself, read before it was published */
	if (!pub && rd_torn(v, rd_old(c, i), rd_new(c, i)))
		return LUF_RD_OK;
	return LUF_RD_CORRUPT;
}

static inline bool rd_fault_ok(const struct luf_rd *rd, size_t i, bool pub)
{
	const struct rd_ctl *c = ctl_of(rd);

	if (c->mode == RD_FAULT)
		return pub ? i >= c->flo && i < c->fhi : c->fault_ok_before;
	return !pub && c->fault_ok_before;
}

/* Fresh anonymous memory for @c, so that no write to it is a COW fault */
static inline struct rd_ctl *rd_alloc(void)
{
	struct rd_ctl *c;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->rd.check = rd_check;
	c->rd.fault_ok = rd_fault_ok;
	c->rd.mark = POISON;
	return c;
}

static inline void rd_summary(struct rd_ctl *c, struct rd_sum *s)
{
	static const char *const kind_name[] = {
		[LUF_RD_STALE] = "old content after the publication",
		[LUF_RD_CORRUPT] = "foreign content",
		[LUF_RD_BAD_FAULT] = "unexpected fault",
		[LUF_RD_READ_AFTER] = "successful read after the signal",
	};
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < NREADERS; i++) {
		struct luf_rd_stats *st = &c->rd.st[i];
		uint64_t stale = atomic_load(&st->bad[LUF_RD_STALE]);
		uint64_t corrupt = atomic_load(&st->bad[LUF_RD_CORRUPT]);
		uint64_t bad_fault = atomic_load(&st->bad[LUF_RD_BAD_FAULT]);
		uint64_t read_after = atomic_load(&st->bad[LUF_RD_READ_AFTER]);

		s->passes += atomic_load(&st->passes);
		s->post_passes += atomic_load(&st->post_passes);
		s->faults += st->faults;
		s->post_faults += st->post_faults;
		s->stale += stale;
		s->corrupt += corrupt;
		s->poison += st->marked;
		s->bad_fault += bad_fault;
		s->read_after += read_after;
		note("reader %d (CPU %d): passes=%" PRIu64 " after=%" PRIu64
		     " faults=%" PRIu64 " stale=%" PRIu64 " corrupt=%" PRIu64
		     " read_after=%" PRIu64 " bad_fault=%" PRIu64
		     " preempted=%" PRIu64 " slept=%" PRIu64 "\n",
		     i, 1 + i, (uint64_t)atomic_load(&st->passes),
		     (uint64_t)atomic_load(&st->post_passes), st->faults,
		     stale, corrupt, read_after, bad_fault, st->preempted,
		     st->slept);
		if (st->have_first)
			note("  first: %s at word %zu (page %zu): 0x%016" PRIx64
			     " (want 0x%016" PRIx64 ", old 0x%016" PRIx64 ")\n",
			     kind_name[st->first_kind], st->first_idx,
			     st->first_idx / c->rd.wpp, st->first_val,
			     rd_new(c, st->first_idx), rd_old(c, st->first_idx));
	}
}

/* @s to trace_marker, with LUF_CORRECT_MARK set */
static inline void mark(const char *s)
{
	static int fd = -1;

	if (!luf_env()->mark)
		return;
	if (fd < 0)
		fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, s, strlen(s)) < 0)
		fd = -1;
}

/*
 * Grow the stack by 256 KiB and fault it in, then write every page of every
 * private writable mapping (and shared anonymous ones) once: the test runs
 * in a process forked from the harness, so its data, heap and stack pages
 * are copy-on-write, and a COW fault is a write fault, which settles every
 * deferred flush (and so would hide a broken file_change flush).
 */
static inline void prefault_all(void)
{
	char line[512], perms[8], path[256];
	unsigned long lo, hi, p;
	FILE *f;

	luf_prefault_stack(256 << 10);
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255[^\n]", &lo, &hi,
			   perms, path) < 3)
			continue;
		if (perms[0] != 'r' || perms[1] != 'w')
			continue;
		if (perms[3] == 's' && path[0] && strncmp(path, "/dev/zero", 9))
			continue;
		if (hi - lo > (64UL << 20))
			continue;
		for (p = lo; p < hi; p += ps) {
			volatile char *c = (volatile char *)p;

			*c = *c;
		}
	}
	fclose(f);
}

static inline const char *how_skip(enum how how)
{
	static char why[160];

	if (how == BY_MIGRATION && !numa_node_has_memory(MIGRATE_NODE))
		return "needs memory on NUMA node " STR(MIGRATE_NODE);
	if (how == BY_DEMOTION && !numa_demotion_possible(why, sizeof(why)))
		return why;
	if (how == BY_DEMOTION && !memcg_available())
		return "no memory controller in " LUF_CGROUP_ROOT;
	return NULL;
}

/*
 * Demotion: memcg g_cg with demotion enabled, from oracle_setup() until
 * oracle_teardown().  Only the test file's page
 * cache is charged to it (tfile_charge_cg()), so memory.reclaim of g_cg
 * unmaps nothing else of this mm: no ordinary batched flush of other
 * pages wipes the readers' TLBs behind the deferred one.
 */
static char g_cg[256] __attribute__((unused));
static char g_demotion_saved[16] __attribute__((unused));

static inline int demote_begin(void)
{
	char name[64];
	int err;

	snprintf(name, sizeof(name), "luf-correct-%d", getpid());
	err = memcg_create(name, g_cg, sizeof(g_cg));
	if (!err && read_file(LUF_DEMOTION_KNOB, g_demotion_saved,
			      sizeof(g_demotion_saved)) <= 0)
		err = -EIO;
	if (!err)
		err = write_file_str(LUF_DEMOTION_KNOB, "1");
	return err;
}

static inline void demote_end(void)
{
	if (g_demotion_saved[0])
		write_file_str(LUF_DEMOTION_KNOB, g_demotion_saved);
	g_demotion_saved[0] = '\0';
	if (g_cg[0])
		memcg_destroy(g_cg);
	g_cg[0] = '\0';
}

/*
 * memory.reclaim of the test's memcg until something was demoted with a
 * deferred flush (the first passes may only age the readers' pages: their
 * accessed bits are cleared without a flush, and a reader that keeps its
 * TLB entry does not set them again).  0 or -errno.
 */
static inline int demote_deferred(const struct luf_ev *before)
{
	uint64_t d;
	int i, err;

	for (i = 0; i < LUF_TRIES; i++) {
		err = memcg_write(g_cg, "memory.reclaim", "1M");
		if (err && err != -EAGAIN)
			return err;
		if (!luf_counter_read(CTR(deferred_folios), &d) && d > before->deferred)
			return 0;
	}
	return -EAGAIN;
}

/* move_pages(2) every page at @map to @node, NPAGES a call; 0 or -errno */
static inline int move_to_node(void *map, size_t len, int node)
{
	int ret = luf_move_to_node(map, len / ps, node, NPAGES, NULL);

	return ret > 0 ? -EAGAIN : ret;
}

/* The 64-bit entry of @pfn in @file (/proc/kpage*): 0 or -errno */
static inline int kpage_read(const char *file, uint64_t pfn, uint64_t *v)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, v, 8, pfn * 8) != 8)
		err = -EIO;
	close(fd);
	return err;
}

/*
 * What became of the page at @pfn, for a failure report: its
 * /proc/kpageflags bits (LRU 5, BUDDY 10, MMAP 11, COMPOUND_HEAD 15,
 * COMPOUND_TAIL 16) and /proc/kpagecount (its mapcount).
 */
static inline void page_fate(struct __test_metadata *_metadata, uint64_t pfn)
{
	uint64_t flags = 0, count = 0;

	kpage_read("/proc/kpageflags", pfn, &flags);
	kpage_read("/proc/kpagecount", pfn, &count);
	TH_LOG("page 0 was PFN 0x%" PRIx64 ": kpageflags 0x%" PRIx64
	       " (lru %d buddy %d mmap %d head %d tail %d), kpagecount %" PRIu64,
	       pfn, flags, !!(flags & 1ULL << 5), !!(flags & 1ULL << 10),
	       !!(flags & 1ULL << 11), !!(flags & 1ULL << 15),
	       !!(flags & 1ULL << 16), count);
}

/*
 * Unmap @len bytes at @map as @how says and assert that the module
 * deferred the flush: deferred_folios moved and something is held
 * (@need_held) or pending now.  Reads only those counters afterwards,
 * since the stale entries live only until a kernel thread runs on a
 * reader CPU (the deferred unmap moved the mm's tlb_gen, so coming back
 * from lazy TLB mode flushes).  Prints nothing unless it fails (see the
 * window rule above).
 */
static inline void make_deferred(struct __test_metadata *_metadata, enum how how,
				 void *map, size_t len, struct luf_ev *before,
				 struct luf_ev *after, bool need_held)
{
	uint64_t pfn0 = 0;
	bool ok;
	int ret = 0, try;

	/* for the report if nothing is held (root: pagemap shows PFNs) */
	if (luf_pagemap_pfns(map, 1, &pfn0))
		pfn0 = 0;
	ASSERT_EQ(0, luf_ev_read(before));
	*after = *before;
	for (try = 1; ; try++) {
		mark("unmap");
		if (how == BY_PAGEOUT)
			ret = madvise(map, len, MADV_PAGEOUT) ? -errno : 0;
		else if (how == BY_MIGRATION)
			ret = move_to_node(map, len, MIGRATE_NODE);
		else
			ret = demote_deferred(before);
		ASSERT_EQ(0, ret) TH_LOG("%s: %s", how == BY_PAGEOUT ? "MADV_PAGEOUT" :
					 how == BY_MIGRATION ? "move_pages" :
					 "memory.reclaim", strerror(-ret));
		ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &after->deferred));
		ASSERT_EQ(0, luf_counter_read(CTR(pending_folios), &after->pending));
		ASSERT_EQ(0, luf_counter_read(CTR(held_pages), &after->held));
		mark("counted");
		/*
		 * A reader that refaults a paged-out page, or meets a
		 * migration entry, of a MAP_SHARED writable mapping faults in
		 * it, and that fault settles the deferral at once.  Unmap
		 * again (migration: move the pages back first), a few times,
		 * before "nothing pending" fails the test.
		 */
		ok = after->held > 0 || (!need_held && after->pending > 0);
		if (ok || how == BY_DEMOTION || try == LUF_TRIES)
			break;
		if (how == BY_MIGRATION)
			ASSERT_EQ(0, move_to_node(map, len, 0));
	}
	ASSERT_GT(after->deferred, before->deferred) {
		luf_ev_log("before", before);
		luf_ev_log("after", after);
		TH_LOG("the unmap deferred nothing: the test would prove nothing");
	}
	if (need_held) {
		ASSERT_GT(after->held, (uint64_t)0) {
			luf_ev_log("before", before);
			luf_ev_log("after", after);
			if (pfn0)
				page_fate(_metadata, pfn0);
			TH_LOG("no page is held back after %d tries: nothing to reuse early",
			       try);
		}
	} else {
		ASSERT_TRUE(after->held > 0 || after->pending > 0) {
			struct luf_ev now;

			luf_ev_log("before", before);
			/* what settled it: forced_<cause> */
			if (!luf_ev_read(&now))
				luf_ev_log("now", &now);
			TH_LOG("nothing held or pending after the unmap");
		}
	}
	if (g_large) {
		struct luf_ev now;

		/* a large folio defers more pages than folios */
		ASSERT_EQ(0, luf_ev_read(&now));
		ASSERT_GT(now.pages_reclaim + now.pages_migrate -
			  before->pages_reclaim - before->pages_migrate,
			  now.deferred - before->deferred) {
			luf_ev_log("before", before);
			luf_ev_log("now", &now);
			TH_LOG("no large folio was deferred");
		}
	}
}

/*
 * After @what, something the test did in the window before its change:
 * pages are still held or folios pending, and no write fault forced a
 * flush since @before.
 */
static inline void assert_still_deferred(struct __test_metadata *_metadata,
					 const struct luf_ev *before, const char *what)
{
	struct luf_ev now;

	ASSERT_EQ(0, luf_ev_read(&now));
	ASSERT_TRUE((now.held > 0 || now.pending > 0) && now.wf == before->wf) {
		luf_ev_log("before", before);
		luf_ev_log(what, &now);
		TH_LOG("%s settled the deferral", what);
	}
}

/*
 * The window opens: the readers of @rd start over the @len bytes at @map,
 * then make_deferred() unmaps them.
 */
static inline void open_window(struct __test_metadata *_metadata, struct rd_ctl *rd,
			       void *map, size_t len, enum how how, struct luf_ev *before,
			       struct luf_ev *after, bool need_held)
{
	int ret;

	ret = luf_rd_start(&rd->rd, map, len / 8, NULL, NREADERS);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));
	make_deferred(_metadata, how, map, len, before, after, need_held);
}

/* anonymous 64 KiB mTHP: the knob of that size, "always" for a test */
#define MTHP_KNOB	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"

/* Swap on LUF_SWAP_DEV for oracle_setup() */
static inline void swap_on(struct __test_metadata *_metadata, struct oracle *o)
{
	const char *dev = luf_path(LUF_SWAP_DEV);

	/* EBUSY: left on by a test whose teardown did not run */
	ASSERT_TRUE(!swapon(dev, 0) || errno == EBUSY)
		TH_LOG("swapon %s: %s", dev, strerror(errno));
	o->swapon = true;
}

/* The 64 KiB size "always", its setting saved */
static inline void mthp_on(struct __test_metadata *_metadata, struct oracle *o)
{
	ASSERT_LT(0, read_file(MTHP_KNOB, o->mthp_saved, sizeof(o->mthp_saved)));
	ASSERT_EQ(0, write_file_str(MTHP_KNOB, "always"));
}

/* ---- test files ------------------------------------------------------ */

static inline uint64_t gen_word(uint64_t idx, void *arg)
{
	return word(idx, *(unsigned int *)arg);
}

/*
 * @npages pages of generation @gen in @dir, written one page per write(2)
 * (order-0 folios) or, with g_large, in one (XFS makes one large folio of
 * it), and fsynced; the clean page cache stays.
 */
static inline int tfile_create(struct luf_file *f, const char *dir, const char *tag,
			       size_t npages, unsigned int gen)
{
	char name[64];

	snprintf(name, sizeof(name), "correct-%s", tag);
	return luf_file_create_words(f, dir, name, npages * ps,
				     g_large ? npages * ps : ps, gen_word, &gen);
}

/*
 * mmap(@len bytes of @fd, or anonymous memory for -1) at @off bytes past
 * an address aligned to MAP_ALIGN, out of a PROT_NONE reservation whose
 * rest is unmapped again.  NULL if mmap() fails.
 */
static inline void *map_aligned(size_t len, size_t off, int prot, int flags, int fd)
{
	size_t res = MAP_ALIGN + off + len;
	char *r, *p;

	r = mmap(NULL, res, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)r + MAP_ALIGN - 1) & ~(uintptr_t)(MAP_ALIGN - 1)) + off;
	if (mmap(p, len, prot, flags | MAP_FIXED | (fd < 0 ? MAP_ANONYMOUS : 0),
		 fd, 0) == MAP_FAILED) {
		munmap(r, res);
		return NULL;
	}
	if (p > r)
		munmap(r, p - r);
	if (r + res > p + len)
		munmap(p + len, r + res - (p + len));
	return p;
}

/*
 * All of @f, one page past an address aligned to MAP_ALIGN:
 * - in one page table (for files up to MAP_ALIGN less a page).
 *   MADV_PAGEOUT reclaims a large folio only where one page table maps
 *   all of it; a 64 KiB XFS folio mapped across a PMD boundary is split
 *   or skipped instead, and nothing is deferred.
 * - never at a 64 KiB-aligned address.  arm64 maps a naturally aligned
 *   large folio there with contiguous PTEs, and the unmap unfolds them
 *   with a TLB flush of its own (contpte_convert()): the readers fault
 *   the folio back in, so nothing is left to hold.
 * Where mmap() puts a file depends on ASLR, and every test of a program
 * forks from the same harness: left to mmap(), all the large-folio tests
 * of a program failed together, now and then.
 */
static inline void *map_file(struct luf_file *f, int prot, int flags)
{
	void *p = map_aligned(f->size, ps, prot, flags, f->fd);

	if (p)
		madvise(p, f->size, MADV_NOHUGEPAGE);
	return p;
}

/* Anonymous memory, written once (no fault on it later) */
static inline void *anon_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

/*
 * Anonymous memory that reclaim may defer: one 64 KiB mTHP of generation
 * @gen, mapped read-only and clean.  Written memory is mapped dirty, so
 * it is swapped out (zram), made read-only, and read back: a read fault
 * on a swap entry of a synchronous device with one reference allocates
 * an mTHP again (do_swap_page(), skipping the swap cache) and maps it
 * read-only and clean.  Reclaim puts it into the swap cache before it
 * unmaps it, as luf.ko wants of an anonymous folio.  Naturally aligned,
 * one page past a 2 MiB boundary's 64 KiB: one page table maps it.
 */
static inline void anon_mthp_map(struct __test_metadata *_metadata, struct oracle *o,
				  unsigned int gen)
{
	const size_t len = NPAGES * ps;
	char *p = map_aligned(len, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1);
	size_t i;

	ASSERT_NE(NULL, p);
	o->map = p;
	o->f.size = len;
	for (i = 0; i < len / 8; i++)
		((uint64_t *)p)[i] = word(i, gen);
	ASSERT_EQ(0, madvise(p, len, MADV_PAGEOUT));
	ASSERT_EQ(0, mprotect(p, len, PROT_READ));
	for (i = 0; i < len / 8; i++)
		ASSERT_EQ(word(i, gen), ((volatile uint64_t *)p)[i]);
}

/* ---- attempts -------------------------------------------------------- */

static inline int nr_attempts(void)
{
	return luf_env()->brk ? LUF_TRIES : 1;
}

/*
 * Before attempt @i > 0: let the runner (tee) write out what the last one
 * printed, so that it does not run on a reader CPU or write a file in the
 * next window.
 */
static inline void settle(int i)
{
	if (!i)
		return;
	luf_msleep(300);
	/*
	 * Another attempt, another layout: a small mapping left in place
	 * moves what the attempt maps next (a TLB index that QEMU TCG's
	 * direct-mapped TLB shares with another page loses the stale entry).
	 */
	mmap(NULL, (size_t)(1 + i % 7) * ps, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Record attempt @i; true if no further attempt is needed. */
static inline bool attempt_done(struct outcome *o, int i, uint64_t bad,
				uint64_t errors)
{
	o->attempts = i + 1;
	o->bad_at[i] = bad;
	o->bad += bad;
	o->errors += errors;
	return !luf_env()->brk || bad || errors;
}

/*
 * The verdict: in a normal run no attempt may see a violation; in a broken
 * run one must (the oracle caught the missing flush).  Reader errors
 * (faults where none may happen) fail either way.
 */
static inline void verdict(struct __test_metadata *_metadata, const struct outcome *o,
			   const char *what)
{
	int i;

	if (o->attempts > 1) {
		note("%d attempts; violations per attempt:", o->attempts);
		for (i = 0; i < o->attempts; i++)
			fprintf(stderr, " %" PRIu64, o->bad_at[i]);
		fprintf(stderr, "\n");
	}
	ASSERT_EQ((uint64_t)0, o->errors) TH_LOG("the readers hit errors (see above)");
	if (luf_env()->brk) {
		ASSERT_GT(o->bad, (uint64_t)0)
			TH_LOG("broken mode %d: the violation was NOT detected in %d attempts (%s)",
			       luf_env()->brk, o->attempts, what);
		note("broken mode %d caught: %" PRIu64 " x %s\n",
		     luf_env()->brk, o->bad, what);
	} else {
		ASSERT_EQ((uint64_t)0, o->bad) TH_LOG("%" PRIu64 " x %s", o->bad, what);
	}
}

/* The counters around an attempt */
static inline void ev_report(const struct luf_ev *e0, const struct luf_ev *e1,
			     const struct luf_ev *e2, const char *what)
{
	luf_ev_log("before page-out", e0);
	note("after page-out: deferred_folios=%" PRIu64 " held_pages=%" PRIu64
		       " pending_folios=%" PRIu64 "\n", e1->deferred, e1->held,
		       e1->pending);
	luf_ev_log(what, e2);
}

/*
 * Right after the change: publish it, let the readers check for HOLD_MS
 * (rd_hold()), stop them, read the counters into @e2, log the attempt
 * (@what: the moment of @e2) and sum up what the readers saw in @s.
 */
static inline void oracle_check(struct __test_metadata *_metadata, struct rd_ctl *rd,
				const struct luf_ev *e0, const struct luf_ev *e1, struct luf_ev *e2,
				const char *what, struct rd_sum *s)
{
	mark("publish");
	luf_rd_publish(&rd->rd);
	/* HOLD_MS, and MIN_POST_PASSES passes of each reader after it */
	ASSERT_TRUE(luf_rd_hold(&rd->rd, HOLD_MS, MIN_POST_PASSES))
		TH_LOG("readers made no progress");
	luf_rd_stop(&rd->rd);
	ASSERT_EQ(0, luf_ev_read(e2));
	ev_report(e0, e1, e2, what);
	rd_summary(rd, s);
}

/* ---- a. reuse -------------------------------------------------------- */

/*
 * Stop the readers, unmap their control page and the file mapping, and
 * remove the test file; fine to call again.
 */
static inline void oracle_release(struct oracle *o)
{
	if (o->rd) {
		luf_rd_stop(&o->rd->rd);
		munmap(o->rd, sizeof(*o->rd));
	}
	o->rd = NULL;
	if (o->map)
		munmap(o->map, o->f.size);
	o->map = NULL;
	luf_file_destroy(&o->f);
}

/* What an oracle fixture needs besides luf.ko (oracle_setup()) */
#define NEED_LARGE	1	/* large folios: sets g_large */
#define NEED_SWAP	2	/* swap on LUF_SWAP_DEV */
#define NEED_MTHP	4	/* swap, and anonymous 64 KiB mTHP "always" */
#define NEED_MEMCG	8	/* the memory controller */

/*
 * FIXTURE_SETUP of an oracle test: luf_prepare(), then what @need says;
 * SKIP without @dir (NULL: none needed), or what @how or @need needs.
 * Every SKIP comes before the first change to the system: a setup that
 * does not complete has no teardown.
 */
static inline void oracle_setup(struct __test_metadata *_metadata, struct oracle *o,
				int brk, const char *dir, enum how how, unsigned int need)
{
	o->rd = NULL;
	o->f.fd = -1;
	o->map = NULL;
	o->swapon = false;
	o->mthp_saved[0] = '\0';
	g_large = need & NEED_LARGE;
	luf_prepare(_metadata, brk, 1 + NREADERS);
	if (_metadata->exit_code)
		return;
	if (dir)
		REQUIRE_DIR(dir);
	if (how_skip(how))
		SKIP(return, "%s", how_skip(how));
	if ((need & (NEED_SWAP | NEED_MTHP)) && !path_exists(LUF_SWAP_DEV))
		SKIP(return, "no swap device %s", luf_path(LUF_SWAP_DEV));
	if ((need & NEED_MTHP) && (luf_page_size() != 4096 || !path_exists(MTHP_KNOB)))
		SKIP(return, "no 64 KiB mTHP (%s)", MTHP_KNOB);
	if ((need & NEED_MEMCG) && !memcg_available())
		SKIP(return, "no memory controller in " LUF_CGROUP_ROOT);
	if (how == BY_DEMOTION) {
		int err = demote_begin();

		ASSERT_EQ(0, err) TH_LOG("memcg and demotion: %s", strerror(-err));
	}
	if (need & (NEED_SWAP | NEED_MTHP))
		swap_on(_metadata, o);
	if (!_metadata->exit_code && (need & NEED_MTHP))
		mthp_on(_metadata, o);
}

/*
 * FIXTURE_TEARDOWN of an oracle test: oracle_release(), undo what
 * oracle_setup() did, and luf_module_done().
 */
static inline void oracle_teardown(struct __test_metadata *_metadata, struct oracle *o)
{
	/* "always [inherit] madvise never": the one in brackets */
	char *b = strchr(o->mthp_saved, '['), *e = b ? strchr(b, ']') : NULL;
	const char *dev = luf_path(LUF_SWAP_DEV);

	oracle_release(o);
	demote_end();
	if (b && e) {
		*e = '\0';
		write_file_str(MTHP_KNOB, b + 1);
	}
	o->mthp_saved[0] = '\0';
	if (o->swapon && swapoff(dev))
		TH_LOG("swapoff %s: %s", dev, strerror(errno));
	o->swapon = false;
	luf_module_done();
}

#endif /* LUF_ORACLE_H */
