// SPDX-License-Identifier: GPL-2.0
/*
 * luf_lifecycle: disable, rmmod and the bounds under load (I5, I6)
 * (the oracles, readers and broken modes: oracle.h).
 *
 *  lifecycle.disable_under_load (I5, disable)
 *	readers and a MADV_PAGEOUT loop run; echo 0 > enabled: right after,
 *	pending_folios == 0, held_pages == 0 and released_pages ==
 *	held_pages_total, and nothing is deferred while disabled; enabling
 *	again defers again; the readers never see a wrong word.
 *  lifecycle.defer_ms_lowered (I5, time)
 *	max_defer_ms=60000 while the MADV_PAGEOUT loop defers (the timer is
 *	queued 60 s out), then max_defer_ms=200: the timer flush
 *	(forced_timer) must come within 2 s of the write, not at the old
 *	period.
 *  lifecycle.held_bounded (I5, memory)
 *	max_pending_kb=512 and a memcg reclaim workload that defers more
 *	than four times that: held_pages_peak never passes 512 KiB, and the
 *	threshold release ran.
 *  lifecycle.folio_beyond_bound (I5, memory)
 *	max_pending_kb=32: an ext4 page is deferred, then a 64 KiB XFS folio
 *	is unmapped read-only; it is not deferred, and no threshold release
 *	flushes the ext4 page on its account.
 *  lifecycle.aging_flushes (page aging)
 *	aging_pct=25 and the memcg reclaim workload, timer and bound out of
 *	the way: on x86 the deferred flushes are done every 25% of the memcg
 *	(forced_aging moves, at most once per 64 deferred folios); with
 *	aging_pct=0 never.  arm64 invalidates as aging clears the accessed
 *	bit: forced_aging stays 0.
 *  lifecycle.aging_per_memcg (page aging)
 *	aging_pct=25: the root memcg defers 512 folios of a file (far below
 *	25% of the system's LRU); then a child in a small memcg pages out 32
 *	folios it charged itself: no aging flush on their account (the
 *	small memcg deferred fewer than 64), the root's 512 stay pending;
 *	then 512 more from the small memcg: aging flushes (x86).
 *  lifecycle.migrc_alloc_near_limit (I5, MIGRC)
 *	64 MiB of tmpfs migrated to node 1 with the sources held; a child
 *	bound to node 0 faults in node 0's MemFree plus the held amount less
 *	what stock 6.12 could not use either (alloc_target_kb(); a migration
 *	that outlasted max_defer_ms is done once more) while a thread keeps
 *	migrating another 4 MiB file between the nodes: it must not be
 *	OOM-killed, released_zone_low or released_shrinker moved, and the
 *	migrations went on deferring.
 *  lifecycle.rmmod_under_load (I6)
 *	readers and a MADV_PAGEOUT loop run while pages are held; rmmod
 *	succeeds, the workload goes on correctly without the module, no new
 *	WARN/BUG/bad-page taint, and MemFree (after drop_caches) is back
 *	within 1% of its level before the load.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
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

#include "oracle.h"

/* ---- e, f. disable and rmmod under load ----------------------------- */

struct loop {
	struct luf_wl w;
	int st;			/* luf_wl_wait() */
	bool running;
};

/* MADV_PAGEOUT rounds over a 4 MiB ext4 file, readers on 16 pages of it */
static int loop_start(struct loop *l)
{
	static const char *const args[] = {
		"reclaim", "--size-mb", "4", "--hot-pages", STR(NPAGES),
		/* until stopped, at most 150 s */
		"--seconds", "150", "--max-seconds", "150", NULL,
	};
	int err;

	memset(l, 0, sizeof(*l));
	err = luf_wl_start(&l->w, args);
	l->running = !err;
	return err;
}

