/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The correctness oracles (Documentation/mm/luf/testing.rst, "correct").  Between the unmap
 * and the change, no write fault and no output: either can settle the deferred flush.
 */
#ifndef LUF_ORACLE_H
#define LUF_ORACLE_H

#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <sys/swap.h>

#include "luf_test.h"	/* kselftest_harness.h: errno, stdio, string, unistd, sys/mman */

#define NPAGES		16
#define NREADERS	3
#define HOLD_MS		500	/* readers keep checking this long after the change */
#define MIN_POST_PASSES	20	/* ... and at least this many passes each */
#define WORD_MAGIC	0x4c5543ULL	/* "LUC" */
#define POISON		0x504f49534f4e2121ULL	/* "POISON!!" */
#define STR_(x)		#x
#define STR(x)		STR_(x)

/* Word @i (file offset / 8) of generation @gen: MAGIC (24 bits) | i (24) | gen (16) */
static inline uint64_t word(uint64_t i, unsigned int gen)
{
	return WORD_MAGIC << 40 | (i & 0xffffff) << 16 | (gen & 0xffff);
}

/* A generation that differs from run to run, and whose successor differs */
static inline unsigned int first_gen(void)
{
	return ((unsigned int)getpid() * 7 + 3) & 0x7ffe;
}

enum rd_mode {
	RD_CONTENT,	/* reads must see old or new content (new once published) */
	RD_FAULT,	/* reads of [flo, fhi) must fault once published */
};

