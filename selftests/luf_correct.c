// SPDX-License-Identifier: GPL-2.0
/*
 * luf_correct: the deferred flushes of luf.ko keep every invariant, and the
 * tests have teeth: each one that guards a flush of the module fails when
 * that flush is removed on purpose (debug_break, see below).
 *
 * Every test runs with a freshly loaded module, enabled=1, migrc_enabled=1
 * and max_defer_ms=60000, so that only the flush under test (not the timer)
 * can settle what reclaim or migration deferred.  Three reader threads pinned on CPUs 1-3
 * spin over a 16-page read-only mapping and check every 8-byte word; the
 * main thread runs on CPU 0.  A word of a test file at word index i (file
 * offset / 8) of generation g is
 *	MAGIC (24 bits) | i (24 bits) | g (16 bits)
 * so old, new, reused and foreign content are told apart.  QEMU TCG keeps a
 * stale TLB entry until the guest flushes that vCPU's TLB, so a missing
 * flush shows up at once, millions of times a second, as long as nothing
 * else flushes the reader's CPU first.  Things that do: another task on the
 * CPU (CR3 switch), and any kernel thread, since the deferred unmap moved
 * the mm's tlb_gen and coming back from lazy TLB mode then flushes.  So the
 * program moves every movable kernel thread and the unbound workqueues to
 * CPU 0 and slows the per-CPU vmstat work down for the run (restored at
 * exit), keeps the window between the page-out and the change short, and in
 * a broken run makes up to BROKEN_ATTEMPTS attempts per test.
 *
 * Each test pages its mapping out with MADV_PAGEOUT (reclaim) or, in the
 * variants named *_migrate, moves it to node 1 with move_pages(2) (MIGRC:
 * the source pages are the ones held), and first asserts that a deferral
 * really happened (deferred_folios moved and held_pages or pending_folios
 * is nonzero); if not, it fails.  Then the oracle:
 *
 *  reuse.<ext4|ext4_migrate|tmpfs_migrate|ext4_demote>.release_then_alloc
 *	(I1; *_demote: memory.reclaim of the test's own memcg with demotion
 *	to node 1 on, MIGRC)
 *	echo 0 > enabled (migrc_enabled for *_migrate) from CPU 0 releases
 *	the held pages onto CPU 0's pcp lists; CPU 0 at once fills 64 MiB of
 *	new anonymous memory with POISON (pcp lists are LIFO, so the released
 *	pages come back first).  Oracle: no reader ever reads a word other
 *	than the file's content.
 *  write.<fs>_<op>[_migrate].reclaim_then_write (I2), fs in ext4, xfs,
 *	tmpfs (page-out variants swap tmpfs to zram),
 *	after the deferral, CPU 0 changes the file to generation G+1 (pwrite,
 *	pwritev, splice from a pipe, copy_file_range from another file) or to
 *	zeros (fallocate PUNCH_HOLE of pages 4-11, ftruncate to 0 and back,
 *	ftruncate into the last page and back), then publishes.  Oracle: a
 *	reader that has seen the publication never reads old content again,
 *	and no reader ever reads a word that is neither old nor new content.
 *  unmap.<mprotect|munmap>[_migrate].access_faults (I3)
 *	after the deferral (reclaim, or MIGRC for _migrate), mprotect(PROT_NONE) of the whole mapping, or
 *	munmap of pages 4-11 in the middle of it (so its page table stays),
 *	then a signal to the readers.  Oracle: every access to that range
 *	after the signal faults (SIGSEGV, caught with sigsetjmp/siglongjmp); a
 *	successful read means a stale translation.  The flush here is the
 *	core's (flush_tlb_batched_pending() per mm), not the module's, so
 *	there is no broken mode for it: debug_break cannot remove it.
 *  cow.<ext4|xfs|ext4_migrate|ext4_shared|ext4_shared_migrate|
 *	xfs_shared_migrate>.write_upgrade (I2, write faults)
 *	a MAP_PRIVATE (COW) or MAP_SHARED (*_shared) PROT_READ|PROT_WRITE
 *	file mapping, never written, so its PTEs are read-only; after the
 *	deferral CPU 0 writes generation G+1 into every word (write faults),
 *	then publishes.  Oracle as for write.
 *  swapin.anon.read_maps_writable (I2, a read fault that maps writable)
 *	an anonymous page swapped in through the swap cache (read-only, the
 *	swap entry shared with a child), deferred by MADV_PAGEOUT; the child
 *	exits, and the parent's READ faults map fresh exclusive pages
 *	writable (zram skips the swap cache); it writes G+1 without a fault
 *	and publishes.  Oracle as for write.
 *  steal.ext4_to_fuse.splice_move_then_write (I1/I2, a page that changes
 *	owner without being freed; correct_steal.h)
 *	deferred ext4 pages kept in the page cache by a pipe reference are
 *	moved by splice(SPLICE_F_MOVE) into a FUSE file, which then writes
 *	them; the ext4 readers must never see the FUSE data.
 *  fault.* (correct_fault.h): a deferral inside the writer's own fault.
 *  forcewrite.*, uffdmove.*, dio.* (correct_review.h): changes that take
 *	no fault: a FOLL_FORCE write into a MIGRC destination, UFFDIO_MOVE
 *	of deferred swap entries, a direct write under an emptied page cache.
 *  lifecycle.disable_under_load (I5, disable)
 *	readers and a MADV_PAGEOUT loop run; echo 0 > enabled: right after,
 *	pending_folios == 0, held_pages == 0 and released_pages ==
 *	held_pages_total, and nothing is deferred while disabled; enabling
 *	again defers again; the readers never see a wrong word.
 *  lifecycle.held_bounded (I5, memory)
 *	max_pending_kb=512 and a memcg reclaim workload that defers more
 *	than four times that: held_pages_peak never passes 512 KiB, and the
 *	threshold release ran.
 *  lifecycle.migrc_alloc_near_limit (I5, MIGRC)
 *	64 MiB of tmpfs migrated to node 1 with the sources held; a child
 *	bound to node 0 faults in node 0's MemFree plus half the held amount
 *	(stock 6.12 has all of it free) while a thread keeps migrating
 *	another 4 MiB file between the nodes: it must not be OOM-killed,
 *	released_zone_low or released_shrinker moved, and the migrations
 *	went on deferring.
 *  lifecycle.rmmod_under_load (I6)
 *	readers and a MADV_PAGEOUT loop run while pages are held; rmmod
 *	succeeds, the workload goes on correctly without the module, no new
 *	WARN/BUG/bad-page taint, and MemFree (after drop_caches) is back
 *	within 1% of its level before the load.
 *
 * Broken modes: with LUF_BREAK=<n> in the environment the program loads
 * luf.ko with allow_unsafe=1, sets debug_break=<n> and runs only the tests
 * whose variant names mode <n> (1: held pages released without a flush;
 * 2: no flush on a page-cache change; 3: no flush on a write fault).  Each
 * such test then passes only if its oracle DID see the violation, and
 * fails if it did not.  Variants that stay correct without the module's
 * flush are not selected (see the write variants below for why).
 *
 * Across the u32 wrap: with LUF_GEN_START=<n> every load of luf.ko gets
 * gen_start=<n>, and without arguments only the reuse, swapin and
 * lifecycle tests run (order line "luf_correct LUF_GEN_START=4294967295": the
 * first flush of each test moves the generation from U32_MAX past 0).
 *
 * LUF_KEEP_MODULE=1 loads luf.ko once and never unloads it: each test
 * starts and ends with LUF and MIGRC disabled (everything settled) instead
 * of a reload.  Without arguments it runs the oracle tests and
 * lifecycle.disable_under_load.  The multi-threaded TCG pass of make check
 * uses it (selftests/order-mt): under QEMU 7.2 thread=multi, patching a
 * static call while other vCPUs execute it can leave a vCPU executing the
 * int3 of the patch after it finished, in any module, not only luf.ko.
 *
 * Every fixture with variants has `int brk` as the first member of its
 * variant: the broken mode that variant must catch, 0 for none.
 *
 * Between the page-out and the change, nothing in the system may settle
 * the deferred flush by accident: no write fault (every writable page of
 * the test process is written once before the readers start, and
 * everything the window needs is allocated before it) and no output (the
 * runner's tee writes to a file, and any page-cache write settles
 * everything in normal mode and in broken modes 1 and 3).
 *
 * LUF_CORRECT_MARK=1 writes "pageout", "counted" and "publish" to
 * /sys/kernel/tracing/trace_marker, to see in a trace what ran in the
 * window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "luf_harness.h"

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
#define XFS_DIR		"/mnt/xfs"
#define STR_(x)		#x
#define STR(x)		STR_(x)

/* The broken mode of this run (LUF_BREAK), 0 for a normal run. */
static int g_break;
/* The first generation of every module load (LUF_GEN_START), 0: default */
static unsigned long g_gen_start;
/*
 * LUF_KEEP_MODULE=1: luf.ko is loaded once and stays loaded; a test starts
 * and ends by disabling LUF and MIGRC (which settles everything) instead
 * of reloading.  For multi-threaded TCG, where patching a static call
 * while other vCPUs run it is not safe (scripts/check.sh).
 */
static bool g_keep;
static size_t ps;
/* trace_marker, with LUF_CORRECT_MARK=1 */
static int g_mark = -1;

/* Module parameters @base plus gen_start= of LUF_GEN_START */
static const char *load_params(const char *base)
{
	static char buf[96];

	if (!g_gen_start)
		return base;
	snprintf(buf, sizeof(buf), "%s%sgen_start=%lu", base, *base ? " " : "",
		 g_gen_start);
	return buf;
}

/* A module with everything settled and LUF and MIGRC off; 0 or -errno */
static int module_fresh(const char *params)
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
	err = luf_knob_write("enabled", "0");
	return err ? err : luf_knob_write("migrc_enabled", "0");
}

/* The end of a test: unload, or settle everything (LUF_KEEP_MODULE) */
static void module_done(void)
{
	if (!g_keep) {
		luf_ensure_unloaded();
		return;
	}
	luf_knob_write("enabled", "0");
	luf_knob_write("migrc_enabled", "0");
}

static void mark(const char *s)
{
	if (g_mark >= 0 && write(g_mark, s, strlen(s)) < 0)
		g_mark = -1;
}

static inline uint64_t word(uint64_t i, unsigned int gen)
{
	return WORD_MAGIC << 40 | (i & 0xffffff) << 16 | (gen & 0xffff);
}

/* A generation that differs from run to run, and whose successor differs */
static unsigned int first_gen(void)
{
	return ((unsigned int)getpid() * 7 + 3) & 0x7ffe;
}

/* ---- keeping accidental flushes out of the window ------------------- */