static void loop_stop(struct loop *l)
{
	if (!l->running)
		return;
	luf_wl_stop(&l->w);
	l->st = luf_wl_wait(&l->w, 60);
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
	ASSERT_EQ(0, luf_module_fresh(""));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
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
	LUF_BREAK_SKIP(0);
	if (nr_cpus() < 1 + NREADERS)
		SKIP(return, "needs %d CPUs", 1 + NREADERS);
	REQUIRE_DIR(LUF_EXT4_DIR);
	if (!luf_env()->keep)
		ASSERT_EQ(0, luf_ensure_unloaded());
	ASSERT_EQ(0, pin_to_cpu(0));
}

FIXTURE_TEARDOWN(lifecycle)
{
	loop_stop(&self->l);
	luf_module_done();
}

static void loop_check(struct __test_metadata *_metadata, struct loop *l)
{
	luf_wl_check(_metadata, &l->w, l->st, false);
}

TEST_F_TIMEOUT(lifecycle, disable_under_load, 240)
{
	struct luf_ev e0, e1, e2, e3, e4;

	held_loop_start(_metadata, &self->l);
	ASSERT_EQ(0, luf_ev_read(&e0));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "0"));
	ASSERT_EQ(0, luf_ev_read(&e1));
	luf_msleep(500);
	ASSERT_EQ(0, luf_ev_read(&e2));
	luf_ev_log("before disable", &e0);
	luf_ev_log("right after disable", &e1);
	luf_ev_log("500 ms later", &e2);
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

	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	ASSERT_TRUE(wait_counter(CTR(deferred_folios), e2.deferred + 1))
		TH_LOG("no deferral after enabling again");
	ASSERT_TRUE(wait_counter("held_pages", 1)) TH_LOG("nothing held after enabling again");
	ASSERT_EQ(0, luf_ev_read(&e3));
	luf_ev_log("enabled again", &e3);
	loop_stop(&self->l);
	loop_check(_metadata, &self->l);
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "0"));
	ASSERT_EQ(0, luf_ev_read(&e4));
	luf_ev_log("disabled at the end", &e4);
	ASSERT_EQ((uint64_t)0, e4.pending);
	ASSERT_EQ((uint64_t)0, e4.held);
	ASSERT_EQ(e4.held_total, e4.released);
}

TEST_F_TIMEOUT(lifecycle, defer_ms_lowered, 240)
{
	struct luf_ev e0, e1;
	double t0;

	held_loop_start(_metadata, &self->l);
	ASSERT_EQ(0, luf_ev_read(&e0));
	luf_ev_log("max_defer_ms=60000", &e0);
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "200"));
	t0 = luf_now();
	do {
		luf_msleep(50);
		ASSERT_EQ(0, luf_ev_read(&e1));
	} while (e1.timer == e0.timer && luf_now() - t0 < 2);
	luf_ev_log("after max_defer_ms=200", &e1);
	loop_stop(&self->l);
	loop_check(_metadata, &self->l);
	ASSERT_GT(e0.deferred, (uint64_t)0) TH_LOG("no deferral before the write");
	ASSERT_GT(e1.timer, e0.timer)
		TH_LOG("no timer flush within 2 s of max_defer_ms=200: the timer kept the old period");
}

TEST_F_TIMEOUT(lifecycle, rmmod_under_load, 240)
{
	/* W (9), D (7), B (5): a warning, an oops, a bad page */
	const uint64_t bad_taint = 1 << 9 | 1 << 7 | 1 << 5;
	uint64_t free0, free1, taint0, taint1, held;
	struct luf_ev e0;
	int ret;

	ASSERT_EQ(0, drop_caches());
	luf_msleep(200);
	ASSERT_EQ(0, meminfo_kb("MemFree", &free0));
	ASSERT_EQ(0, read_tainted(&taint0));

	held_loop_start(_metadata, &self->l);
	ASSERT_EQ(0, luf_ev_read(&e0));
	luf_ev_log("before rmmod", &e0);
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
	struct luf_wl w;
	char val[16];

	ASSERT_EQ(0, luf_load(""));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	snprintf(val, sizeof(val), "%d", BOUND_KB);
	ASSERT_EQ(0, luf_knob_write(KNOB(max_pending_kb), val));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	LUF_WL_RUN(&w, false, "memcg");
	ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &deferred));
	ASSERT_EQ(0, luf_counter_read(CTR(held_pages_peak), &peak));
	ASSERT_EQ(0, luf_counter_read(CTR_FORCED(threshold), &forced));
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
 * A folio that alone is beyond max_pending_kb is not deferred, and is no
 * reason to release what others deferred: with max_pending_kb at 32 KiB,
 * an ext4 page is deferred, then a 64 KiB XFS folio is unmapped read-only
 * and flushed as usual, and the ext4 page stays deferred (no threshold
 * release).
 */
