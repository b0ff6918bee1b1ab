// SPDX-License-Identifier: GPL-2.0
/*
 * luf_race: a read-only, clean PTE does not prove that no CPU can still
 * write the page while another TLB flush of the mm is pending.
 *
 * MADV_FREE cleans PTEs (clear_young_dirty_ptes()) and UFFDIO_WRITEPROTECT
 * write-protects them (change_protection()), both under the mmap read
 * lock and both with their TLB flush deferred to the end of the walk
 * (tlb_finish_mmu(); mm_tlb_flush_pending() is set meanwhile).  With both
 * past a page P, P's PTE is read-only and clean while a writer thread on
 * another CPU still holds a dirty, writable TLB entry for P and stores
 * through it without a page walk.  Stock migration flushes before it
 * copies (try_to_unmap_flush() at "move:" in migrate_pages_batch()), so
 * each store lands in P before the copy or faults on the migration entry
 * and goes to the destination.  A migration that deferred that flush
 * (MIGRC) would copy first: the writer's later stores land in the old
 * page and the destination keeps an older value.  The hook series marks
 * such a read-only batch writable and luf.ko declines it
 * (declined_pending); broken mode 6 (debug_break=6) skips that check.
 *
 * Each try, with enabled=1, migrc_enabled=1 and max_defer_ms=60000:
 *
 *  - a RACE_PAGES anonymous region, THP off, registered for uffd-wp, is
 *    written whole by the main thread (CPU 0); a handler thread resolves
 *    each write-protect fault (UFFDIO_WRITEPROTECT without _MODE_WP on
 *    the page).  Not UFFD_FEATURE_WP_ASYNC: its in-kernel resolution
 *    (do_wp_page()) rewrites a valid PTE that MADV_FREE made old, which
 *    arm64's CONFIG_DEBUG_VM reports as "racy access flag clearing"
 *    (stock 6.12, not LUF);
 *  - a writer on CPU 1 stores 1, 2, 3, ... into P, the region's first
 *    page, and publishes each value after its store;
 *  - MADV_FREE (CPU 2) and UFFDIO_WRITEPROTECT (CPU 3) over the whole
 *    region start together;
 *  - once P is write-protected (PM_UFFD_WP in /proc/self/pagemap) and
 *    lazily freed (KPF_SWAPBACKED clear in /proc/kpageflags: MADV_FREE
 *    cleaned P's PTE and the folios after it), P is moved to node 1
 *    with move_pages(2), the writer is stopped, and its last published
 *    value is the last store that completed;
 *  - the try is valid only if P moved and both walks were still running
 *    when the writer stopped, i.e. both flushes were still pending at
 *    every store;
 *  - after both walks ended, P must hold that last value.
 *
 * A normal run passes when every valid try kept the last store and at
 * least one of them was declined (declined_pending grew: the pending
 * flush was really seen); broken mode 6 passes only if a valid try lost
 * the store.  A try is valid only if the walks are still running after
 * the migration: the main thread waits for them to pass P, not for a
 * fixed time, so even single-threaded TCG, which runs one vCPU at a time,
 * makes valid tries (10 of 11 in one x86_64 run; broken mode 6 caught at
 * the 3rd try).  On a loaded host fewer tries are valid (2 of 5 and 10
 * of 31 in one multi-threaded run beside a CI run and two busy loops), so
 * the test tries for up to RACE_SECONDS, and skips only if no try was
 * valid by then.  make check runs it on single- and multi-threaded TCG.
 *
 * LUF_KEEP_MODULE=1 (the multi-threaded pass): luf.ko stays loaded; a
 * broken run needs it loaded with allow_unsafe=1 and puts debug_break
 * back to 0 at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <unistd.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "luf_test.h"

#define RACE_PAGES	16384	/* the walks must outlast the migration */
#define RACE_NODE	1
#define RACE_BREAK	BRK_PENDING	/* defer under a pending flush */
#define MIN_VALID	LUF_TRIES	/* normal run: valid tries wanted */
#define RACE_SECONDS	120	/* ... or tries made for at most this long */
#define SPIN_LIMIT	20000	/* pagemap reads while waiting for the walks */
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define PM_UFFD_WP	(1ULL << 57)
#define PM_PRESENT	(1ULL << 63)
#define KPF_SWAPBACKED	14