/* Grow the stack and fault it in, so deep calls later need no new page. */
static __attribute__((noinline)) void prefault_stack(size_t bytes)
{
	char *buf = alloca(bytes);

	memset(buf, 0, bytes);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/*
 * Write every page of every private writable mapping (and shared anonymous
 * ones) once: the test runs in a process forked from the harness, so its
 * data, heap and stack pages are copy-on-write, and a COW fault is a write
 * fault, which settles every deferred flush (and so would hide a broken
 * file_change flush).
 */
static void cow_break_all(void)
{
	char line[512], perms[8], path[256];
	unsigned long lo, hi, p;
	FILE *f;

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

/* ---- readers --------------------------------------------------------- */

enum rd_mode {
	RD_CONTENT,	/* reads must see old or new content (new once published) */
	RD_FAULT,	/* reads of [flo, fhi) must fault once published */
};

enum rd_kind { K_STALE, K_CORRUPT, K_BAD_FAULT, K_READ_AFTER };
static const char *const kind_name[] = {
	"old content after the publication", "foreign content",
	"unexpected fault", "successful read after the signal",
};

struct rd_stats {
	atomic_uint_fast64_t passes;
	atomic_uint_fast64_t post_passes;	/* passes begun after the publication */
	uint64_t faults;
	uint64_t post_faults;
	uint64_t stale;		/* old content after the publication */
	uint64_t corrupt;	/* neither old nor new content */
	uint64_t poison;	/* of those, POISON */
	uint64_t bad_fault;	/* a fault where none may happen */
	uint64_t read_after;	/* RD_FAULT: a read that worked after the signal */
	uint64_t first_val;
	size_t first_idx;
	int first_kind;
	int have_first;
} __attribute__((aligned(64)));

struct rd_ctl;
struct rd_slot {
	struct rd_ctl *c;
	int idx;
};

struct rd_ctl {
	const volatile uint64_t *base;
	size_t words;		/* words the readers spin over */
	size_t wpp;		/* words per page */
	enum rd_mode mode;
	unsigned int old_gen, new_gen;
	size_t zlo, zhi;	/* words that read zero once published */
	size_t flo, fhi;	/* RD_FAULT: words that must fault once published */
	bool fault_ok_before;	/* faults allowed before the publication */
	pthread_t th[NREADERS];
	struct rd_slot slot[NREADERS];
	int n;
	atomic_int stop, ready, err;
	atomic_int pause, paused;	/* rd_pause() */
	atomic_int published;
	double t_pub;
	struct rd_stats st[NREADERS];
};

static __thread sigjmp_buf rd_env;
static __thread volatile sig_atomic_t rd_armed;

static void rd_signal(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (rd_armed)
		siglongjmp(rd_env, sig);
	/* not a reader: the faulting access runs again and kills us */
	signal(sig, SIG_DFL);
}

static int rd_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = rd_signal;
	/* no mask change, so siglongjmp needs no sigprocmask */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL))
		return -errno;
	return 0;
}

static inline uint64_t rd_old(const struct rd_ctl *c, size_t i)
{
	return word(i, c->old_gen);
}

static inline uint64_t rd_new(const struct rd_ctl *c, size_t i)
{
	return i >= c->zlo && i < c->zhi ? 0 : word(i, c->new_gen);
}

static void rd_note(struct rd_stats *st, int kind, size_t i, uint64_t v)
{
	if (st->have_first)
		return;
	st->have_first = 1;
	st->first_kind = kind;
	st->first_idx = i;
	st->first_val = v;
}

static inline bool rd_pausing(struct rd_ctl *c)
{
	return atomic_load_explicit(&c->pause, memory_order_acquire) &&
	       !atomic_load_explicit(&c->stop, memory_order_relaxed);
}

static void *rd_fn(void *arg)
{
	struct rd_slot *slot = arg;
	struct rd_ctl *c = slot->c;
	struct rd_stats *st = &c->st[slot->idx];
	volatile size_t i;
	volatile int pub;
	volatile bool first = true;
	int err;

	err = pin_to_cpu(1 + slot->idx);
	if (err) {
		int zero = 0;

		atomic_compare_exchange_strong(&c->err, &zero, err);
		atomic_fetch_add(&c->ready, 1);
		return NULL;
	}
	prefault_stack(128 << 10);
	rd_armed = 1;
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		if (rd_pausing(c)) {
			atomic_fetch_add(&c->paused, 1);
			while (rd_pausing(c))
				;
			atomic_fetch_sub(&c->paused, 1);
			continue;
		}
		pub = atomic_load_explicit(&c->published, memory_order_acquire);
		i = 0;
		if (sigsetjmp(rd_env, 0)) {
			size_t at = i;
			bool ok;

			st->faults++;
			if (pub)
				st->post_faults++;
			if (c->mode == RD_FAULT)
				ok = pub ? at >= c->flo && at < c->fhi : c->fault_ok_before;
			else
				ok = !pub && c->fault_ok_before;
			if (!ok) {
				st->bad_fault++;
				rd_note(st, K_BAD_FAULT, at, 0);
			}
			/* the rest of the page has the same translation */
			i = (at / c->wpp + 1) * c->wpp;
		}
		for (; i < c->words; i++) {
			uint64_t v = c->base[i];

			if (c->mode == RD_FAULT) {
				if (pub && i >= c->flo && i < c->fhi) {
					st->read_after++;
					rd_note(st, K_READ_AFTER, i, v);
				} else if (v != rd_old(c, i)) {
					st->corrupt++;
					st->poison += v == POISON;
					rd_note(st, K_CORRUPT, i, v);
				}
				continue;
			}
			if (v == rd_new(c, i))
				continue;
			if (v == rd_old(c, i)) {
				if (pub) {
					st->stale++;
					rd_note(st, K_STALE, i, v);
				}
				continue;
			}
			st->corrupt++;
			st->poison += v == POISON;
			rd_note(st, K_CORRUPT, i, v);
		}
		atomic_fetch_add_explicit(&st->passes, 1, memory_order_relaxed);
		if (pub)
			atomic_fetch_add_explicit(&st->post_passes, 1,
						  memory_order_relaxed);
		if (first) {
			first = false;
			atomic_fetch_add(&c->ready, 1);
		}
	}
	rd_armed = 0;
	if (first)
		atomic_fetch_add(&c->ready, 1);
	return NULL;
}

/* Fresh anonymous memory for @c, so that no write to it is a COW fault */
static struct rd_ctl *rd_alloc(void)
{
	struct rd_ctl *c;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	memset(c, 0, sizeof(*c));
	return c;
}

static void rd_stop(struct rd_ctl *c)
{
	int i;

	if (!c)
		return;
	atomic_store(&c->stop, 1);
	for (i = 0; i < c->n; i++)
		pthread_join(c->th[i], NULL);
	c->n = 0;
}

static int rd_start(struct rd_ctl *c, const void *base, size_t words)
{
	double t0 = luf_now();
	int i, err;

	c->base = base;
	c->words = words;
	c->wpp = ps / 8;
	err = rd_handlers();
	if (err)
		return err;
	for (i = 0; i < NREADERS; i++) {
		c->slot[i].c = c;
		c->slot[i].idx = i;
		err = pthread_create(&c->th[i], NULL, rd_fn, &c->slot[i]);
		if (err) {
			rd_stop(c);
			return -err;
		}
		c->n++;
	}
	while (atomic_load(&c->ready) < NREADERS) {
		if (luf_now() - t0 > 30) {
			rd_stop(c);
			return -ETIMEDOUT;
		}
		luf_msleep(1);
	}
	err = atomic_load(&c->err);
	if (err)
		rd_stop(c);
	return err;
}

/*
 * Hold every reader at the start of its next pass, off the mapping, until
 * rd_resume(): it keeps running the test's mm in user mode and keeps the
 * translations it cached until a flush takes them (not with a signal: x86
 * signal delivery writes PKRU, and TCG flushes a vCPU's whole soft TLB on
 * every PKRU change).  0 once all wait, or -ETIMEDOUT.
 */
static int rd_pause(struct rd_ctl *c)
{
	double t0 = luf_now();

	atomic_store_explicit(&c->pause, 1, memory_order_release);
	while (atomic_load(&c->paused) < c->n) {
		if (luf_now() - t0 > 10)
			return -ETIMEDOUT;
		luf_msleep(1);
	}
	return 0;
}

static void rd_resume(struct rd_ctl *c)
{
	atomic_store_explicit(&c->pause, 0, memory_order_release);
}

static void rd_publish(struct rd_ctl *c)
{
	mark("publish");
	c->t_pub = luf_now();
	atomic_store_explicit(&c->published, 1, memory_order_release);
}

/*
 * Let the readers check for HOLD_MS after the publication, and until each
 * has made MIN_POST_PASSES passes that began after it.  False on timeout.
 */
static bool rd_hold(struct rd_ctl *c)
{
	int i;

	for (;;) {
		double el = luf_now() - c->t_pub;
		bool done = el * 1000 >= HOLD_MS;

		for (i = 0; i < NREADERS; i++)
			if (atomic_load_explicit(&c->st[i].post_passes,
						 memory_order_relaxed) < MIN_POST_PASSES)
				done = false;
		if (done)
			return true;
		if (el > 60)
			return false;
		luf_msleep(10);
	}
}

struct rd_sum {
	uint64_t passes, post_passes, faults, post_faults, stale, corrupt;
	uint64_t poison, bad_fault, read_after;
};

static void rd_summary(struct rd_ctl *c, struct rd_sum *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < NREADERS; i++) {
		struct rd_stats *st = &c->st[i];

		s->passes += atomic_load(&st->passes);
		s->post_passes += atomic_load(&st->post_passes);
		s->faults += st->faults;
		s->post_faults += st->post_faults;
		s->stale += st->stale;
		s->corrupt += st->corrupt;
		s->poison += st->poison;
		s->bad_fault += st->bad_fault;
		s->read_after += st->read_after;
		note("reader %d (CPU %d): passes=%" PRIu64 " after=%" PRIu64
			       " faults=%" PRIu64 " stale=%" PRIu64 " corrupt=%" PRIu64
			       " read_after=%" PRIu64 " bad_fault=%" PRIu64 "\n",
			       i, 1 + i, (uint64_t)atomic_load(&st->passes),
			       (uint64_t)atomic_load(&st->post_passes), st->faults,
			       st->stale, st->corrupt, st->read_after, st->bad_fault);
		if (st->have_first)
			note("  first: %s at word %zu (page %zu): 0x%016" PRIx64
				       " (want 0x%016" PRIx64 ", old 0x%016" PRIx64 ")\n",
				       kind_name[st->first_kind], st->first_idx,
				       st->first_idx / c->wpp, st->first_val,
				       rd_new(c, st->first_idx), rd_old(c, st->first_idx));
	}
}

/* ---- module, counters ------------------------------------------------ */