TEST_F_TIMEOUT(lifecycle, folio_beyond_bound, 120)
{
	struct luf_file small = { .fd = -1 }, big = { .fd = -1 };
	uint64_t large0, large1, forced0, forced1;
	const unsigned int gen = first_gen();
	struct luf_ev e0, e1, e2;
	struct rd_ctl *rd;
	char *m_small, *m_big;
	size_t i;

	REQUIRE_DIR(LUF_XFS_DIR);
	ASSERT_EQ(0, luf_module_fresh(""));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_pending_kb), "32"));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	g_large = false;
	ASSERT_EQ(0, tfile_create(&small, LUF_EXT4_DIR, "small", 1, gen));
	g_large = true;
	ASSERT_EQ(0, tfile_create(&big, LUF_XFS_DIR, "big", NPAGES, gen));
	g_large = false;
	m_small = map_file(&small, PROT_READ, MAP_SHARED);
	m_big = map_file(&big, PROT_READ, MAP_SHARED);
	ASSERT_TRUE(m_small && m_big);
	for (i = 0; i < big.size; i += ps)
		ASSERT_EQ(word(i / 8, gen), *(volatile uint64_t *)(m_big + i));
	rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->old_gen = gen;
	rd->new_gen = gen;
	prefault_all();
	open_window(_metadata, rd, m_small, ps, BY_PAGEOUT, &e0, &e1, false);
	ASSERT_EQ(0, luf_counter_read(CTR_PATH(reclaim, ro_large_folios), &large0));
	ASSERT_EQ(0, luf_counter_read(CTR_FORCED(threshold), &forced0));
	ASSERT_EQ(0, madvise(m_big, big.size, MADV_PAGEOUT));
	ASSERT_EQ(0, luf_counter_read(CTR_PATH(reclaim, ro_large_folios), &large1));
	ASSERT_EQ(0, luf_counter_read(CTR_FORCED(threshold), &forced1));
	ASSERT_EQ(0, luf_ev_read(&e2));
	luf_rd_stop(&rd->rd);
	munmap(rd, sizeof(*rd));
	ev_report(&e0, &e1, &e2, "after the XFS page-out");
	ASSERT_GT(large1, large0) TH_LOG("the XFS folio was not unmapped read-only, whole");
	ASSERT_EQ(e1.deferred, e2.deferred) TH_LOG("a folio beyond max_pending_kb was deferred");
	ASSERT_EQ(forced0, forced1)
		TH_LOG("a folio that can never fit released what others deferred");
	ASSERT_TRUE(e2.held > 0 || e2.pending > 0) TH_LOG("the ext4 page is no longer deferred");
	munmap(m_small, small.size);
	munmap(m_big, big.size);
	luf_file_destroy(&small);
	luf_file_destroy(&big);
}

/*
 * Page aging: x86 clears accessed bits without a flush, so reclaim that
 * defers the flushes has them done once it deferred aging_pct of the memcg
 * (luf_aging_due()).  The workload's memcg is 4 MiB and it reclaims many
 * times that, so aging_pct=25 must flush, and never more often than once
 * per LUF_AGING_MIN_PAGES (64) deferred folios; aging_pct=0 never does.
 */
