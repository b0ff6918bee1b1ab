// SPDX-License-Identifier: GPL-2.0
/*
 * The shared part of the luf correctness programs (see correct.h): module
 * load per test, deferral by reclaim, migration or demotion, the test
 * files, attempts and verdicts, and main().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>

/* assertions for the tests of the program it is linked into */
#define LUF_HARNESS_LIB
#include "correct.h"

/* The broken mode of this run (LUF_BREAK), 0 for a normal run. */
int g_break;
/* The first generation of every module load (LUF_GEN_START), 0: default */
unsigned long g_gen_start;
/*
 * LUF_KEEP_MODULE=1: luf.ko is loaded once and stays loaded; a test starts
 * and ends by disabling LUF and MIGRC (which settles everything) instead
 * of reloading.  For multi-threaded TCG, where patching a static call
 * while other vCPUs run it is not safe (scripts/check.sh).
 */
bool g_keep;
size_t ps;
/* trace_marker, with LUF_CORRECT_MARK=1 */
static int g_mark = -1;

/* Module parameters @base plus gen_start= of LUF_GEN_START */
const char *load_params(const char *base)
{
	static char buf[96];

	if (!g_gen_start)
		return base;
	snprintf(buf, sizeof(buf), "%s%sgen_start=%lu", base, *base ? " " : "",
		 g_gen_start);
	return buf;
}

/* A module with everything settled and LUF and MIGRC off; 0 or -errno */
int module_fresh(const char *params)
{
	int err;

	if (!g_keep) {
		err = luf_ensure_unloaded();
		return err ? err : luf_load(load_params(params));
	}
	if (!luf_is_loaded()) {
		err = luf_load(load_params(params));
		if (err)
			return err;
	}
	err = luf_knob_write(KNOB(enabled), "0");
	return err ? err : luf_knob_write(KNOB(migrc_enabled), "0");
}

/* The end of a test: unload, or settle everything (LUF_KEEP_MODULE) */
void module_done(void)
{
	if (!g_keep) {
		luf_ensure_unloaded();
		return;
	}
	luf_knob_write(KNOB(enabled), "0");
	luf_knob_write(KNOB(migrc_enabled), "0");
}

void mark(const char *s)
{
	if (g_mark >= 0 && write(g_mark, s, strlen(s)) < 0)
		g_mark = -1;
}

/*
 * Grow the stack by 256 KiB and fault it in, then write every page of every
 * private writable mapping (and shared anonymous ones) once: the test runs
 * in a process forked from the harness, so its data, heap and stack pages
 * are copy-on-write, and a COW fault is a write fault, which settles every
 * deferred flush (and so would hide a broken file_change flush).
 */
void prefault_all(void)
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

/*
 * Load luf.ko for a test that broken mode @brk must catch (0: none), with
 * enabled=1, migrc_enabled=1 and max_defer_ms=60000; in a broken run, skip a test of
 * another mode.  Pins the caller to CPU 0.
 */
void luf_prepare(struct __test_metadata *_metadata, int brk)
{
	char buf[16];
	int ret;

	if (g_break && g_break != brk &&
	    !(g_break == BRK_FILTER && brk == BRK_REUSE))
		SKIP(return, "not a test of broken mode %d", g_break);
	if (nr_cpus() < 1 + NREADERS)
		SKIP(return, "needs %d CPUs", 1 + NREADERS);
	ret = module_fresh(g_break ? "allow_unsafe=1" : "");
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	if (g_break) {
		snprintf(buf, sizeof(buf), "%d", g_break);
		ret = write_file_str(BREAK_PARAM, buf);
		ASSERT_EQ(0, ret) TH_LOG("debug_break=%s: %s", buf, strerror(-ret));
	}
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	ASSERT_EQ(0, luf_knob_write(KNOB(migrc_enabled), "1"));
	ASSERT_EQ(0, pin_to_cpu(0));
	sync();
}

const char *how_skip(enum how how)
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
 * the fixture's teardown calls demote_end().  Only the test file's page
 * cache is charged to it (tfile_charge_cg()), so memory.reclaim of g_cg
 * unmaps nothing else of this mm: no ordinary batched flush of other
 * pages wipes the readers' TLBs behind the deferred one.
 */
char g_cg[256];
static char g_demotion_saved[16];

int demote_begin(void)
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