struct ev {
	uint64_t deferred, held, held_total, released, pending, flushes;
	uint64_t fc, wf, timer, disable;
	uint64_t rel_zone_low, rel_shrinker, retained;
};

static int ev_read(struct ev *e)
{
	static const char *const names[] = {
		"deferred_folios", "held_pages", "held_pages_total",
		"released_pages", "pending_folios", "flushes",
		"forced_file_change", "forced_write_fault", "forced_timer",
		"forced_disable", "released_zone_low", "released_shrinker",
		"migrc_retained",
	};
	uint64_t *v[] = {
		&e->deferred, &e->held, &e->held_total, &e->released,
		&e->pending, &e->flushes, &e->fc, &e->wf, &e->timer, &e->disable,
		&e->rel_zone_low, &e->rel_shrinker, &e->retained,
	};

	return luf_counter_read_list(names, v, sizeof(names) / sizeof(names[0]));
}

static void ev_log(const char *what, const struct ev *e)
{
	note("%s: deferred_folios=%" PRIu64 " held_pages=%" PRIu64
		       " pending_folios=%" PRIu64 " held_pages_total=%" PRIu64
		       " released_pages=%" PRIu64 " flushes=%" PRIu64
		       " forced_file_change=%" PRIu64 " forced_write_fault=%" PRIu64
		       " forced_timer=%" PRIu64 " forced_disable=%" PRIu64
		       " released_zone_low=%" PRIu64 " released_shrinker=%" PRIu64
		       " migrc_retained=%" PRIu64 "\n",
		       what, e->deferred, e->held, e->pending, e->held_total,
		       e->released, e->flushes, e->fc, e->wf, e->timer, e->disable,
		       e->rel_zone_low, e->rel_shrinker, e->retained);
}

/*
 * Load luf.ko for a test that broken mode @brk must catch (0: none), with
 * enabled=1, migrc_enabled=1 and max_defer_ms=60000; in a broken run, skip a test of
 * another mode.  Pins the caller to CPU 0.
 */
static void luf_prepare(struct __test_metadata *_metadata, int brk)
{
	char buf[16];
	int ret;

	if (g_break && g_break != brk)
		SKIP(return, "not a test of broken mode %d", g_break);
	if (nr_cpus() < 1 + NREADERS)
		SKIP(return, "needs %d CPUs", 1 + NREADERS);
	ret = module_fresh(g_break ? "allow_unsafe=1" : "");
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	ASSERT_EQ(0, luf_knob_write("max_defer_ms", "60000"));
	if (g_break) {
		snprintf(buf, sizeof(buf), "%d", g_break);
		ret = write_file_str(BREAK_PARAM, buf);
		ASSERT_EQ(0, ret) TH_LOG("debug_break=%s: %s", buf, strerror(-ret));
	}
	ASSERT_EQ(0, luf_knob_write("enabled", "1"));
	ASSERT_EQ(0, luf_knob_write("migrc_enabled", "1"));
	ASSERT_EQ(0, pin_to_cpu(0));
	sync();
}

/* How a test makes the kernel unmap its read-only mapped pages */
enum how {
	BY_PAGEOUT,	/* reclaim: MADV_PAGEOUT */
	BY_MIGRATION,	/* MIGRC: move_pages(2) to MIGRATE_NODE */
	BY_DEMOTION,	/* MIGRC: memory.reclaim of our memcg, demotion on */
};

#define MIGRATE_NODE	1

static const char *how_skip(enum how how)
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
static char g_cg[256], g_demotion_saved[16];

static int demote_begin(void)
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

static void demote_end(void)
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
static int demote_deferred(const struct ev *before)
{
	uint64_t d;
	int i, err;

	for (i = 0; i < 16; i++) {
		err = memcg_write(g_cg, "memory.reclaim", "1M");
		if (err && err != -EAGAIN)
			return err;
		if (!luf_counter_read("deferred_folios", &d) && d > before->deferred)
			return 0;
	}
	return -EAGAIN;
}

/* move_pages(2) every page at @map to @node; 0 or -errno */
static int move_to_node(void *map, size_t len, int node)
{
	int nodes[NPAGES], status[NPAGES];
	size_t n = len / ps, at, i, c;
	void *pages[NPAGES];

	for (at = 0; at < n; at += c) {
		c = n - at < NPAGES ? n - at : NPAGES;
		for (i = 0; i < c; i++) {
			pages[i] = (char *)map + (at + i) * ps;
			nodes[i] = node;
			status[i] = -1;
		}
		if (luf_move_pages(c, pages, nodes, status))
			return -errno;
		for (i = 0; i < c; i++)
			if (status[i] != node)
				return status[i] < 0 ? status[i] : -EAGAIN;
	}
	return 0;
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
static void make_deferred(struct __test_metadata *_metadata, enum how how,
			  void *map, size_t len, struct ev *before,
			  struct ev *after, bool need_held)
{
	int ret = 0;

	ASSERT_EQ(0, ev_read(before));
	*after = *before;
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
	ASSERT_EQ(0, luf_counter_read("deferred_folios", &after->deferred));
	ASSERT_EQ(0, luf_counter_read("pending_folios", &after->pending));
	ASSERT_EQ(0, luf_counter_read("held_pages", &after->held));
	mark("counted");
	ASSERT_GT(after->deferred, before->deferred) {
		ev_log("before", before);
		ev_log("after", after);
		TH_LOG("the unmap deferred nothing: the test would prove nothing");
	}
	if (need_held) {
		ASSERT_GT(after->held, (uint64_t)0) {
			ev_log("before", before);
			ev_log("after", after);
			TH_LOG("no page is held back: nothing to reuse early");
		}
	} else {
		ASSERT_TRUE(after->held > 0 || after->pending > 0) {
			struct ev now;

			ev_log("before", before);
			/* what settled it: forced_<cause> */
			if (!ev_read(&now))
				ev_log("now", &now);
			TH_LOG("nothing held or pending after the unmap");
		}
	}
}

/* ---- test files ------------------------------------------------------ */

struct tfile {
	int fd;
	char path[256];
	size_t size;
};

/*
 * @npages pages of generation @gen in @dir, written one page per write(2)
 * (XFS makes a large folio of a larger write, and large folios are never
 * deferred) and fsynced; the clean page cache stays.
 */
static int tfile_create(struct tfile *f, const char *dir, const char *tag,
			size_t npages, unsigned int gen)
{
	uint64_t *buf;
	size_t p, w, wpp = ps / 8;
	int err = 0;

	f->fd = -1;
	f->size = npages * ps;
	snprintf(f->path, sizeof(f->path), "%s/luf-correct-%s-%d", dir, tag, getpid());
	buf = malloc(ps);
	if (!buf)
		return -ENOMEM;
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		err = -errno;
		goto out;
	}
	for (p = 0; p < npages; p++) {
		for (w = 0; w < wpp; w++)
			buf[w] = word(p * wpp + w, gen);
		if (pwrite(f->fd, buf, ps, p * ps) != (ssize_t)ps) {
			err = errno ? -errno : -EIO;
			goto out;
		}
	}
	if (fsync(f->fd))
		err = -errno;
out:
	free(buf);
	if (err && f->fd >= 0) {
		close(f->fd);
		unlink(f->path);
		f->fd = -1;
	}
	return err;
}

static void tfile_destroy(struct tfile *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		unlink(f->path);
	}
	f->fd = -1;
}

/*
 * Charge the page cache of @f to g_cg: drop it, then read it back from a
 * child that runs in g_cg and exits.  0 or -errno.
 */
static int tfile_charge_cg(const struct tfile *f)
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

static void *map_file(struct tfile *f, int prot, int flags)
{
	void *p = mmap(NULL, f->size, prot, flags, f->fd, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, f->size, MADV_NOHUGEPAGE);
	return p;
}

/* Anonymous memory, written once (no fault on it later) */
static void *anon_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

/* ---- attempts -------------------------------------------------------- */

/*
 * A stale entry lives until something flushes the reader's CPU, and the
 * deferred unmap moved the mm's tlb_gen, so a kernel thread that runs on a
 * reader CPU in the window (lazy TLB, then back) flushes it too: in a broken
 * run a test makes up to BROKEN_ATTEMPTS attempts and passes at the first
 * that catches the violation.  A normal run makes one attempt.
 */
#define BROKEN_ATTEMPTS	10

struct outcome {
	uint64_t bad;		/* violations the oracle saw */
	uint64_t errors;	/* reader errors (unexpected faults) */
	int attempts;
	uint64_t bad_at[BROKEN_ATTEMPTS];
};

static int nr_attempts(void)
{
	return g_break ? BROKEN_ATTEMPTS : 1;
}

/*
 * Before attempt @i > 0: let the runner (tee) write out what the last one
 * printed, so that it does not run on a reader CPU or write a file in the
 * next window.
 */
static void settle(int i)
{
	if (i)
		luf_msleep(300);
}