static void aging_run(struct __test_metadata *_metadata, const char *pct,
		      uint64_t *deferred, uint64_t *aging)
{
	struct luf_wl w;
	uint64_t d0, a0;

	ASSERT_EQ(0, luf_knob_write(KNOB(aging_pct), pct));
	ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &d0));
	ASSERT_EQ(0, luf_counter_read(CTR_FORCED(aging), &a0));
	LUF_WL_RUN(&w, false, "memcg");
	ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), deferred));
	ASSERT_EQ(0, luf_counter_read(CTR_FORCED(aging), aging));
	*deferred -= d0;
	*aging -= a0;
	note("aging_pct=%s: deferred %" PRIu64 ", forced_aging %" PRIu64 "\n",
	     pct, *deferred, *aging);
	ASSERT_GT(*deferred, (uint64_t)1024) TH_LOG("too little deferred");
}

TEST_F_TIMEOUT(lifecycle, aging_flushes, 240)
{
	uint64_t deferred, aging;

	ASSERT_EQ(0, luf_load(""));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_pending_kb), "262144"));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	aging_run(_metadata, "25", &deferred, &aging);
	if (_metadata->exit_code)
		return;
	if (ON_ARM64) {
		ASSERT_EQ((uint64_t)0, aging)
			TH_LOG("arm64 flushed for aging (no multi-gen LRU here)");
		return;
	}
	ASSERT_GT(aging, (uint64_t)0) TH_LOG("no aging flush");
	ASSERT_LE(aging * 64, deferred) TH_LOG("aging flushed too often");
	aging_run(_metadata, "0", &deferred, &aging);
	if (_metadata->exit_code)
		return;
	ASSERT_EQ((uint64_t)0, aging) TH_LOG("aging_pct=0 flushed for aging");
}

/*
 * Aging weighs what one memcg deferred against that memcg alone: another
 * memcg's deferrals must not make a small memcg flush at every deferral.
 */
#define AGING_MIN	64	/* LUF_AGING_MIN_PAGES */

struct aging_spin {
	atomic_int stop, running;
};

static void *aging_spin_fn(void *arg)
{
	struct aging_spin *s = arg;

	if (!pin_to_cpu(1))
		atomic_store(&s->running, 1);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed) &&
	       atomic_load_explicit(&s->running, memory_order_relaxed))
		;
	return NULL;
}

/*
 * A child (in memcg @cg, or in the caller's) writes a file of @npages
 * pages, which charges its page cache to that memcg, maps and reads it,
 * and pages it out while a thread of its mm spins on CPU 1 (x86 defers
 * only while another CPU may hold the mm's translations).  The file stays
 * (a truncation would flush what it deferred): its path goes to @path.
 * 0 or the step that failed.
 */
static int aging_pageout(const char *cg, size_t npages, const char *tag,
			 char *path)
{
	struct aging_spin spin = {};
	struct luf_file f;
	pthread_t th;
	int st, ret;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid) {
		if (waitpid(pid, &st, 0) != pid)
			return -errno;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
	}
	if (pin_to_cpu(0) || (cg && memcg_enter(cg)))
		_exit(1);
	if (luf_file_create(&f, LUF_EXT4_DIR, tag, npages * luf_page_size()))
		_exit(2);
	memcpy(path, f.path, sizeof(f.path));
	if (luf_file_map(&f) || luf_file_touch(&f))
		_exit(3);
	if (pthread_create(&th, NULL, aging_spin_fn, &spin))
		_exit(4);
	while (!atomic_load(&spin.running))
		luf_msleep(1);
	ret = madvise((void *)f.map, f.size, MADV_PAGEOUT) ? 5 : 0;
	atomic_store(&spin.stop, 1);
	pthread_join(th, NULL);
	_exit(ret);
}

struct aging_ctrs {
	uint64_t deferred, aging, pending, flushes;
};