enum { W_FREE, W_WP, W_NR };

struct race {
	char *region;
	size_t len;
	int uffd;
	int cpu[W_NR];
	atomic_int go;			/* the walks may start */
	atomic_int started[W_NR];	/* walk thread pinned, spinning on go */
	atomic_int ended[W_NR];		/* walk syscall returned */
	atomic_int err[W_NR];		/* its errno, 0 if it worked */
	atomic_int stop;		/* writer: stop storing */
	atomic_int handler_stop;	/* fault handler: stop */
	atomic_int faults;		/* write-protect faults resolved */
	_Atomic uint64_t done;		/* writer: last value stored in P */
};

static void *writer(void *arg)
{
	struct race *r = arg;
	volatile uint64_t *p = (volatile uint64_t *)r->region;
	uint64_t v;

	pin_to_cpu(1);
	for (v = 1; !atomic_load_explicit(&r->stop, memory_order_relaxed); v++) {
		*p = v;
		atomic_store_explicit(&r->done, v, memory_order_release);
	}
	return NULL;
}

static int walk_free(struct race *r)
{
	return madvise(r->region, r->len, MADV_FREE) ? errno : 0;
}

static int walk_wp(struct race *r)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (unsigned long)r->region, .len = r->len },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};

	return ioctl(r->uffd, UFFDIO_WRITEPROTECT, &wp) ? errno : 0;
}

/* Resolve write-protect faults until told to stop */
static void *handler(void *arg)
{
	struct race *r = arg;
	struct pollfd pfd = { .fd = r->uffd, .events = POLLIN };
	struct uffdio_writeprotect wp = { .mode = 0 };
	struct uffd_msg msg;

	while (!atomic_load(&r->handler_stop)) {
		if (poll(&pfd, 1, 10) <= 0)
			continue;
		if (read(r->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		wp.range.start = msg.arg.pagefault.address &
				 ~(unsigned long long)(sysconf(_SC_PAGESIZE) - 1);
		wp.range.len = sysconf(_SC_PAGESIZE);
		if (!ioctl(r->uffd, UFFDIO_WRITEPROTECT, &wp))
			atomic_fetch_add(&r->faults, 1);
	}
	return NULL;
}

struct walk_arg {
	struct race *r;
	int w;
};

static void *walker(void *arg)
{
	struct walk_arg *a = arg;
	struct race *r = a->r;

	pin_to_cpu(r->cpu[a->w]);
	atomic_store(&r->started[a->w], 1);
	while (!atomic_load(&r->go))
		;
	atomic_store(&r->err[a->w], a->w == W_FREE ? walk_free(r) : walk_wp(r));
	atomic_store(&r->ended[a->w], 1);
	return NULL;
}

/* pagemap entry of @addr; 0 if it cannot be read */
static uint64_t pagemap(int fd, const void *addr)
{
	uint64_t e = 0;
	off_t off = (uintptr_t)addr / sysconf(_SC_PAGESIZE) * sizeof(e);

	if (pread(fd, &e, sizeof(e), off) != sizeof(e))
		return 0;
	return e;
}

static uint64_t kpageflags(int fd, uint64_t pfn)
{
	uint64_t f = 0;

	if (pread(fd, &f, sizeof(f), pfn * sizeof(f)) != sizeof(f))
		return 0;
	return f;
}

/* The walks have passed P: write-protected, and lazily freed */
static bool walks_passed(int pm, int kpf, const void *p)
{
	uint64_t e = pagemap(pm, p);

	if ((e & (PM_PRESENT | PM_UFFD_WP)) != (PM_PRESENT | PM_UFFD_WP))
		return false;
	return !(kpageflags(kpf, e & PM_PFN_MASK) & (1ULL << KPF_SWAPBACKED));
}

static int ctr(const char *name, uint64_t *v)
{
	int err = luf_counter_read(name, v);

	return err == -ENOENT ? 0 : err;
}

FIXTURE(race) {
	int pm, kpf;
};

FIXTURE_VARIANT(race) {
	int brk;
};

FIXTURE_VARIANT_ADD(race, madvfree_uffdwp) {
	.brk = RACE_BREAK,
};

FIXTURE_SETUP(race)
{
	self->pm = -1;
	self->kpf = -1;
	LUF_BREAK_SKIP(variant->brk);
	if (!numa_node_has_memory(RACE_NODE))
		SKIP(return, "needs memory on NUMA node %d", RACE_NODE);
	luf_prepare(_metadata, variant->brk, 1 + W_NR + 1);
	if (_metadata->exit_code)
		return;
	self->pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->pm) TH_LOG("/proc/self/pagemap: %s", strerror(errno));
	self->kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->kpf) TH_LOG("/proc/kpageflags: %s", strerror(errno));
}