/* Record attempt @i; true if no further attempt is needed. */
static bool attempt_done(struct outcome *o, int i, uint64_t bad,
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
static void verdict(struct __test_metadata *_metadata, const struct outcome *o,
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
static void ev_report(const struct ev *e0, const struct ev *e1,
		      const struct ev *e2, const char *what)
{
	ev_log("before page-out", e0);
	note("after page-out: deferred_folios=%" PRIu64 " held_pages=%" PRIu64
		       " pending_folios=%" PRIu64 "\n", e1->deferred, e1->held,
		       e1->pending);
	ev_log(what, e2);
}

/*
 * Right after the change: publish it, let the readers check for HOLD_MS
 * (rd_hold()), stop them, read the counters into @e2, log the attempt
 * (@what: the moment of @e2) and sum up what the readers saw in @s.
 */
static void oracle_check(struct __test_metadata *_metadata, struct rd_ctl *rd,
			 const struct ev *e0, const struct ev *e1, struct ev *e2,
			 const char *what, struct rd_sum *s)
{
	rd_publish(rd);
	ASSERT_TRUE(rd_hold(rd)) TH_LOG("readers made no progress");
	rd_stop(rd);
	ASSERT_EQ(0, ev_read(e2));
	ev_report(e0, e1, e2, what);
	rd_summary(rd, s);
}

/*
 * The body of a test with attempts: @once(_metadata, self, variant, &s)
 * makes one attempt and fills the struct rd_sum s; @bad (an expression
 * of s) counts the violations the oracle saw.
 */
#define RUN_ATTEMPTS(once, bad, what) do {				\
	struct outcome o_ = { 0 };					\
	struct rd_sum s;						\
	int i_;								\
									\
	for (i_ = 0; i_ < nr_attempts(); i_++) {			\
		settle(i_);						\
		once(_metadata, self, variant, &s);			\
		if (attempt_done(&o_, i_, bad, s.bad_fault))		\
			break;						\
	}								\
	verdict(_metadata, &o_, what);					\
} while (0)

/* ---- a. reuse -------------------------------------------------------- */

/* What every oracle fixture has: the readers, the test file, its mapping */
struct oracle {
	struct rd_ctl *rd;
	struct tfile f;
	void *map;
};

/*
 * Stop the readers, unmap their control page and the file mapping, and
 * remove the test file; fine to call again.
 */
static void oracle_release(struct oracle *o)
{
	rd_stop(o->rd);
	if (o->rd)
		munmap(o->rd, sizeof(*o->rd));
	o->rd = NULL;
	if (o->map)
		munmap(o->map, o->f.size);
	o->map = NULL;
	tfile_destroy(&o->f);
}

/*
 * FIXTURE_SETUP of an oracle test: luf_prepare(), and SKIP without @dir or
 * what @how needs.
 */
static void oracle_setup(struct __test_metadata *_metadata, struct oracle *o,
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

FIXTURE(reuse) {
	struct oracle o;
	uint64_t *poison;
};

FIXTURE_VARIANT(reuse) {
	int brk;
	const char *dir;
	enum how how;
};

FIXTURE_VARIANT_ADD(reuse, ext4) { .brk = 1, .dir = LUF_EXT4_DIR };
FIXTURE_VARIANT_ADD(reuse, ext4_migrate) {
	.brk = 1, .dir = LUF_EXT4_DIR, .how = BY_MIGRATION,
};
FIXTURE_VARIANT_ADD(reuse, tmpfs_migrate) {
	.brk = 1, .dir = LUF_TMP_DIR, .how = BY_MIGRATION,
};
/*
 * Demotion needs a lower memory tier: the x86 guest's node 1 (HMAT); an
 * arm64 device-tree boot has none, so there the test skips, and it is no
 * test of broken mode 1 there.
 */
#ifdef __aarch64__
#define DEMOTE_BRK	0
#else
#define DEMOTE_BRK	1
#endif
FIXTURE_VARIANT_ADD(reuse, ext4_demote) {
	.brk = DEMOTE_BRK, .dir = LUF_EXT4_DIR, .how = BY_DEMOTION,
};

#define POISON_LEN	(64UL << 20)

static void reuse_release(FIXTURE_DATA(reuse) *self)
{
	oracle_release(&self->o);
	if (self->poison)
		munmap(self->poison, POISON_LEN);
	self->poison = NULL;
}

FIXTURE_SETUP(reuse)
{
	self->poison = NULL;
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, variant->how);
}

FIXTURE_TEARDOWN(reuse)
{
	reuse_release(self);
	demote_end();
	module_done();
}

static void reuse_once(struct __test_metadata *_metadata,
		       FIXTURE_DATA(reuse) *self,
		       const FIXTURE_VARIANT(reuse) *variant, struct rd_sum *s)
{
	const char *knob = variant->how == BY_PAGEOUT ? "enabled" : "migrc_enabled";
	unsigned int gen = first_gen();
	struct ev e0, e1, e2;
	uint64_t *p;
	int ret;

	/* on again: the previous attempt switched it off to release */
	ASSERT_EQ(0, luf_knob_write(knob, "1"));
	ret = tfile_create(&self->o.f, variant->dir, "reuse", NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	if (variant->how == BY_DEMOTION) {
		ret = tfile_charge_cg(&self->o.f);
		ASSERT_EQ(0, ret) TH_LOG("charging the file to %s: %s", g_cg,
					 strerror(-ret));
	}
	self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->o.map);
	self->o.rd = rd_alloc();
	ASSERT_NE(NULL, self->o.rd);
	self->o.rd->mode = RD_CONTENT;
	self->o.rd->old_gen = self->o.rd->new_gen = gen;
	prefault_stack(256 << 10);
	cow_break_all();
	/* after cow_break_all(): it must stay unpopulated until the release */
	p = mmap(NULL, POISON_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	self->poison = p;
	/* order-0 pages from the pcp lists, not THPs from the buddy */
	ASSERT_EQ(0, madvise(p, POISON_LEN, MADV_NOHUGEPAGE));
	ret = rd_start(self->o.rd, self->o.map, NPAGES * ps / 8);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));

	make_deferred(_metadata, variant->how, self->o.map, self->o.f.size, &e0, &e1,
		      true);
	/* from CPU 0: everything held goes to CPU 0's pcp lists at once */
	ASSERT_EQ(0, luf_knob_write(knob, "0"));
	for (; p < self->poison + POISON_LEN / 8; p++)
		*p = POISON;
	oracle_check(_metadata, self->o.rd, &e0, &e1, &e2, "after release", s);
	note("readers: %" PRIu64 " words not of the file, %" PRIu64
		       " of them POISON\n", s->corrupt, s->poison);
	ASSERT_EQ((uint64_t)0, e2.held) TH_LOG("disabling left pages held");
	ASSERT_GT(e2.released, e0.released) TH_LOG("nothing was released");
	reuse_release(self);
}

TEST_F_TIMEOUT(reuse, release_then_alloc, 300)
{
	RUN_ATTEMPTS(reuse_once, s.corrupt + s.stale,
		     "reader read reused memory");
}

/* ---- b. reclaim then write ----------------------------------------- */

enum wop {
	OP_PWRITE, OP_PWRITEV, OP_SPLICE, OP_COPY_RANGE, OP_PUNCH,
	OP_TRUNC0, OP_TRUNC_TAIL,
};

FIXTURE(write) {
	struct oracle o;
	struct tfile src;
	uint64_t *buf;
	int pipefd[2];
	bool swapon;
};

/*
 * brk = 2 where only the module's file_change flush stands between the
 * change and a stale read, so broken mode 2 must be caught:
 * - ext4 and XFS writes (pwrite, pwritev, splice, ext4 copy_file_range)
 *   put the new content into a new page-cache folio; the old folio is
 *   held by the module, still readable through the stale entries.
 * - truncate_tail: ftruncate into the last page unmaps nothing of the
 *   mapping (the unmapped range starts after it), but zeroes the tail of
 *   the last page in a new folio.  This is the truncation that needs the
 *   module's flush; truncation to 0 does not (below).
 * Not selected (10 attempts each in broken mode 2 never saw a violation,
 * as expected):
 * - punch and trunc0 unmap the mapped range: zap_pte_range() calls
 *   flush_tlb_batched_pending(), which flushes the whole mm because the
 *   reclaim unmap counted in mm->tlb_flush_batched.  So does XFS
 *   copy_file_range, which reflinks and truncates the destination's page
 *   cache (truncate_pagecache_range()).
 * - tmpfs with swap on LUF_SWAP_DEV (zram, so that the swap-out completes
 *   and the folio is freed in the MADV_PAGEOUT pass): writes swap the page
 *   back in as a new folio; truncate_tail zeroes that new folio in
 *   truncate_inode_partial_folio(), which shmem shares.
 */
FIXTURE_VARIANT(write) {
	int brk;
	const char *dir;
	enum wop op;
	enum how how;
};

#define WRITE_VARIANT(fs, dir_, name, op_, brk_)			\
	FIXTURE_VARIANT_ADD(write, fs##_##name) {			\
		.brk = brk_, .dir = dir_, .op = op_,			\
	}
/* MIGRC: the page cache now holds the new copy, the old one is held */
#define WRITE_MIGRATE_VARIANT(fs, dir_, name, op_, brk_)		\
	FIXTURE_VARIANT_ADD(write, fs##_##name##_migrate) {		\
		.brk = brk_, .dir = dir_, .op = op_, .how = BY_MIGRATION, \
	}

WRITE_VARIANT(ext4, LUF_EXT4_DIR, pwrite, OP_PWRITE, 2);
WRITE_VARIANT(ext4, LUF_EXT4_DIR, pwritev, OP_PWRITEV, 2);
WRITE_VARIANT(ext4, LUF_EXT4_DIR, splice, OP_SPLICE, 2);
WRITE_VARIANT(ext4, LUF_EXT4_DIR, copy_file_range, OP_COPY_RANGE, 2);
WRITE_VARIANT(ext4, LUF_EXT4_DIR, punch_hole, OP_PUNCH, 0);
WRITE_VARIANT(ext4, LUF_EXT4_DIR, truncate, OP_TRUNC0, 0);
WRITE_VARIANT(ext4, LUF_EXT4_DIR, truncate_tail, OP_TRUNC_TAIL, 2);
WRITE_VARIANT(xfs, XFS_DIR, pwrite, OP_PWRITE, 2);
WRITE_VARIANT(xfs, XFS_DIR, pwritev, OP_PWRITEV, 2);
WRITE_VARIANT(xfs, XFS_DIR, splice, OP_SPLICE, 2);
WRITE_VARIANT(xfs, XFS_DIR, copy_file_range, OP_COPY_RANGE, 0);
WRITE_VARIANT(xfs, XFS_DIR, punch_hole, OP_PUNCH, 0);
WRITE_VARIANT(xfs, XFS_DIR, truncate, OP_TRUNC0, 0);
WRITE_VARIANT(xfs, XFS_DIR, truncate_tail, OP_TRUNC_TAIL, 2);
WRITE_VARIANT(tmpfs, LUF_TMP_DIR, pwrite, OP_PWRITE, 2);
WRITE_VARIANT(tmpfs, LUF_TMP_DIR, pwritev, OP_PWRITEV, 2);
WRITE_VARIANT(tmpfs, LUF_TMP_DIR, splice, OP_SPLICE, 2);
WRITE_VARIANT(tmpfs, LUF_TMP_DIR, copy_file_range, OP_COPY_RANGE, 2);
WRITE_VARIANT(tmpfs, LUF_TMP_DIR, punch_hole, OP_PUNCH, 0);
WRITE_VARIANT(tmpfs, LUF_TMP_DIR, truncate, OP_TRUNC0, 0);
WRITE_VARIANT(tmpfs, LUF_TMP_DIR, truncate_tail, OP_TRUNC_TAIL, 2);
WRITE_MIGRATE_VARIANT(ext4, LUF_EXT4_DIR, pwrite, OP_PWRITE, 2);
WRITE_MIGRATE_VARIANT(xfs, XFS_DIR, pwrite, OP_PWRITE, 2);
WRITE_MIGRATE_VARIANT(tmpfs, LUF_TMP_DIR, pwrite, OP_PWRITE, 2);
WRITE_MIGRATE_VARIANT(tmpfs, LUF_TMP_DIR, truncate_tail, OP_TRUNC_TAIL, 2);

static void write_release(FIXTURE_DATA(write) *self)
{
	if (self->buf)
		munmap(self->buf, self->o.f.size);
	self->buf = NULL;
	oracle_release(&self->o);
	tfile_destroy(&self->src);
	if (self->pipefd[0] >= 0) {
		close(self->pipefd[0]);
		close(self->pipefd[1]);
	}
	self->pipefd[0] = self->pipefd[1] = -1;
}