static void aging_read(struct __test_metadata *_metadata,
		       struct aging_ctrs *c)
{
	ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &c->deferred));
	ASSERT_EQ(0, luf_counter_read(CTR_FORCED(aging), &c->aging));
	ASSERT_EQ(0, luf_counter_read(CTR(pending_folios), &c->pending));
	ASSERT_EQ(0, luf_counter_read(CTR(flushes), &c->flushes));
}

#define AGING_FILE_PATH	256	/* sizeof(luf_file.path) */

/* For a failure report: every counter that moved from @a to @b */
static void stat_moved(const struct luf_stat *a, const struct luf_stat *b)
{
	uint64_t v;
	int i;

	for (i = 0; i < b->n; i++) {
		v = 0;
		if (luf_stat_get(a, b->line[i].name, &v) || v != (uint64_t)b->line[i].val)
			note("  %s: %" PRIu64 " -> %" PRId64 "\n", b->line[i].name, v,
			     b->line[i].val);
	}
}

TEST_F_TIMEOUT(lifecycle, aging_per_memcg, 120)
{
	static struct luf_stat s1, s2;
	struct aging_ctrs c0, c1, c2, c3;
	char cg[256], (*paths)[AGING_FILE_PATH];
	int i;

	if (!memcg_available())
		SKIP(return, "no memory controller (cgroup v2)");
	paths = mmap(NULL, 3 * AGING_FILE_PATH, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, paths);
	ASSERT_EQ(0, memcg_create("luf-aging-small", cg, sizeof(cg)));
	ASSERT_EQ(0, luf_load(""));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_pending_kb), "262144"));
	ASSERT_EQ(0, luf_knob_write(KNOB(aging_pct), "25"));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	aging_read(_metadata, &c0);
	ASSERT_EQ(0, aging_pageout(NULL, 512, "aging-root", paths[0]));
	aging_read(_metadata, &c1);
	ASSERT_EQ(0, luf_stat_read(&s1));
	note("root memcg: deferred %" PRIu64 ", forced_aging %" PRIu64
	     ", pending %" PRIu64 ", flushes %" PRIu64 "\n",
	     c1.deferred - c0.deferred, c1.aging - c0.aging, c1.pending,
	     c1.flushes - c0.flushes);
	ASSERT_GE(c1.pending, (uint64_t)2 * AGING_MIN)
		TH_LOG("the root memcg's page-out left too little pending");
	ASSERT_EQ(0, aging_pageout(cg, 32, "aging-small", paths[1]));
	aging_read(_metadata, &c2);
	ASSERT_EQ(0, luf_stat_read(&s2));
	note("small memcg, 32 pages: deferred %" PRIu64 ", forced_aging %"
	     PRIu64 ", pending %" PRIu64 "\n", c2.deferred - c1.deferred,
	     c2.aging - c1.aging, c2.pending);
	ASSERT_GT(c2.deferred, c1.deferred)
		TH_LOG("the small memcg deferred nothing");
	ASSERT_EQ(c1.aging, c2.aging)
		TH_LOG("aging flushed for a memcg that deferred < %d folios",
		       AGING_MIN);
	ASSERT_GE(c2.pending, c1.pending) {
		stat_moved(&s1, &s2);
		TH_LOG("the root memcg's deferrals were flushed (what moved: above)");
	}
	ASSERT_EQ(0, aging_pageout(cg, 512, "aging-small2", paths[2]));
	aging_read(_metadata, &c3);
	note("small memcg, 512 pages: deferred %" PRIu64 ", forced_aging %"
	     PRIu64 "\n", c3.deferred - c2.deferred, c3.aging - c2.aging);
	ASSERT_GE(c3.deferred - c2.deferred, (uint64_t)4 * AGING_MIN)
		TH_LOG("the small memcg deferred too little");
	if (ON_ARM64) {
		ASSERT_EQ(c2.aging, c3.aging) TH_LOG("arm64 flushed for aging");
	} else {
		ASSERT_GT(c3.aging, c2.aging) TH_LOG("no aging flush");
	}
	for (i = 0; i < 3; i++)
		if (paths[i][0])
			unlink(paths[i]);
	munmap(paths, 3 * AGING_FILE_PATH);
	ASSERT_EQ(0, memcg_destroy(cg));
}