/* The readers of an oracle: libluf's engine and what its checks compare */
struct rd_ctl {
	struct luf_rd rd;	/* first: rd_check() and rd_fault_ok() cast it back */
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

/* How a test makes the kernel unmap its read-only mapped pages */
enum how {
	BY_PAGEOUT,	/* reclaim: MADV_PAGEOUT */
	BY_MIGRATION,	/* MIGRC: move_pages(2) to MIGRATE_NODE */
	BY_DEMOTION,	/* MIGRC: memory.reclaim of our memcg, demotion on */
};

#define MIGRATE_NODE	1

struct outcome {
	uint64_t bad;		/* violations the oracle saw */
	uint64_t errors;	/* reader errors (unexpected faults) */
	int attempts;
	uint64_t bad_at[LUF_TRIES];
};

/* Attempts of @once(_metadata, self, variant, &s); violations: s.stale + s.corrupt (@what) */
#define RUN_ATTEMPTS(once, what) do {					\
	struct outcome o_ = { 0 };					\
	struct rd_sum s;						\
									\
	for (int i_ = 0; i_ < nr_attempts(); i_++) {			\
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
/* Broken mode @n on x86, none on arm64 whose guest does not show it: the variant says why */
#define BRK_X86(n)	(ON_ARM64 ? 0 : (n))

/* NEED_LARGE: a file is one write(2), one XFS folio (order 4); make_deferred() checks it */
static bool g_large __attribute__((unused));

/* What every oracle fixture has: the readers, the test file, its mapping */
struct oracle {
	struct rd_ctl *rd;
	struct luf_file f;
	void *map;
	bool swapon;		/* oracle_setup() turned swap on */
	char mthp_saved[32];	/* the 64 KiB mTHP knob's setting before oracle_setup() */
};

/* map_file()'s alignment: a PMD on x86 and on arm64 with 4 KiB pages */
#define MAP_ALIGN	(2UL << 20)

static inline uint64_t rd_new(const struct rd_ctl *c, size_t i)
{
	return i >= c->zlo && i < c->zhi ? 0 : word(i, c->new_gen);
}

/* Every byte of @v is @a's or @b's: a word the kernel rewrote in place, read half done */
static inline bool rd_torn(uint64_t v, uint64_t a, uint64_t b)
{
	for (uint64_t m = 0xff; m; m <<= 8)
		if ((v & m) != (a & m) && (v & m) != (b & m))
			return false;
	return true;
}

static inline int rd_check(const struct luf_rd *rd, size_t i, uint64_t v, bool pub)
{
	const struct rd_ctl *c = (const struct rd_ctl *)rd;
	uint64_t old = word(i, c->old_gen);

	if (c->mode == RD_FAULT) {
		if (pub && i >= c->flo && i < c->fhi)
			return LUF_RD_READ_AFTER;
		return v == old ? LUF_RD_OK : LUF_RD_CORRUPT;
	}
	if (v == rd_new(c, i))
		return LUF_RD_OK;
	if (v == old)
		return pub ? LUF_RD_STALE : LUF_RD_OK;
	/* the change itself, read before it was published */
	return !pub && rd_torn(v, old, rd_new(c, i)) ? LUF_RD_OK : LUF_RD_CORRUPT;
}

static inline bool rd_fault_ok(const struct luf_rd *rd, size_t i, bool pub)
{
	const struct rd_ctl *c = (const struct rd_ctl *)rd;

	if (c->mode == RD_FAULT)
		return pub ? i >= c->flo && i < c->fhi : c->fault_ok_before;
	return !pub && c->fault_ok_before;
}

/* Anonymous memory, written once (no fault on it later) */
static inline void *anon_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

static inline struct rd_ctl *rd_alloc(void)
{
	struct rd_ctl *c = anon_buf(sizeof(*c));

	if (c) {
		c->rd.check = rd_check;
		c->rd.fault_ok = rd_fault_ok;
		c->rd.mark = POISON;
	}
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
	int i, k;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < NREADERS; i++) {
		struct luf_rd_stats *st = &c->rd.st[i];
		uint64_t passes = atomic_load(&st->passes), post = atomic_load(&st->post_passes);
		uint64_t b[LUF_RD_NR_KINDS];

		for (k = 0; k < LUF_RD_NR_KINDS; k++)
			b[k] = atomic_load(&st->bad[k]);
		s->passes += passes;
		s->post_passes += post;
		s->faults += st->faults;
		s->post_faults += st->post_faults;
		s->stale += b[LUF_RD_STALE];
		s->corrupt += b[LUF_RD_CORRUPT];
		s->poison += st->marked;
		s->bad_fault += b[LUF_RD_BAD_FAULT];
		s->read_after += b[LUF_RD_READ_AFTER];
		note("reader %d (CPU %d): passes=%" PRIu64 " after=%" PRIu64 " faults=%" PRIu64
		     " stale=%" PRIu64 " corrupt=%" PRIu64 " read_after=%" PRIu64
		     " bad_fault=%" PRIu64 " preempted=%" PRIu64 " slept=%" PRIu64 "\n",
		     i, 1 + i, passes, post, st->faults, b[LUF_RD_STALE], b[LUF_RD_CORRUPT],
		     b[LUF_RD_READ_AFTER], b[LUF_RD_BAD_FAULT], st->preempted, st->slept);
		if (st->have_first)
			note("  first: %s at word %zu (page %zu): 0x%016" PRIx64
			     " (want 0x%016" PRIx64 ", old 0x%016" PRIx64 ")\n",
			     kind_name[st->first_kind], st->first_idx,
			     st->first_idx / c->rd.wpp, st->first_val,
			     rd_new(c, st->first_idx), word(st->first_idx, c->old_gen));
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
 * Grow the stack, write every private writable (and shared anonymous) page once: forked
 * from the harness, they are COW, and a COW fault settles every deferred flush.
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
		if (perms[0] != 'r' || perms[1] != 'w' || hi - lo > (64UL << 20))
			continue;
		if (perms[3] == 's' && path[0] && strncmp(path, "/dev/zero", 9))
			continue;
		for (p = lo; p < hi; p += ps)
			*(volatile char *)p = *(volatile char *)p;
	}
	fclose(f);
}

/*
 * Demotion: memcg g_cg, demotion on, from oracle_setup() until oracle_teardown().  Only the
 * test file's page cache is charged to it (tfile_charge_cg()), so memory.reclaim of g_cg
 * unmaps nothing else of this mm: no ordinary batched flush wipes the readers' TLBs.
 */
static char g_cg[256] __attribute__((unused));
static char g_demotion_saved[16] __attribute__((unused));

/*
 * memory.reclaim of g_cg until a demotion deferred a flush (the first passes may only clear
 * accessed bits, without a flush; a reader that keeps its TLB entry never sets them again).
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
	int fd = open(file, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = pread(fd, v, 8, pfn * 8) == 8 ? 0 : -EIO;
	close(fd);
	return err;
}

/* What became of the page at @pfn, for a failure report */
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
 * Unmap @len bytes at @map as @how says and assert that deferred_folios moved and something
 * is held (@need_held) or pending.  Reads only those and prints nothing unless it fails: a
 * kernel thread on a reader CPU would flush (leaving lazy TLB mode, as the mm's tlb_gen moved).
 */
static inline void make_deferred(struct __test_metadata *_metadata, enum how how,
				 void *map, size_t len, struct luf_ev *before,
				 struct luf_ev *after, bool need_held)
{
	uint64_t pfn0 = 0;
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
		/* a reader's fault in a MAP_SHARED writable mapping settles it: unmap again */
		if (after->held > 0 || (!need_held && after->pending > 0) ||
		    how == BY_DEMOTION || try == LUF_TRIES)
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

/* After @what, done in the window: still held or pending, and no write fault since @before */
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

/* The window opens: @rd's readers start over the @len bytes at @map, then the unmap */
static inline void open_window(struct __test_metadata *_metadata, struct rd_ctl *rd,
			       void *map, size_t len, enum how how, struct luf_ev *before,
			       struct luf_ev *after, bool need_held)
{
	int ret = luf_rd_start(&rd->rd, map, len / 8, NULL, NREADERS);

	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));
	make_deferred(_metadata, how, map, len, before, after, need_held);
}

#define MTHP_KNOB	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"
/* PMD-sized THP: MADV_HUGEPAGE is enough unless this says never */
#define THP_KNOB	"/sys/kernel/mm/transparent_hugepage/enabled"

static inline uint64_t gen_word(uint64_t idx, void *arg)
{
	return word(idx, *(unsigned int *)arg);
}

/* @npages pages of @gen in @dir, fsynced and cached; a write(2) per page, or one if g_large */
static inline int tfile_create(struct luf_file *f, const char *dir, const char *tag,
			       size_t npages, unsigned int gen)
{
	char name[64];

	snprintf(name, sizeof(name), "correct-%s", tag);
	return luf_file_create_words(f, dir, name, npages * ps,
				     g_large ? npages * ps : ps, gen_word, &gen);
}

/* mmap() @len bytes of @fd (-1: anonymous) @off bytes past a MAP_ALIGN boundary, or NULL */
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
 * All of @f, one page past a MAP_ALIGN boundary: in one page table (MADV_PAGEOUT skips a
 * large folio that two map), never 64 KiB-aligned (arm64 would map a large folio with
 * contiguous PTEs, and their unfolding at the unmap flushes: contpte_convert()).
 */
static inline void *map_file(struct luf_file *f, int prot, int flags)
{
	void *p = map_aligned(f->size, ps, prot, flags, f->fd);

	if (p)
		madvise(p, f->size, MADV_NOHUGEPAGE);
	return p;
}

/*
 * A clean read-only 64 KiB mTHP of @gen that reclaim may defer: written, swapped out (zram),
 * read back read-only (do_swap_page() of a synchronous device maps a new mTHP clean; reclaim
 * adds it to the swap cache before the unmap, as luf.ko wants of an anonymous folio).
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

/*
 * Anonymous memory that MIGRC may defer: one PMD-sized THP of generation
 * @gen, mapped read-only and clean by PTEs.  Written, it is mapped dirty
 * by a PMD; MADV_FREE of all of it clears the PMD's dirty bit (and makes
 * the folio lazily freed, which only reclaim cares about); mprotect() of
 * its first page splits the PMD into PTEs that keep it clean, then of the
 * rest.  MAP_ALIGN-aligned, so that the fault maps a THP (asserted
 * through /proc/kpageflags, and that MADV_FREE cleaned it).
 */
static inline void anon_thp_map(struct __test_metadata *_metadata, struct oracle *o,
				unsigned int gen)
{
	const size_t len = MAP_ALIGN, n = len / ps;
	char *p = map_aligned(len, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1);
	uint64_t pfn[2], kpf[3];
	size_t i;

	ASSERT_NE(NULL, p);
	o->map = p;
	o->f.size = len;
	ASSERT_EQ(0, madvise(p, len, MADV_HUGEPAGE));
	for (i = 0; i < len / 8; i++)
		((uint64_t *)p)[i] = word(i, gen);
	/*
	 * A THP (kpageflags THP 22): a compound head (15), and its last
	 * page a contiguous tail (16)
	 */
	ASSERT_EQ(0, luf_pagemap_pfns(p, 1, &pfn[0]));
	ASSERT_EQ(0, luf_pagemap_pfns(p + len - ps, 1, &pfn[1]));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, kpage_read("/proc/kpageflags", pfn[i], &kpf[i]));
	ASSERT_TRUE((kpf[0] & 1ULL << 22) && (kpf[0] & 1ULL << 15) &&
		    (kpf[1] & 1ULL << 16) && pfn[1] == pfn[0] + n - 1)
		TH_LOG("the fault mapped no 2 MiB THP: PFNs 0x%" PRIx64 " 0x%" PRIx64
		       ", kpageflags 0x%" PRIx64 " 0x%" PRIx64, pfn[0], pfn[1], kpf[0], kpf[1]);
	ASSERT_EQ(0, madvise(p, len, MADV_FREE));
	/* MADV_FREE skips a folio it cannot lock: then it stays dirty (4) */
	ASSERT_EQ(0, kpage_read("/proc/kpageflags", pfn[0], &kpf[2]));
	ASSERT_EQ((uint64_t)0, kpf[2] & 1ULL << 4)
		TH_LOG("MADV_FREE left the THP dirty: kpageflags 0x%" PRIx64, kpf[2]);
	ASSERT_EQ(0, mprotect(p, ps, PROT_READ));
	ASSERT_EQ(0, mprotect(p, len, PROT_READ));
	for (i = 0; i < len / 8; i++)
		ASSERT_EQ(word(i, gen), ((volatile uint64_t *)p)[i]);
}