void demote_end(void)
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
int demote_deferred(const struct luf_ev *before)
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
int move_to_node(void *map, size_t len, int node)
{
	int ret = luf_move_to_node(map, len / ps, node, NPAGES, NULL);

	return ret > 0 ? -EAGAIN : ret;
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
/*
 * What became of the page at @pfn, for a failure report: its
 * /proc/kpageflags bits (LRU 5, BUDDY 10, MMAP 11, COMPOUND_HEAD 15,
 * COMPOUND_TAIL 16) and /proc/kpagecount (its mapcount).
 */
static void page_fate(struct __test_metadata *_metadata, uint64_t pfn)
{
	uint64_t flags = 0, count = 0;
	int fd;

	fd = open("/proc/kpageflags", O_RDONLY);
	if (fd >= 0) {
		if (pread(fd, &flags, 8, pfn * 8) != 8)
			flags = 0;
		close(fd);
	}
	fd = open("/proc/kpagecount", O_RDONLY);
	if (fd >= 0) {
		if (pread(fd, &count, 8, pfn * 8) != 8)
			count = 0;
		close(fd);
	}
	TH_LOG("page 0 was PFN 0x%" PRIx64 ": kpageflags 0x%" PRIx64
	       " (lru %d buddy %d mmap %d head %d tail %d), kpagecount %" PRIu64,
	       pfn, flags, !!(flags & 1ULL << 5), !!(flags & 1ULL << 10),
	       !!(flags & 1ULL << 11), !!(flags & 1ULL << 15),
	       !!(flags & 1ULL << 16), count);
}

void make_deferred(struct __test_metadata *_metadata, enum how how,
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
void assert_still_deferred(struct __test_metadata *_metadata,
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

void open_window(struct __test_metadata *_metadata, struct rd_ctl *rd,
		 void *map, size_t len, enum how how, struct luf_ev *before,
		 struct luf_ev *after, bool need_held)
{
	int ret;

	ret = rd_start(rd, map, len / 8);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));
	make_deferred(_metadata, how, map, len, before, after, need_held);
}

void swap_on(struct __test_metadata *_metadata, bool *on)
{
	const char *dev = luf_path(LUF_SWAP_DEV);

	if (!path_exists(LUF_SWAP_DEV))
		SKIP(return, "no swap device %s", dev);
	/* EBUSY: left on by a test whose teardown did not run */
	ASSERT_TRUE(!swapon(dev, 0) || errno == EBUSY)
		TH_LOG("swapon %s: %s", dev, strerror(errno));
	*on = true;
}

void swap_off(struct __test_metadata *_metadata, bool *on)
{
	const char *dev = luf_path(LUF_SWAP_DEV);

	if (*on && swapoff(dev))
		TH_LOG("swapoff %s: %s", dev, strerror(errno));
	*on = false;
}

/* ---- test files ------------------------------------------------------ */

static uint64_t gen_word(uint64_t idx, void *arg)
{
	return word(idx, *(unsigned int *)arg);
}

bool g_large;

/*
 * @npages pages of generation @gen in @dir, written one page per write(2)
 * (order-0 folios) or, with g_large, in one (XFS makes one large folio of
 * it), and fsynced; the clean page cache stays.
 */
int tfile_create(struct luf_file *f, const char *dir, const char *tag,
		 size_t npages, unsigned int gen)
{
	char name[64];

	snprintf(name, sizeof(name), "correct-%s", tag);
	return luf_file_create_words(f, dir, name, npages * ps,
				     g_large ? npages * ps : ps, gen_word, &gen);
}

/*
 * Charge the page cache of @f to g_cg: drop it, then read it back from a
 * child that runs in g_cg and exits.  0 or -errno.
 */
int tfile_charge_cg(const struct luf_file *f)
{
	off_t off;
	pid_t pid;
	char c;
	int st;

	if (fdatasync(f->fd) || posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (memcg_enter(g_cg))
			_exit(1);
		for (off = 0; off < (off_t)f->size; off += ps)
			if (pread(f->fd, &c, 1, off) != 1)
				_exit(2);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
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
void *map_file(struct luf_file *f, int prot, int flags)
{
	size_t len = f->size + MAP_ALIGN + ps;
	char *r, *p, *end;

	r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)r + MAP_ALIGN - 1) & ~(uintptr_t)(MAP_ALIGN - 1)) + ps;
	if (mmap(p, f->size, prot, flags | MAP_FIXED, f->fd, 0) == MAP_FAILED) {
		munmap(r, len);
		return NULL;
	}
	/* the rest of the reservation goes */
	end = p + f->size;
	munmap(r, p - r);
	if (r + len > end)
		munmap(end, r + len - end);
	madvise(p, f->size, MADV_NOHUGEPAGE);
	return p;
}

/* Anonymous memory, written once (no fault on it later) */
void *anon_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

/* ---- attempts -------------------------------------------------------- */

int nr_attempts(void)
{
	return g_break ? LUF_TRIES : 1;
}

/*
 * Before attempt @i > 0: let the runner (tee) write out what the last one
 * printed, so that it does not run on a reader CPU or write a file in the
 * next window.
 */
void settle(int i)
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
bool attempt_done(struct outcome *o, int i, uint64_t bad,
		  uint64_t errors)
{
	o->attempts = i + 1;
	o->bad_at[i] = bad;
	o->bad += bad;
	o->errors += errors;
	return !g_break || bad || errors;
}

/*
 * The verdict: in a normal run no attempt may see a violation; in a broken
 * run one must (the oracle caught the missing flush).  Reader errors
 * (faults where none may happen) fail either way.
 */