FIXTURE_TEARDOWN(race)
{
	luf_module_done();
	if (self->pm >= 0)
		close(self->pm);
	if (self->kpf >= 0)
		close(self->kpf);
}

/* uffd-wp over @r's region; SKIP if the kernel has none */
static void race_uffd(struct __test_metadata *_metadata, struct race *r)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)r->region, .len = r->len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	r->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (r->uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	if (ioctl(r->uffd, UFFDIO_API, &api))
		SKIP(return, "UFFDIO_API: %s", strerror(errno));
	if (ioctl(r->uffd, UFFDIO_REGISTER, &reg))
		SKIP(return, "uffd-wp registration: %s", strerror(errno));
}

enum try_result { TRY_INVALID, TRY_KEPT, TRY_LOST };

struct try_out {
	uint64_t last, seen;		/* writer's last store, P afterwards */
	uint64_t declined, deferred;	/* counter deltas */
	int faults;			/* write-protect faults resolved */
	int spins;
};

/* One try; TRY_INVALID unless the migration ran inside both walks */
static enum try_result race_try(struct __test_metadata *_metadata,
				FIXTURE_DATA(race) *self, struct try_out *o)
{
	size_t i;
	uint64_t dec0 = 0, dec1 = 0, def0 = 0, def1 = 0;
	struct walk_arg wa[W_NR];
	pthread_t wt, ht, t[W_NR];
	struct race r = { .cpu = { 2, 3 } };
	int node = RACE_NODE, status = -1, w;
	void *pages[1];
	bool passed = false, valid = false;
	long moved = -1;

	memset(o, 0, sizeof(*o));
	r.len = RACE_PAGES * ps;
	r.region = mmap(NULL, r.len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.region);
	ASSERT_EQ(0, madvise(r.region, r.len, MADV_NOHUGEPAGE));
	race_uffd(_metadata, &r);
	if (_metadata->exit_code)
		goto out_unmap;
	for (i = 0; i < r.len; i += ps)
		r.region[i] = 1;
	ASSERT_EQ(0, pthread_create(&ht, NULL, handler, &r));
	ASSERT_EQ(0, pthread_create(&wt, NULL, writer, &r));
	while (atomic_load(&r.done) < 1000)
		;
	for (w = 0; w < W_NR; w++) {
		wa[w] = (struct walk_arg){ .r = &r, .w = w };
		ASSERT_EQ(0, pthread_create(&t[w], NULL, walker, &wa[w]));
	}
	for (w = 0; w < W_NR; w++)
		while (!atomic_load(&r.started[w]))
			;
	ASSERT_EQ(0, ctr(CTR(declined_pending), &dec0));
	ASSERT_EQ(0, ctr(CTR(deferred_folios), &def0));
	atomic_store(&r.go, 1);
	for (o->spins = 0; o->spins < SPIN_LIMIT; o->spins++) {
		if (atomic_load(&r.ended[W_FREE]) || atomic_load(&r.ended[W_WP]))
			break;
		passed = walks_passed(self->pm, self->kpf, r.region);
		if (passed)
			break;
	}
	if (passed) {
		pages[0] = r.region;
		moved = syscall(__NR_move_pages, 0, 1UL, pages, &node, &status,
				MPOL_MF_MOVE);
	}
	atomic_store(&r.stop, 1);
	pthread_join(wt, NULL);
	o->last = atomic_load_explicit(&r.done, memory_order_acquire);
	valid = passed && !moved && status == RACE_NODE &&
		!atomic_load(&r.ended[W_FREE]) && !atomic_load(&r.ended[W_WP]);
	for (w = 0; w < W_NR; w++)
		pthread_join(t[w], NULL);
	ASSERT_EQ(0, atomic_load(&r.err[W_FREE])) TH_LOG("MADV_FREE failed");
	ASSERT_EQ(0, atomic_load(&r.err[W_WP])) TH_LOG("UFFDIO_WRITEPROTECT failed");
	o->seen = *(volatile uint64_t *)r.region;
	ASSERT_EQ(0, ctr(CTR(declined_pending), &dec1));
	ASSERT_EQ(0, ctr(CTR(deferred_folios), &def1));
	o->declined = dec1 - dec0;
	o->deferred = def1 - def0;
	atomic_store(&r.handler_stop, 1);
	pthread_join(ht, NULL);
	o->faults = atomic_load(&r.faults);
out_unmap:
	if (r.uffd > 0)
		close(r.uffd);
	munmap(r.region, r.len);
	if (_metadata->exit_code || !valid)
		return TRY_INVALID;
	return o->seen == o->last ? TRY_KEPT : TRY_LOST;
}