FIXTURE_SETUP(write)
{
	self->src.fd = -1;
	self->buf = NULL;
	self->pipefd[0] = self->pipefd[1] = -1;
	self->swapon = false;
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, variant->how);
	if (_metadata->exit_code)
		return;
	/* Without swap, reclaim can unmap a shmem folio but never free it */
	if (variant->how == BY_PAGEOUT && !strcmp(variant->dir, LUF_TMP_DIR)) {
		if (!path_exists(LUF_SWAP_DEV))
			SKIP(return, "no swap device %s", LUF_SWAP_DEV);
		ASSERT_EQ(0, swapon(LUF_SWAP_DEV, 0))
			TH_LOG("swapon %s: %s", LUF_SWAP_DEV, strerror(errno));
		self->swapon = true;
	}
}

FIXTURE_TEARDOWN(write)
{
	write_release(self);
	if (self->swapon && swapoff(LUF_SWAP_DEV))
		TH_LOG("swapoff %s: %s", LUF_SWAP_DEV, strerror(errno));
	module_done();
}

/* Write all of @buf (@len bytes) into the pipe */
static int fill_pipe(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const char *)buf + done, len - done);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += n;
	}
	return 0;
}

/* The change itself; returns 0 or -errno.  Must not print. */
static int do_wop(FIXTURE_DATA(write) *self, enum wop op, const void *buf,
		  const struct iovec *iov, int iovcnt)
{
	size_t size = self->o.f.size, done = 0;
	loff_t off_in, off_out;
	ssize_t n;

	switch (op) {
	case OP_PWRITE:
		n = pwrite(self->o.f.fd, buf, size, 0);
		return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
	case OP_PWRITEV:
		n = pwritev(self->o.f.fd, iov, iovcnt, 0);
		return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
	case OP_SPLICE:
		while (done < size) {
			off_out = done;
			n = splice(self->pipefd[0], NULL, self->o.f.fd, &off_out,
				   size - done, 0);
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			done += n;
		}
		return 0;
	case OP_COPY_RANGE:
		while (done < size) {
			off_in = off_out = done;
			n = copy_file_range(self->src.fd, &off_in, self->o.f.fd,
					    &off_out, size - done, 0);
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			done += n;
		}
		return 0;
	case OP_PUNCH:
		return fallocate(self->o.f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 4 * ps, 8 * ps) ? -errno : 0;
	case OP_TRUNC0:
		if (ftruncate(self->o.f.fd, 0) || ftruncate(self->o.f.fd, size))
			return -errno;
		return 0;
	case OP_TRUNC_TAIL:
		if (ftruncate(self->o.f.fd, size - ps / 2) ||
		    ftruncate(self->o.f.fd, size))
			return -errno;
		return 0;
	}
	return -EINVAL;
}

static void write_once(struct __test_metadata *_metadata,
		       FIXTURE_DATA(write) *self,
		       const FIXTURE_VARIANT(write) *variant, struct rd_sum *s)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, i;
	struct iovec iov[NPAGES];
	struct ev e0, e1, e2;
	struct rd_ctl *rd;
	uint64_t *buf;
	int ret;

	ret = tfile_create(&self->o.f, variant->dir, "write", NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file in %s: %s", variant->dir, strerror(-ret));
	self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->o.map);
	buf = self->buf = anon_buf(self->o.f.size);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < words; i++)
		buf[i] = word(i, gen + 1);
	for (i = 0; i < NPAGES; i++) {
		iov[i].iov_base = (char *)buf + i * ps;
		iov[i].iov_len = ps;
	}
	if (variant->op == OP_SPLICE) {
		ASSERT_EQ(0, pipe(self->pipefd));
		ASSERT_LE((ssize_t)self->o.f.size,
			  fcntl(self->pipefd[1], F_SETPIPE_SZ, (int)(2 * self->o.f.size)));
		ASSERT_EQ(0, fill_pipe(self->pipefd[1], buf, self->o.f.size));
	}
	if (variant->op == OP_COPY_RANGE) {
		ret = tfile_create(&self->src, variant->dir, "src", NPAGES, gen + 1);
		ASSERT_EQ(0, ret) TH_LOG("source file: %s", strerror(-ret));
	}

	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = gen;
	switch (variant->op) {
	case OP_PUNCH:
		rd->new_gen = gen;
		rd->zlo = 4 * ps / 8;
		rd->zhi = 12 * ps / 8;
		break;
	case OP_TRUNC0:
		rd->new_gen = gen;
		rd->zlo = 0;
		rd->zhi = words;
		/* SIGBUS between the truncation and the extension */
		rd->fault_ok_before = true;
		break;
	case OP_TRUNC_TAIL:
		rd->new_gen = gen;
		rd->zlo = (self->o.f.size - ps / 2) / 8;
		rd->zhi = words;
		break;
	default:
		rd->new_gen = gen + 1;
		break;
	}
	prefault_stack(256 << 10);
	cow_break_all();
	ret = rd_start(rd, self->o.map, words);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));

	make_deferred(_metadata, variant->how, self->o.map, self->o.f.size, &e0, &e1,
		      false);
	ret = do_wop(self, variant->op, buf, iov, NPAGES);
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after change", s);
	ASSERT_EQ(0, ret) TH_LOG("the change: %s", strerror(-ret));
	write_release(self);
}

TEST_F_TIMEOUT(write, reclaim_then_write, 300)
{
	RUN_ATTEMPTS(write_once, s.stale + s.corrupt,
		     "reader read old or foreign content after the change");
}

/* ---- c. mprotect / munmap ----------------------------------------- */

FIXTURE(unmap) {
	struct oracle o;
};

/*
 * No broken mode: what must flush here is the core (mprotect and munmap
 * call flush_tlb_batched_pending() for the mm, because the reclaim or
 * migration unmap counted in mm->tlb_flush_batched), not the module;
 * debug_break has no mode that removes it.
 */
FIXTURE_VARIANT(unmap) {
	int brk;
	bool munmap;
	enum how how;
};

FIXTURE_VARIANT_ADD(unmap, mprotect) { .brk = 0, .munmap = false };
FIXTURE_VARIANT_ADD(unmap, munmap) { .brk = 0, .munmap = true };
FIXTURE_VARIANT_ADD(unmap, mprotect_migrate) {
	.brk = 0, .munmap = false, .how = BY_MIGRATION,
};
FIXTURE_VARIANT_ADD(unmap, munmap_migrate) {
	.brk = 0, .munmap = true, .how = BY_MIGRATION,
};

FIXTURE_SETUP(unmap)
{
	oracle_setup(_metadata, &self->o, variant->brk, LUF_EXT4_DIR, variant->how);
}

FIXTURE_TEARDOWN(unmap)
{
	oracle_release(&self->o);
	module_done();
}

TEST_F_TIMEOUT(unmap, access_faults, 180)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8;
	struct outcome o = { 0 };
	struct ev e0, e1, e2;
	struct rd_ctl *rd;
	struct rd_sum s;
	int ret, err;

	ret = tfile_create(&self->o.f, LUF_EXT4_DIR, "unmap", NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->o.map);
	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_FAULT;
	rd->old_gen = rd->new_gen = gen;
	rd->fault_ok_before = true;
	if (variant->munmap) {
		rd->flo = 4 * ps / 8;
		rd->fhi = 12 * ps / 8;
	} else {
		rd->flo = 0;
		rd->fhi = words;
	}
	prefault_stack(256 << 10);
	cow_break_all();
	ret = rd_start(rd, self->o.map, words);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));

	make_deferred(_metadata, variant->how, self->o.map, self->o.f.size, &e0, &e1,
		      false);
	if (variant->munmap)
		ret = munmap((char *)self->o.map + 4 * ps, 8 * ps);
	else
		ret = mprotect(self->o.map, self->o.f.size, PROT_NONE);
	err = errno;
	/* nothing may be mapped into the hole while the readers look at it */
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after the call", &s);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", variant->munmap ? "munmap" : "mprotect",
				 strerror(err));
	/* every reader must really have tried the range after the signal */
	ASSERT_GE(s.post_faults, (uint64_t)NREADERS) TH_LOG("readers did not fault");
	attempt_done(&o, 0, s.read_after + s.corrupt, s.bad_fault);
	verdict(_metadata, &o, "read through a stale translation after the call");
}

/* ---- d. write upgrade (COW of a never-written private mapping) ----- */

FIXTURE(cow) {
	struct oracle o;
};

FIXTURE_VARIANT(cow) {
	int brk;
	const char *dir;
	enum how how;
	bool shared;
};

/*
 * MAP_PRIVATE: the write faults COW the never-written file pages.  After a
 * page-out the PTEs are empty and only the module's write_fault flush
 * stands between the new anonymous pages and the stale entries (brk 3).
 * After a migration the PTEs map the new copy read-only, and the COW
 * replaces each with ptep_clear_flush(), which flushes that address on
 * every CPU of the mm: the core covers it, no broken mode.
 * MAP_SHARED (PROT_READ | PROT_WRITE): read faults map the clean page-cache
 * pages read-only (write notification); a write fault then makes the PTE
 * of the page-cache page writable without any flush (after a page-out:
 * a new folio read back; after a migration: the new copy), so the module's
 * write_fault flush is the only one (brk 3).  (Not tmpfs: shmem needs no
 * write notification, so its shared writable PTEs are writable at once and
 * never deferred.)
 */
FIXTURE_VARIANT_ADD(cow, ext4) { .brk = 3, .dir = LUF_EXT4_DIR };
FIXTURE_VARIANT_ADD(cow, xfs) { .brk = 3, .dir = XFS_DIR };
FIXTURE_VARIANT_ADD(cow, ext4_migrate) {
	.brk = 0, .dir = LUF_EXT4_DIR, .how = BY_MIGRATION,
};
FIXTURE_VARIANT_ADD(cow, ext4_shared) {
	.brk = 3, .dir = LUF_EXT4_DIR, .shared = true,
};
/*
 * arm64 (not x86): making a present PTE writable and dirty, as the shared
 * write fault after a migration does, flushes that address on every CPU
 * (__ptep_set_access_flags()), so there the core covers it.
 */
#ifdef __aarch64__
#define UPGRADE_BRK	0
#else
#define UPGRADE_BRK	3
#endif
FIXTURE_VARIANT_ADD(cow, ext4_shared_migrate) {
	.brk = UPGRADE_BRK, .dir = LUF_EXT4_DIR, .how = BY_MIGRATION, .shared = true,
};
FIXTURE_VARIANT_ADD(cow, xfs_shared_migrate) {
	.brk = UPGRADE_BRK, .dir = XFS_DIR, .how = BY_MIGRATION, .shared = true,
};

FIXTURE_SETUP(cow)
{
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, variant->how);
}