/*
 * MIGRC must never make an allocation fail that stock 6.12 satisfies:
 * migrate ALLOC_MB of tmpfs pages from node 0 to node 1 with the sources
 * held, then let a child bound to node 0 fault in what stock would have
 * free there (alloc_target_kb()).  The child must finish
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

/* The sum of node @nid's min watermarks (/proc/zoneinfo), in kB */
static int node_min_kb(int nid, uint64_t *kb)
{
	unsigned long long v;
	char line[160];
	int node = -1;
	FILE *f = fopen("/proc/zoneinfo", "re");

	if (!f)
		return -errno;
	*kb = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %d,", &node) != 1 && node == nid &&
		    sscanf(line, " min %llu", &v) == 1)
			*kb += v * (ps / 1024);
	fclose(f);
	return *kb ? 0 : -ENOENT;
}

/*
 * Node 0's MemFree @free_kb plus the sources held there @held_kb, less what
 * stock could not use either: the 4 MiB file the thread moves, node 0's
 * min watermarks @min_kb (khugepaged raises them to tens of MiB), the
 * child's page tables and ALLOC_SLACK_MB.
 */
#define ALLOC_SLACK_MB	4

static uint64_t alloc_target_kb(uint64_t free_kb, uint64_t held_kb, uint64_t min_kb)
{
	uint64_t kb = free_kb + held_kb;

	kb -= MIGRATOR_PAGES * (ps / 1024) + min_kb + (ALLOC_SLACK_MB << 10);
	return kb - kb * 8 / ps;	/* a PTE (8 bytes) a page */
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
 * At most MIGRATOR_ROUNDS moves: the held sources (8192 folios) plus 1024
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
	uint64_t free_kb = 0, min_kb = 0, held_kb, target_kb;
	struct migrator m = { 0 };
	struct luf_ev e0, e1, e2;
	struct luf_file f, f2;
	double t0, t1;
	int ret, try;
	bool enough;
	char *map;

	if (!numa_node_has_memory(MIGRATE_NODE))
		SKIP(return, "needs memory on NUMA node %d", MIGRATE_NODE);
	REQUIRE_DIR(LUF_TMP_DIR);
	ASSERT_EQ(0, luf_load(""));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_pending_kb), "262144"));
	ASSERT_EQ(0, luf_knob_write(KNOB(migrc_enabled), "1"));
	ASSERT_EQ(0, pthread_create(&m.spinner, NULL, spinner_fn, &m));
	ret = tfile_create(&f, LUF_TMP_DIR, "alloc", npages, first_gen());
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	map = mmap(NULL, f.size, PROT_READ, MAP_SHARED, f.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	madvise(map, f.size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < f.size; i += ps)
		(void)*(volatile char *)(map + i);

	/* a 4 MiB file (in the slack) keeps migrating during the allocation */
	ret = tfile_create(&f2, LUF_TMP_DIR, "alloc2", MIGRATOR_PAGES, first_gen());
	ASSERT_EQ(0, ret) TH_LOG("second file: %s", strerror(-ret));
	m.len = f2.size;
	m.map = mmap(NULL, f2.size, PROT_READ, MAP_SHARED, f2.fd, 0);
	ASSERT_NE(MAP_FAILED, m.map);
	madvise(m.map, f2.size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < f2.size; i += ps)
		(void)*(volatile char *)(m.map + i);

	/* a migration that outlasts max_defer_ms has its first sources released: once more */
	for (try = 1; ; try++) {
		/* from node 0, whatever the allocator chose; nothing held */
		ret = move_to_node(map, f.size, 0);
		ASSERT_EQ(0, ret) TH_LOG("move_pages to node 0: %s", strerror(-ret));
		ASSERT_EQ(0, luf_knob_write(KNOB(migrc_enabled), "0"));
		ASSERT_EQ(0, luf_knob_write(KNOB(migrc_enabled), "1"));
		ASSERT_EQ(0, luf_ev_read(&e0));
		t0 = luf_now();
		ret = move_to_node(map, f.size, MIGRATE_NODE);
		t1 = luf_now();
		ASSERT_EQ(0, ret) TH_LOG("move_pages: %s", strerror(-ret));
		ASSERT_EQ(0, luf_ev_read(&e1));
		note("migrated %d MiB to node %d in %.2f s (try %d)\n", ALLOC_MB,
		     MIGRATE_NODE, t1 - t0, try);
		luf_ev_log("after migration", &e1);
		ASSERT_GE(e1.retained - e0.retained, e1.held - e0.held)
			TH_LOG("migrc_retained counts fewer sources than were held");
		ASSERT_EQ(0, node_meminfo_kb(0, "MemFree", &free_kb));
		ASSERT_EQ(0, node_min_kb(0, &min_kb));
		held_kb = e1.held * (ps / 1024);
		target_kb = alloc_target_kb(free_kb, held_kb, min_kb);
		enough = target_kb >= free_kb + (ALLOC_MIN_HELD_MB << 10);
		if (enough || try == 2)
			break;
	}
	ASSERT_TRUE(enough)
		TH_LOG("node 0 MemFree %" PRIu64 " kB, min %" PRIu64 " kB, held %" PRIu64
		       " kB (forced_timer +%" PRIu64 "): less than %d MiB of held pages "
		       "to take: nothing to test", free_kb, min_kb, held_kb,
		       e1.timer - e0.timer, ALLOC_MIN_HELD_MB);
	ASSERT_EQ(0, pthread_create(&m.tid, NULL, migrator_fn, &m));
	t0 = luf_now();
	ret = alloc_on_node0(target_kb);
	t1 = luf_now();
	atomic_store(&m.stop, 1);
	pthread_join(m.tid, NULL);
	pthread_join(m.spinner, NULL);
	note("meanwhile %" PRIu64 " migrations of the 4 MiB file, %" PRIu64
	     " complete\n", m.rounds, m.moved);
	ASSERT_EQ(0, luf_ev_read(&e2));
	luf_ev_log("after the allocation", &e2);
	note("node 0 MemFree %" PRIu64 " kB + held %" PRIu64 " kB (min %" PRIu64
	     " kB): faulted in %" PRIu64 " kB bound to node 0 in %.2f s: %s; released_zone_low +%"
	     PRIu64 " released_shrinker +%" PRIu64 " released_pages +%" PRIu64 "\n",
	     free_kb, held_kb, min_kb, target_kb, t1 - t0, ret ? "FAILED" : "ok",
	     e2.rel_zone_low - e1.rel_zone_low, e2.rel_shrinker - e1.rel_shrinker,
	     e2.released - e1.released);
	ASSERT_EQ(0, ret) TH_LOG("the allocation failed (%d, <= -1000: signal)", ret);
	ASSERT_GT(e2.rel_zone_low + e2.rel_shrinker, e1.rel_zone_low + e1.rel_shrinker)
		TH_LOG("neither zone_low nor the shrinker gave held pages back");
	ASSERT_GT(e2.released, e1.released);
	ASSERT_GT(m.moved, (uint64_t)0) TH_LOG("nothing migrated during the allocation");
	ASSERT_GT(e2.deferred, e1.deferred) TH_LOG("no deferral during the allocation");
	munmap(m.map, f2.size);
	luf_file_destroy(&f2);
	munmap(map, f.size);
	luf_file_destroy(&f);
}

LUF_MAIN(LUF_NEED_MODULE | LUF_QUIET)