TEST_F_TIMEOUT(race, migrate_keeps_last_store, RACE_SECONDS + 120)
{
	int tries = 0, valid = 0, lost = 0, declined = 0, faults = 0;
	struct try_out o, first_lost = { 0 };
	time_t end = time(NULL) + RACE_SECONDS;
	enum try_result res;

	while (time(NULL) < end && (luf_env()->brk ? !lost : valid < MIN_VALID)) {
		res = race_try(_metadata, self, &o);
		if (_metadata->exit_code)
			return;
		tries++;
		faults += o.faults;
		if (res == TRY_INVALID)
			continue;
		valid++;
		declined += o.declined > 0;
		if (res == TRY_LOST && !lost++)
			first_lost = o;
	}
	ksft_print_msg("%d tries, %d valid (the migration inside both walks), %d declined under a pending flush, %d lost the last store; %d write-protect faults resolved\n",
		       tries, valid, declined, lost, faults);
	if (!valid)
		SKIP(return, "no try migrated P inside both walks in %d tries: CPUs that do not run in parallel (single-threaded TCG)?",
		     tries);
	if (luf_env()->brk) {
		ASSERT_GT(lost, 0) TH_LOG("broken mode %d not caught: %d valid tries kept the last store",
					  luf_env()->brk, valid);
		ksft_print_msg("broken mode %d caught: P held %" PRIu64 ", the writer's last store was %" PRIu64 " (%" PRIu64 " folios deferred in that try)\n",
			       luf_env()->brk, first_lost.seen, first_lost.last,
			       first_lost.deferred);
		return;
	}
	ASSERT_EQ(0, lost) TH_LOG("a store was lost: P held %" PRIu64 ", the writer's last store was %" PRIu64 " (deferred %" PRIu64 ", declined %" PRIu64 ")",
				  first_lost.seen, first_lost.last,
				  first_lost.deferred, first_lost.declined);
	ASSERT_GT(declined, 0) TH_LOG("no valid try was declined: the pending flush was never seen");
}

LUF_MAIN(LUF_NEED_MODULE)