FIXTURE_TEARDOWN(cow)
{
	oracle_release(&self->o);
	module_done();
}

static void cow_once(struct __test_metadata *_metadata, FIXTURE_DATA(cow) *self,
		     const FIXTURE_VARIANT(cow) *variant, struct rd_sum *s)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, i;
	struct ev e0, e1, e2;
	volatile uint64_t *w;
	struct rd_ctl *rd;
	int ret;

	ret = tfile_create(&self->o.f, variant->dir, "cow", NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = gen;
	rd->new_gen = gen + 1;
	prefault_stack(256 << 10);
	cow_break_all();
	/* after cow_break_all(), which would write to it */
	self->o.map = map_file(&self->o.f, PROT_READ | PROT_WRITE,
			       variant->shared ? MAP_SHARED : MAP_PRIVATE);
	ASSERT_NE(NULL, self->o.map);
	w = self->o.map;
	ret = rd_start(rd, self->o.map, words);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));

	make_deferred(_metadata, variant->how, self->o.map, self->o.f.size, &e0, &e1,
		      false);
	for (i = 0; i < words; i++)
		w[i] = word(i, gen + 1);
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after the writes", s);
	oracle_release(&self->o);
}

TEST_F_TIMEOUT(cow, write_upgrade, 300)
{
	RUN_ATTEMPTS(cow_once, s.stale + s.corrupt,
		     "reader read the old page after the write");
}

/* ---- d2. a read fault that maps writable ---------------------------- */

FIXTURE(swapin) {
	struct oracle o;
	pid_t child;
	int gate[2];
	bool swapon;
};

/*
 * An anonymous page swapped in by a READ fault is mapped writable when it
 * is certainly exclusive (do_swap_page(): a fresh folio that skipped the
 * swap cache, zram's SWP_SYNCHRONOUS_IO with one swap reference), so the
 * write that follows takes no fault at all.  Only the module's flush at
 * that read fault (or where the PTE is installed) stands between the new
 * page and the readers' stale entries to the deferred one: broken mode 3.
 *
 * To defer, the page must be mapped read-only and clean when it is paged
 * out: a child forked after a first swap-out shares the swap entries, so
 * the parent's swap-in goes through the swap cache and maps read-only.
 * The child exits after the deferral, leaving the parent the only swap
 * reference, and the parent's read then maps writable.
 */
FIXTURE_VARIANT(swapin) {
	int brk;
};

/* arm64: the first write to the clean writable PTE faults (no hardware
 * dirty bit here) and __ptep_set_access_flags() flushes it: no broken mode */
FIXTURE_VARIANT_ADD(swapin, anon) { .brk = UPGRADE_BRK };

FIXTURE_SETUP(swapin)
{
	self->child = -1;
	self->gate[0] = self->gate[1] = -1;
	self->swapon = false;
	oracle_setup(_metadata, &self->o, variant->brk, LUF_TMP_DIR, BY_PAGEOUT);
	if (_metadata->exit_code)
		return;
	if (!path_exists(LUF_SWAP_DEV))
		SKIP(return, "no swap device %s", LUF_SWAP_DEV);
	ASSERT_EQ(0, swapon(LUF_SWAP_DEV, 0))
		TH_LOG("swapon %s: %s", LUF_SWAP_DEV, strerror(errno));
	self->swapon = true;
}

static void swapin_release(FIXTURE_DATA(swapin) *self)
{
	int st;

	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, &st, 0);
	}
	self->child = -1;
	if (self->gate[0] >= 0) {
		close(self->gate[0]);
		close(self->gate[1]);
	}
	self->gate[0] = self->gate[1] = -1;
	rd_stop(self->o.rd);
	if (self->o.rd)
		munmap(self->o.rd, sizeof(*self->o.rd));
	self->o.rd = NULL;
	if (self->o.map)
		munmap(self->o.map, NPAGES * ps);
	self->o.map = NULL;
}

FIXTURE_TEARDOWN(swapin)
{
	swapin_release(self);
	if (self->swapon && swapoff(LUF_SWAP_DEV))
		TH_LOG("swapoff %s: %s", LUF_SWAP_DEV, strerror(errno));
	module_done();
}

static void swapin_once(struct __test_metadata *_metadata,
			FIXTURE_DATA(swapin) *self,
			const FIXTURE_VARIANT(swapin) *variant, struct rd_sum *s)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, i;
	volatile uint64_t *w;
	struct ev e0, e1, e2;
	struct rd_ctl *rd;
	uint64_t sum = 0;
	char c;
	int ret, st;

	(void)variant;
	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = gen;
	rd->new_gen = gen + 1;
	w = self->o.map = mmap(NULL, NPAGES * ps, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->o.map);
	madvise(self->o.map, NPAGES * ps, MADV_NOHUGEPAGE);
	for (i = 0; i < words; i++)
		w[i] = word(i, gen);
	/* dirty and writable: swapped out now, nothing deferred */
	ASSERT_EQ(0, madvise(self->o.map, NPAGES * ps, MADV_PAGEOUT));
	ASSERT_EQ(0, pipe(self->gate));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* shares the swap entries; touches nothing, then exits */
		close(self->gate[1]);
		pin_to_cpu(0);
		if (read(self->gate[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(self->gate[0]);
	self->gate[0] = -1;
	/*
	 * The fork made every private page copy-on-write: break them all
	 * now (no write fault later), but not the test pages, which must
	 * stay unwritten (read-only while cow_break_all() runs; mprotect()
	 * does not make a page that the child shares writable).
	 */
	ASSERT_EQ(0, mprotect(self->o.map, NPAGES * ps, PROT_READ));
	prefault_stack(256 << 10);
	cow_break_all();
	ASSERT_EQ(0, mprotect(self->o.map, NPAGES * ps, PROT_READ | PROT_WRITE));
	/* through the swap cache: read-only and clean, the entry is shared */
	for (i = 0; i < words; i += ps / 8)
		sum += w[i];
	ASSERT_NE((uint64_t)0, sum);
	ret = rd_start(rd, self->o.map, words);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));

	make_deferred(_metadata, BY_PAGEOUT, self->o.map, NPAGES * ps, &e0, &e1,
		      false);
	/* the child goes: the parent holds the only swap reference */
	close(self->gate[1]);
	self->gate[1] = -1;
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	self->child = -1;
	/* read faults: each maps a fresh exclusive page writable */
	for (i = 0; i < words; i += ps / 8)
		sum += w[i];
	/* no fault from here on */
	for (i = 0; i < words; i++)
		w[i] = word(i, gen + 1);
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after the writes", s);
	swapin_release(self);
}

TEST_F_TIMEOUT(swapin, read_maps_writable, 300)
{
	RUN_ATTEMPTS(swapin_once, s.stale + s.corrupt,
		     "reader read the old page after the write");
}

#include "correct_fault.h"
#include "correct_steal.h"
#include "correct_review.h"

/* ---- e, f. disable and rmmod under load ----------------------------- */

struct loop {
	pthread_t th;
	atomic_int stop;
	struct luf_run_opts o;
	struct luf_run_res r;
	int ret;
	bool running;
};

static void *loop_fn(void *arg)
{
	struct loop *l = arg;

	l->ret = luf_run(LUF_WL_PAGEOUT, &l->o, &l->r);
	return NULL;
}

/* MADV_PAGEOUT rounds over a 4 MiB ext4 file, readers on 16 pages of it */
static int loop_start(struct loop *l)
{
	int err;

	memset(l, 0, sizeof(*l));
	luf_run_opts_default(&l->o, LUF_WL_PAGEOUT);
	l->o.size = 4 << 20;
	l->o.hot_pages = NPAGES;
	/* until stopped (bounded by max_seconds) */
	l->o.seconds = 1e6;
	l->o.min_rounds = 1;
	l->o.max_seconds = 150;
	l->o.stop = &l->stop;
	l->o.tag = "correct-loop";
	err = pthread_create(&l->th, NULL, loop_fn, l);
	if (err)
		return -err;
	l->running = true;
	return 0;
}

static void loop_stop(struct loop *l)
{
	if (!l->running)
		return;
	atomic_store(&l->stop, 1);
	pthread_join(l->th, NULL);
	l->running = false;
}

/* Wait (<= 20 s) until @name reaches at least @min */
static bool wait_counter(const char *name, uint64_t min)
{
	double t0 = luf_now();
	uint64_t v;

	while (luf_now() - t0 < 20) {
		if (!luf_counter_read(name, &v) && v >= min)
			return true;
		luf_msleep(20);
	}
	return false;
}

/*
 * Load luf.ko (enabled=1, the timer out of the way), start the page-out
 * loop and wait until it holds pages; then let it defer some more.
 */
static void held_loop_start(struct __test_metadata *_metadata, struct loop *l)
{
	ASSERT_EQ(0, module_fresh(""));
	ASSERT_EQ(0, luf_knob_write("max_defer_ms", "60000"));
	ASSERT_EQ(0, luf_knob_write("enabled", "1"));
	ASSERT_EQ(0, loop_start(l));
	ASSERT_TRUE(wait_counter("held_pages", 1)) TH_LOG("nothing was held");
	luf_msleep(300);
}

static int read_tainted(uint64_t *v)
{
	return read_u64_strict("/proc/sys/kernel/tainted", v);
}

FIXTURE(lifecycle) {
	struct loop l;
};

FIXTURE_SETUP(lifecycle)
{
	memset(&self->l, 0, sizeof(self->l));
	if (g_break)
		SKIP(return, "not a test of broken mode %d", g_break);
	if (nr_cpus() < 1 + NREADERS)
		SKIP(return, "needs %d CPUs", 1 + NREADERS);
	REQUIRE_DIR(LUF_EXT4_DIR);
	if (!g_keep)
		ASSERT_EQ(0, luf_ensure_unloaded());
	ASSERT_EQ(0, pin_to_cpu(0));
}

FIXTURE_TEARDOWN(lifecycle)
{
	loop_stop(&self->l);
	module_done();
}

static void loop_check(struct __test_metadata *_metadata, struct loop *l)
{
	luf_run_log("loop: ", &l->r);
	ASSERT_EQ(0, l->ret) TH_LOG("workload: %s", l->r.err);
	ASSERT_EQ((uint64_t)0, l->r.bad_words) TH_LOG("readers saw wrong words");
	ASSERT_GT(l->r.pages_read, (uint64_t)0) TH_LOG("readers made no progress");
}