static inline int nr_attempts(void)
{
	return luf_env()->brk ? LUF_TRIES : 1;
}

/*
 * Before attempt @i > 0: let the runner (tee) print the last output outside the window; move
 * the next mappings (QEMU TCG's direct-mapped TLB loses a stale entry whose index is shared).
 */
static inline void settle(int i)
{
	if (!i)
		return;
	luf_msleep(300);
	mmap(NULL, (size_t)(1 + i % 7) * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Record attempt @i; true if no further attempt is needed. */
static inline bool attempt_done(struct outcome *o, int i, uint64_t bad, uint64_t errors)
{
	o->attempts = i + 1;
	o->bad_at[i] = bad;
	o->bad += bad;
	o->errors += errors;
	return !luf_env()->brk || bad || errors;
}

/* A normal run must see no violation, a broken run some; reader errors fail either way */
static inline void verdict(struct __test_metadata *_metadata, const struct outcome *o,
			   const char *what)
{
	if (o->attempts > 1) {
		note("%d attempts; violations per attempt:", o->attempts);
		for (int i = 0; i < o->attempts; i++)
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
	     " pending_folios=%" PRIu64 "\n", e1->deferred, e1->held, e1->pending);
	luf_ev_log(what, e2);
}

/* After the change: publish it, hold the readers, counters into @e2 (@what), sum into @s */
static inline void oracle_check(struct __test_metadata *_metadata, struct rd_ctl *rd,
				const struct luf_ev *e0, const struct luf_ev *e1, struct luf_ev *e2,
				const char *what, struct rd_sum *s)
{
	mark("publish");
	luf_rd_publish(&rd->rd);
	ASSERT_TRUE(luf_rd_hold(&rd->rd, HOLD_MS, MIN_POST_PASSES))
		TH_LOG("readers made no progress");
	luf_rd_stop(&rd->rd);
	ASSERT_EQ(0, luf_ev_read(e2));
	ev_report(e0, e1, e2, what);
	rd_summary(rd, s);
}

/* Stop the readers, unmap them and the file, remove the file; fine to call again */
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
#define NEED_THP	16	/* a 2 MiB THP (anon_thp_map()) */

/*
 * FIXTURE_SETUP: luf_prepare() and what @how and @need need, SKIP without it or @dir (if
 * any).  Every SKIP comes first: a setup that does not complete has no teardown.
 */
static inline void oracle_setup(struct __test_metadata *_metadata, struct oracle *o,
				int brk, const char *dir, enum how how, unsigned int need)
{
	const char *dev = luf_path(LUF_SWAP_DEV);
	char why[160];

	*o = (struct oracle){ .f.fd = -1 };
	g_large = need & NEED_LARGE;
	luf_prepare(_metadata, brk, 1 + NREADERS);
	if (_metadata->exit_code)
		return;
	if (dir)
		REQUIRE_DIR(dir);
	if (how == BY_MIGRATION && !numa_node_has_memory(MIGRATE_NODE))
		SKIP(return, "needs memory on NUMA node " STR(MIGRATE_NODE));
	if (how == BY_DEMOTION && !numa_demotion_possible(why, sizeof(why)))
		SKIP(return, "%s", why);
	if ((need & (NEED_SWAP | NEED_MTHP)) && !path_exists(LUF_SWAP_DEV))
		SKIP(return, "no swap device %s", dev);
	if ((need & NEED_MTHP) && (luf_page_size() != 4096 || !path_exists(MTHP_KNOB)))
		SKIP(return, "no 64 KiB mTHP (%s)", MTHP_KNOB);
	if (need & NEED_THP) {
		char thp[64] = "";

		if (luf_page_size() != 4096 || read_file(THP_KNOB, thp, sizeof(thp)) <= 0 ||
		    strstr(thp, "[never]"))
			SKIP(return, "no 2 MiB THP (%s: %s)", THP_KNOB, thp);
	}
	if ((how == BY_DEMOTION || (need & NEED_MEMCG)) && !memcg_available())
		SKIP(return, "no memory controller in " LUF_CGROUP_ROOT);
	if (how == BY_DEMOTION) {
		char name[64];
		int err;

		snprintf(name, sizeof(name), "luf-correct-%d", getpid());
		err = memcg_create(name, g_cg, sizeof(g_cg));
		if (!err && read_file(LUF_DEMOTION_KNOB, g_demotion_saved,
				      sizeof(g_demotion_saved)) <= 0)
			err = -EIO;
		if (!err)
			err = write_file_str(LUF_DEMOTION_KNOB, "1");
		ASSERT_EQ(0, err) TH_LOG("memcg and demotion: %s", strerror(-err));
	}
	if (need & (NEED_SWAP | NEED_MTHP)) {
		/* EBUSY: left on by a test whose teardown did not run */
		ASSERT_TRUE(!swapon(dev, 0) || errno == EBUSY)
			TH_LOG("swapon %s: %s", dev, strerror(errno));
		o->swapon = true;
	}
	if (!_metadata->exit_code && (need & NEED_MTHP)) {
		ASSERT_LT(0, read_file(MTHP_KNOB, o->mthp_saved, sizeof(o->mthp_saved)));
		ASSERT_EQ(0, write_file_str(MTHP_KNOB, "always"));
	}
}

/* FIXTURE_TEARDOWN of an oracle test: undo oracle_setup(), then luf_module_done() */
static inline void oracle_teardown(struct __test_metadata *_metadata, struct oracle *o)
{
	/* "always [inherit] madvise never": the one in brackets */
	char *b = strchr(o->mthp_saved, '['), *e = b ? strchr(b, ']') : NULL;
	const char *dev = luf_path(LUF_SWAP_DEV);

	oracle_release(o);
	if (g_demotion_saved[0])
		write_file_str(LUF_DEMOTION_KNOB, g_demotion_saved);
	g_demotion_saved[0] = '\0';
	if (g_cg[0])
		memcg_destroy(g_cg);
	g_cg[0] = '\0';
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