void verdict(struct __test_metadata *_metadata, const struct outcome *o,
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
	if (g_break) {
		ASSERT_GT(o->bad, (uint64_t)0)
			TH_LOG("broken mode %d: the violation was NOT detected in %d attempts (%s)",
			       g_break, o->attempts, what);
		note("broken mode %d caught: %" PRIu64 " x %s\n",
		     g_break, o->bad, what);
	} else {
		ASSERT_EQ((uint64_t)0, o->bad) TH_LOG("%" PRIu64 " x %s", o->bad, what);
	}
}

/* The counters around an attempt */
void ev_report(const struct luf_ev *e0, const struct luf_ev *e1,
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
void oracle_check(struct __test_metadata *_metadata, struct rd_ctl *rd,
		  const struct luf_ev *e0, const struct luf_ev *e1, struct luf_ev *e2,
			 const char *what, struct rd_sum *s)
{
	rd_publish(rd);
	ASSERT_TRUE(rd_hold(rd)) TH_LOG("readers made no progress");
	rd_stop(rd);
	ASSERT_EQ(0, luf_ev_read(e2));
	ev_report(e0, e1, e2, what);
	rd_summary(rd, s);
}

/* ---- a. reuse -------------------------------------------------------- */

/*
 * Stop the readers, unmap their control page and the file mapping, and
 * remove the test file; fine to call again.
 */
void oracle_release(struct oracle *o)
{
	rd_stop(o->rd);
	if (o->rd)
		munmap(o->rd, sizeof(*o->rd));
	o->rd = NULL;
	if (o->map)
		munmap(o->map, o->f.size);
	o->map = NULL;
	luf_file_destroy(&o->f);
}

/*
 * FIXTURE_SETUP of an oracle test: luf_prepare(), and SKIP without @dir or
 * what @how needs.
 */
void oracle_setup(struct __test_metadata *_metadata, struct oracle *o,
		  int brk, const char *dir, enum how how)
{
	o->rd = NULL;
	o->f.fd = -1;
	o->map = NULL;
	luf_prepare(_metadata, brk);
	if (_metadata->exit_code)
		return;
	REQUIRE_DIR(dir);
	if (how_skip(how))
		SKIP(return, "%s", how_skip(how));
	if (how == BY_DEMOTION) {
		int err = demote_begin();

		ASSERT_EQ(0, err) TH_LOG("memcg and demotion: %s", strerror(-err));
	}
}

/*
 * Parse LUF_BREAK, LUF_GEN_START and LUF_KEEP_MODULE; the arguments for
 * test_harness_run() (*@argc and the return value).
 */
char **luf_correct_args(int *argc, char **argv, const char *const *wrap,
			const char *const *keep)
{
	const char *why = luf_skip_reason(true);
	const char *b = getenv("LUF_BREAK"), *g;
	const char *const *filter = NULL;
	bool listing;
	char **av = argv;
	int ac = *argc;

	ps = (size_t)sysconf(_SC_PAGESIZE);
	if (getenv("LUF_CORRECT_MARK"))
		g_mark = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
	if (b && *b) {
		if (strlen(b) != 1 || !strchr("12357", b[0]))
			ksft_exit_fail_msg("LUF_BREAK=%s: want 1, 2, 3, 5 or 7\n", b);
		g_break = b[0] - '0';
	}
	/* listing or help needs neither root nor the module */
	listing = ac > 1 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-h"));
	if (listing)
		why = NULL;
	if (why) {
		if (g_break)
			ksft_exit_fail_msg("broken mode %d cannot run: %s\n", g_break, why);
		ksft_exit_skip("%s\n", why);
	}
	g = getenv("LUF_GEN_START");
	if (g && *g) {
		char *end;

		errno = 0;
		g_gen_start = strtoul(g, &end, 10);
		if (errno || *end || !g_gen_start || g_gen_start > 0xffffffffUL)
			ksft_exit_fail_msg("LUF_GEN_START=%s: want 1-4294967295\n", g);
	}
	g = getenv("LUF_KEEP_MODULE");
	g_keep = g && !strcmp(g, "1");
	if (g_keep && g_break)
		ksft_exit_fail_msg("LUF_KEEP_MODULE=1: no broken mode (it needs a reload)\n");
	if (g_keep)
		filter = keep;
	/* across the u32 wrap: the tests that cycle through generations */
	if (g_gen_start && !g_break)
		filter = wrap;
	if (filter && ac == 1) {
		for (ac = 1; filter[ac - 1]; ac++)
			;
		av = calloc(ac + 1, sizeof(*av));
		if (!av)
			ksft_exit_fail_msg("out of memory\n");
		av[0] = argv[0];
		memcpy(av + 1, filter, (ac - 1) * sizeof(*av));
	}
	if (!listing) {
		/* before anything runs on the other CPUs (see LUF_KEEP_MODULE) */
		if (g_keep && !luf_is_loaded() && luf_load(load_params("")))
			ksft_exit_fail_msg("loading %s failed\n", luf_ko_path());
		luf_quiet_cpus();
	}
	*argc = ac;
	return av;
}