TEST_F_TIMEOUT(lifecycle, disable_under_load, 240)
{
	struct ev e0, e1, e2, e3, e4;

	held_loop_start(_metadata, &self->l);
	ASSERT_EQ(0, ev_read(&e0));
	ASSERT_EQ(0, luf_knob_write("enabled", "0"));
	ASSERT_EQ(0, ev_read(&e1));
	luf_msleep(500);
	ASSERT_EQ(0, ev_read(&e2));
	ev_log("before disable", &e0);
	ev_log("right after disable", &e1);
	ev_log("500 ms later", &e2);
	ASSERT_GT(e0.deferred, (uint64_t)0) TH_LOG("no deferral before the disable");
	ASSERT_TRUE(e0.held > 0 || e0.pending > 0);
	ASSERT_EQ((uint64_t)0, e1.pending) TH_LOG("pending_folios after disable");
	ASSERT_EQ((uint64_t)0, e1.held) TH_LOG("held_pages after disable");
	ASSERT_EQ(e1.held_total, e1.released)
		TH_LOG("released_pages != held_pages_total after disable");
	ASSERT_GT(e1.disable, e0.disable) TH_LOG("forced_disable did not move");
	/* disabled: nothing new is deferred or held, the loop goes on */
	ASSERT_EQ(e1.deferred, e2.deferred) TH_LOG("deferred while disabled");
	ASSERT_EQ((uint64_t)0, e2.pending);
	ASSERT_EQ((uint64_t)0, e2.held);
	ASSERT_EQ(e2.held_total, e2.released);

	ASSERT_EQ(0, luf_knob_write("enabled", "1"));
	ASSERT_TRUE(wait_counter("deferred_folios", e2.deferred + 1))
		TH_LOG("no deferral after enabling again");
	ASSERT_TRUE(wait_counter("held_pages", 1)) TH_LOG("nothing held after enabling again");
	ASSERT_EQ(0, ev_read(&e3));
	ev_log("enabled again", &e3);
	loop_stop(&self->l);
	loop_check(_metadata, &self->l);
	ASSERT_EQ(0, luf_knob_write("enabled", "0"));
	ASSERT_EQ(0, ev_read(&e4));
	ev_log("disabled at the end", &e4);
	ASSERT_EQ((uint64_t)0, e4.pending);
	ASSERT_EQ((uint64_t)0, e4.held);
	ASSERT_EQ(e4.held_total, e4.released);
}

TEST_F_TIMEOUT(lifecycle, rmmod_under_load, 240)
{
	/* W (9), D (7), B (5): a warning, an oops, a bad page */
	const uint64_t bad_taint = 1 << 9 | 1 << 7 | 1 << 5;
	uint64_t free0, free1, taint0, taint1, held;
	struct ev e0;
	int ret;

	ASSERT_EQ(0, drop_caches());
	luf_msleep(200);
	ASSERT_EQ(0, meminfo_kb("MemFree", &free0));
	ASSERT_EQ(0, read_tainted(&taint0));

	held_loop_start(_metadata, &self->l);
	ASSERT_EQ(0, ev_read(&e0));
	ev_log("before rmmod", &e0);
	held = e0.held;
	ret = luf_unload();
	ASSERT_EQ(0, ret) TH_LOG("delete_module under load: %s", strerror(-ret));
	ASSERT_FALSE(luf_is_loaded());
	/* the loop goes on without the module */
	luf_msleep(500);
	loop_stop(&self->l);
	loop_check(_metadata, &self->l);

	ASSERT_EQ(0, drop_caches());
	luf_msleep(200);
	ASSERT_EQ(0, meminfo_kb("MemFree", &free1));
	ASSERT_EQ(0, read_tainted(&taint1));
	note("held at rmmod: %" PRIu64 " pages; MemFree before load %" PRIu64
		       " kB, after rmmod %" PRIu64 " kB; tainted %#" PRIx64 " -> %#" PRIx64 "\n",
		       held, free0, free1, taint0, taint1);
	ASSERT_GT(held, (uint64_t)0) TH_LOG("nothing was held at rmmod time");
	ASSERT_GE(free1 + free0 / 100, free0) TH_LOG("MemFree did not come back");
	ASSERT_EQ((uint64_t)0, (taint1 & ~taint0) & bad_taint)
		TH_LOG("the kernel warned or oopsed (see the log)");
}

/*
 * I5, the memory bound: with max_pending_kb at BOUND_KB and the timer out
 * of the way, memcg reclaim that defers many times the bound never holds
 * more than the bound (held_pages_peak), and the threshold release ran.
 */
#define BOUND_KB	512

TEST_F_TIMEOUT(lifecycle, held_bounded, 240)
{
	const uint64_t max_pages = BOUND_KB * 1024ULL / ps;
	uint64_t deferred, peak, forced;
	struct luf_run_opts o;
	struct luf_run_res r;
	char val[16];

	luf_run_opts_default(&o, LUF_WL_MEMCG);
	REQUIRE_WL(LUF_WL_MEMCG, &o);
	ASSERT_EQ(0, luf_load(load_params("")));
	ASSERT_EQ(0, luf_knob_write("max_defer_ms", "60000"));
	snprintf(val, sizeof(val), "%d", BOUND_KB);
	ASSERT_EQ(0, luf_knob_write("max_pending_kb", val));
	ASSERT_EQ(0, luf_knob_write("enabled", "1"));
	luf_run_ok(_metadata, LUF_WL_MEMCG, &o, &r);
	ASSERT_EQ(0, luf_counter_read("deferred_folios", &deferred));
	ASSERT_EQ(0, luf_counter_read("held_pages_peak", &peak));
	ASSERT_EQ(0, luf_counter_read("forced_threshold", &forced));
	note("max_pending_kb=%d (%" PRIu64 " pages): deferred %" PRIu64
	     ", held_pages_peak %" PRIu64 ", forced_threshold %" PRIu64 "\n",
	     BOUND_KB, max_pages, deferred, peak, forced);
	ASSERT_GT(deferred, 4 * max_pages)
		TH_LOG("too little deferred for the bound to matter");
	ASSERT_GT(peak, (uint64_t)0) TH_LOG("nothing was ever held");
	ASSERT_LE(peak, max_pages) TH_LOG("held more than max_pending_kb");
	ASSERT_GT(forced, (uint64_t)0) TH_LOG("no threshold release");
}

/*
 * MIGRC must never make an allocation fail that stock 6.12 satisfies:
 * migrate ALLOC_MB of tmpfs pages from node 0 to node 1 with the sources
 * held, then let a child bound to node 0 fault in node 0's free memory
 * plus half of what is held, minus the 4 MiB a thread keeps migrating
 * meanwhile: stock would have the sources free.  The child must finish
 * (no OOM kill) and the held pages must have been given back on the way
 * (zone_low or the shrinker), and the thread's migrations went on
 * deferring.  A thread spins on CPU 1 throughout: x86 batches (and so
 * LUF defers) an unmap only while the mm is live on another CPU
 * (arch_tlbbatch_should_defer()); without it the share deferred depended
 * on which CPUs had last run the mm (15% to 100% in seven runs).
 */
#define ALLOC_MB	64
#define ALLOC_MIN_HELD_MB 8
#define MIGRATOR_PAGES	1024

static int node_meminfo_kb(int nid, const char *key, uint64_t *kb)
{
	char path[96], line[160], name[64];
	unsigned long long v;
	int n, ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %d %63[^:]: %llu", &n, name, &v) == 3 &&
		    !strcmp(name, key)) {
			*kb = v;
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* In a child bound to node 0: fault in @kb of anonymous memory. */
static int alloc_on_node0(uint64_t kb)
{
	unsigned long mask = 1;
	size_t len = kb * 1024, i;
	int st;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		char *p;

		if (syscall(SYS_set_mempolicy, 2 /* MPOL_BIND */, &mask, 8 * sizeof(mask)))
			_exit(2);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED)
			_exit(3);
		for (i = 0; i < len; i += ps)
			p[i] = 1;
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -errno;
	if (WIFSIGNALED(st))
		return -WTERMSIG(st) - 1000;
	return WEXITSTATUS(st) ? -WEXITSTATUS(st) : 0;
}

/* Moves a small file between the nodes until told to stop */
struct migrator {
	pthread_t tid, spinner;
	char *map;
	size_t len;
	atomic_int stop;
	uint64_t rounds, moved;
};

/* Keeps the mm live on CPU 1 until the migrator stops */
static void *spinner_fn(void *arg)
{
	struct migrator *m = arg;

	if (pin_to_cpu(1))
		return NULL;
	while (!atomic_load_explicit(&m->stop, memory_order_relaxed))
		;
	return NULL;
}

/*
 * At most MIGRATOR_ROUNDS moves: the held sources (16384 folios) plus 1024
 * a move must stay below the table's capacity (LUF_NR_BATCH *
 * LUF_BATCH_FOLIOS = 32768 deferred folios), or a full table releases
 * everything (released_threshold) before the allocation needs zone_low.
 */
#define MIGRATOR_ROUNDS	12

static void *migrator_fn(void *arg)
{
	struct migrator *m = arg;

	while (!atomic_load(&m->stop) && m->rounds < MIGRATOR_ROUNDS) {
		/* to node 0 may fail for lack of memory, as it would on stock */
		if (!move_to_node(m->map, m->len, m->rounds % 2 ? 0 : MIGRATE_NODE))
			m->moved++;
		m->rounds++;
	}
	return NULL;
}

TEST_F_TIMEOUT(lifecycle, migrc_alloc_near_limit, 300)
{
	const size_t npages = ALLOC_MB * 1024ULL * 1024 / ps;
	uint64_t free_kb = 0, held_kb, target_kb;
	struct migrator m = { 0 };
	struct ev e0, e1, e2;
	struct tfile f, f2;
	double t0, t1;
	char *map;
	int ret;

	if (!numa_node_has_memory(MIGRATE_NODE))
		SKIP(return, "needs memory on NUMA node %d", MIGRATE_NODE);
	REQUIRE_DIR(LUF_TMP_DIR);
	ASSERT_EQ(0, luf_load(load_params("")));
	ASSERT_EQ(0, luf_knob_write("max_defer_ms", "60000"));
	ASSERT_EQ(0, luf_knob_write("max_pending_kb", "262144"));
	ASSERT_EQ(0, luf_knob_write("migrc_enabled", "1"));
	ASSERT_EQ(0, pthread_create(&m.spinner, NULL, spinner_fn, &m));
	ret = tfile_create(&f, LUF_TMP_DIR, "alloc", npages, first_gen());
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	map = mmap(NULL, f.size, PROT_READ, MAP_SHARED, f.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	madvise(map, f.size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < f.size; i += ps)
		(void)*(volatile char *)(map + i);

	/* start from node 0, whatever the allocator chose; nothing held */
	ret = move_to_node(map, f.size, 0);
	ASSERT_EQ(0, ret) TH_LOG("move_pages to node 0: %s", strerror(-ret));
	ASSERT_EQ(0, luf_knob_write("migrc_enabled", "0"));
	ASSERT_EQ(0, luf_knob_write("migrc_enabled", "1"));
	ASSERT_EQ(0, ev_read(&e0));
	ret = move_to_node(map, f.size, MIGRATE_NODE);
	ASSERT_EQ(0, ret) TH_LOG("move_pages: %s", strerror(-ret));
	ASSERT_EQ(0, ev_read(&e1));
	ev_log("after migration", &e1);
	ASSERT_GE(e1.held * ps, (uint64_t)ALLOC_MIN_HELD_MB << 20)
		TH_LOG("less than %d MiB of the sources is held: nothing to test",
		       ALLOC_MIN_HELD_MB);
	ASSERT_GE(e1.retained - e0.retained, e1.held - e0.held)
		TH_LOG("migrc_retained counts fewer sources than were held");

	/* a 4 MiB file (in the slack) keeps migrating during the allocation */
	ret = tfile_create(&f2, LUF_TMP_DIR, "alloc2", MIGRATOR_PAGES, first_gen());
	ASSERT_EQ(0, ret) TH_LOG("second file: %s", strerror(-ret));
	m.len = f2.size;
	m.map = mmap(NULL, f2.size, PROT_READ, MAP_SHARED, f2.fd, 0);
	ASSERT_NE(MAP_FAILED, m.map);
	madvise(m.map, f2.size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < f2.size; i += ps)
		(void)*(volatile char *)(m.map + i);

	ASSERT_EQ(0, node_meminfo_kb(0, "MemFree", &free_kb));
	held_kb = e1.held * (ps / 1024);
	target_kb = free_kb + held_kb / 2 - MIGRATOR_PAGES * (ps / 1024);
	ASSERT_EQ(0, pthread_create(&m.tid, NULL, migrator_fn, &m));
	t0 = luf_now();
	ret = alloc_on_node0(target_kb);
	t1 = luf_now();
	atomic_store(&m.stop, 1);
	pthread_join(m.tid, NULL);
	pthread_join(m.spinner, NULL);
	note("meanwhile %" PRIu64 " migrations of the 4 MiB file, %" PRIu64
	     " complete\n", m.rounds, m.moved);
	ASSERT_EQ(0, ev_read(&e2));
	ev_log("after the allocation", &e2);
	note("node 0 MemFree %" PRIu64 " kB + held %" PRIu64 " kB: faulted in %"
	     PRIu64 " kB bound to node 0 in %.2f s: %s; released_zone_low +%"
	     PRIu64 " released_shrinker +%" PRIu64 " released_pages +%" PRIu64 "\n",
	     free_kb, held_kb, target_kb, t1 - t0, ret ? "FAILED" : "ok",
	     e2.rel_zone_low - e1.rel_zone_low, e2.rel_shrinker - e1.rel_shrinker,
	     e2.released - e1.released);
	ASSERT_EQ(0, ret) TH_LOG("the allocation failed (%d, <= -1000: signal)", ret);
	ASSERT_GT(e2.rel_zone_low + e2.rel_shrinker, e1.rel_zone_low + e1.rel_shrinker)
		TH_LOG("neither zone_low nor the shrinker gave held pages back");
	ASSERT_GT(e2.released, e1.released);
	ASSERT_GT(m.moved, (uint64_t)0) TH_LOG("nothing migrated during the allocation");
	ASSERT_GT(e2.deferred, e1.deferred) TH_LOG("no deferral during the allocation");
	munmap(m.map, f2.size);
	tfile_destroy(&f2);
	munmap(map, f.size);
	tfile_destroy(&f);
}

/* ---- keeping the reader CPUs quiet ---------------------------------- */

/*
 * Whatever runs on a reader CPU in the window flushes its TLB (see
 * BROKEN_ATTEMPTS), so for the whole run: every kernel thread that may
 * move goes to CPU 0, and so do device interrupts and unbound workqueues,
 * and the per-CPU vmstat work runs every 60 s instead of every second.
 * Restored at exit.
 */
#define PF_KTHREAD		0x00200000
#define WQ_CPUMASK		"/sys/devices/virtual/workqueue/cpumask"
#define STAT_INTERVAL		"/proc/sys/vm/stat_interval"

struct moved_kthread {
	pid_t pid;
	cpu_set_t mask;
};

struct moved_irq {
	int irq;
	char mask[64];
};

static struct moved_kthread *moved;
static int nr_moved;
static struct moved_irq *moved_irqs;
static int nr_moved_irqs;
static char saved_wq[128], saved_stat[32];

static void restore_file(const char *path, char *saved)
{
	if (saved[0])
		write_file_str(path, saved);
	saved[0] = '\0';
}

static void quiet_restore(void)
{
	int i;

	char path[64];

	for (i = 0; i < nr_moved; i++)
		sched_setaffinity(moved[i].pid, sizeof(moved[i].mask), &moved[i].mask);
	nr_moved = 0;
	for (i = 0; i < nr_moved_irqs; i++) {
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity",
			 moved_irqs[i].irq);
		write_file_str(path, moved_irqs[i].mask);
	}
	nr_moved_irqs = 0;
	restore_file(WQ_CPUMASK, saved_wq);
	restore_file(STAT_INTERVAL, saved_stat);
}

static void quiet_signal(int sig)
{
	quiet_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void save_and_write(const char *path, char *saved, size_t len,
			   const char *val)
{
	if (read_file(path, saved, len) <= 0) {
		saved[0] = '\0';
		return;
	}
	saved[strcspn(saved, "\n")] = '\0';
	if (write_file_str(path, val))
		saved[0] = '\0';
}

static void quiet_cpus(void)
{
	char path[64], buf[1024], *p;
	unsigned long flags;
	struct dirent *de;
	cpu_set_t mask, zero;
	int cap = 0;
	pid_t pid;
	DIR *d;

	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		pid = (pid_t)atoi(de->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		/* flags: the 7th field after the ")" that ends comm */
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1 ||
		    !(flags & PF_KTHREAD))
			continue;
		if (sched_getaffinity(pid, sizeof(mask), &mask) || CPU_COUNT(&mask) < 2)
			continue;
		if (sched_setaffinity(pid, sizeof(zero), &zero))
			continue;	/* per-CPU kthread */
		if (nr_moved == cap) {
			cap = cap ? 2 * cap : 64;
			moved = realloc(moved, cap * sizeof(*moved));
			if (!moved)
				break;
		}
		moved[nr_moved].pid = pid;
		moved[nr_moved].mask = mask;
		nr_moved++;
	}
	if (d)
		closedir(d);
	/* device interrupts (and the work their completions queue) too */
	cap = 0;
	d = opendir("/proc/irq");
	while (d && (de = readdir(d))) {
		struct moved_irq *m;
		int irq = atoi(de->d_name);

		if (irq <= 0 && strcmp(de->d_name, "0"))
			continue;
		if (nr_moved_irqs == cap) {
			cap = cap ? 2 * cap : 64;
			moved_irqs = realloc(moved_irqs, cap * sizeof(*moved_irqs));
			if (!moved_irqs) {
				nr_moved_irqs = 0;
				break;
			}
		}
		m = &moved_irqs[nr_moved_irqs];
		m->irq = irq;
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity", irq);
		save_and_write(path, m->mask, sizeof(m->mask), "1");
		if (m->mask[0])
			nr_moved_irqs++;
	}
	if (d)
		closedir(d);
	save_and_write(WQ_CPUMASK, saved_wq, sizeof(saved_wq), "1");
	save_and_write(STAT_INTERVAL, saved_stat, sizeof(saved_stat), "60");
	atexit(quiet_restore);
	/* the runner's watchdog sends SIGTERM first */
	signal(SIGTERM, quiet_signal);
	signal(SIGINT, quiet_signal);
}

/* ---- main ------------------------------------------------------------ */

/* argv for the harness: "-r fixture.variant.test" for each test of @mode */
static int broken_argv(int mode, char ***out)
{
	struct __fixture_metadata *f;
	struct __fixture_variant_metadata *v;
	struct __test_metadata *t;
	char **av;
	int n = 1, cap = 2;

	av = calloc(cap, sizeof(*av));
	if (!av)
		return -ENOMEM;
	av[0] = "luf_correct";
	for (f = __fixture_list; f; f = f->next) {
		for (v = f->variant; v; v = v->next) {
			if (!v->data || *(const int *)v->data != mode)
				continue;
			for (t = f->tests; t; t = t->next) {
				char *name;

				if (n + 3 > cap) {
					cap *= 2;
					av = realloc(av, cap * sizeof(*av));
					if (!av)
						return -ENOMEM;
				}
				if (asprintf(&name, "%s.%s.%s", f->name, v->name,
					     t->name) < 0)
					return -ENOMEM;
				av[n++] = "-r";
				av[n++] = name;
			}
		}
	}
	av[n] = NULL;
	*out = av;
	return n;
}

int main(int argc, char **argv)
{
	const char *why = luf_skip_reason(true);
	const char *b = getenv("LUF_BREAK"), *g;
	char **av = argv;
	int ac = argc;

	ps = (size_t)sysconf(_SC_PAGESIZE);
	if (getenv("LUF_CORRECT_MARK"))
		g_mark = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
	if (b && *b) {
		if (strlen(b) != 1 || b[0] < '1' || b[0] > '3')
			ksft_exit_fail_msg("LUF_BREAK=%s: want 1, 2 or 3\n", b);
		g_break = b[0] - '0';
	}
	/* listing or help needs neither root nor the module */
	if (argc > 1 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-h")))
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
	/* loaded once: the oracle tests and disable under load */
	if (g_keep && argc == 1) {
		static char *keep_av[] = { "luf_correct", "-f", "reuse", "-f",
					   "write", "-f", "unmap", "-f", "cow",
					   "-f", "swapin", "-f", "fault", "-f",
					   "steal", "-f", "forcewrite", "-f",
					   "uffdmove", "-f", "dio", "-r",
					   "lifecycle.disable_under_load", NULL };

		av = keep_av;
		ac = 23;
	}
	/* across the u32 wrap: the tests that cycle through generations */
	if (g_gen_start && !g_break && argc == 1) {
		static char *wrap_av[] = { "luf_correct", "-f", "reuse", "-f",
					   "swapin", "-f", "lifecycle", NULL };

		av = wrap_av;
		ac = 7;
	}
	if (g_break && argc == 1) {
		ac = broken_argv(g_break, &av);
		if (ac < 0)
			ksft_exit_fail_msg("out of memory\n");
		if (ac == 1)
			ksft_exit_fail_msg("no test for broken mode %d\n", g_break);
	}
	if (!(argc > 1 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-h")))) {
		/* before anything runs on the other CPUs (see LUF_KEEP_MODULE) */
		if (g_keep && !luf_is_loaded() && luf_load(load_params("")))
			ksft_exit_fail_msg("loading %s failed\n", luf_ko_path());
		quiet_cpus();
	}
	return test_harness_run(ac, av);
}
