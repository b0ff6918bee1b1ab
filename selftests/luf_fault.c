// SPDX-License-Identifier: GPL-2.0
/*
 * luf_fault: a deferral inside the writer's own fault (I2)
 * (the oracles, readers and broken modes: oracle.h).
 *
 *  fault.<ext4_write|ext4_write_gup|xfs_large_write_gup|tmpfs_read|tmpfs_huge_read>
 *	.reclaim_inside
 *	The write_fault hook at handle_mm_fault() entry runs before the fault
 *	allocates anything, but the fault itself can reclaim: the page table
 *	that __do_fault() and do_fault_around() preallocate is charged to the
 *	memcg, and so is the folio a file fault reads in.  When that reclaim
 *	defers the flush of the very page the fault then replaces, the new
 *	page is mapped writable while other CPUs still read the old one
 *	through their stale entries.  The write_fault call right before the
 *	install (set_pte_range() here) flushes them: broken mode 3.
 *
 *	A writer, a child of the test process, enters memcg F and charges
 *	the NPAGES pages of the test file to it, makes all its own memory
 *	present and unevictable (mlockall()), and maps the file shared and
 *	read-write at a fresh PMD-aligned address, so that its fault there
 *	must allocate a page table.  The readers (threads of the test
 *	process, in the root memcg) spin over page 0 of a shared read-only
 *	mapping; the fault-around of their first fault maps the other pages
 *	too.  Then F is put exactly at its limit with no charge stock on
 *	CPU 0, where the writer faults (fault_at_limit()), the test pages
 *	are marked old and unreferenced without a flush (clear_refs), and
 *	the test process reads the counters: pending_folios must be 0 (or
 *	the entry hook could flush).  The writer writes generation G+1 into
 *	page 0 through its mapping: one fault, whose page-table charge
 *	reclaims and defers the test pages, and which then reads page 0 into
 *	a new folio and maps it writable.  It reports the PFN it got (it must
 *	differ from the readers' old one, or the run is set up again), the
 *	test process reads the counters again (deferred_folios must have
 *	grown: the deferral happened inside the fault) and publishes.  Oracle
 *	as for write, over page 0.
 *
 *	ext4_write: a write fault (do_shared_fault()).  The fault reads page
 *	0 from disk, which drops the fault lock for the I/O and returns
 *	VM_FAULT_RETRY: handle_mm_fault() runs again, and its entry hook
 *	flushes.  So this variant passes without the install-site hook (on
 *	e9bb51e too); only broken mode 3 shows that it can fail.
 *	ext4_write_gup: the same write by pwrite() to /proc/self/mem: a GUP
 *	fault without FOLL_UNLOCKABLE (access_remote_vm(), as ptrace and
 *	/proc/pid/mem use) does the I/O under the lock and never retries, so
 *	only the install-site hook flushes.
 *	xfs_large_write_gup: the same on XFS, whose readahead reads the
 *	writer's pages back as large folios: the fault's reclaim must defer
 *	one (more pages than folios deferred).
 *	tmpfs_read: a read fault on a shared writable tmpfs mapping, which
 *	maps writable at once (shmem needs no write notification); the
 *	fault's reclaim swaps the pages out to zram, the fault swaps page 0
 *	back in (synchronously: no retry either), and the writer then writes
 *	without another fault (not on arm64: see the tmpfs_read variant).
 *	tmpfs_huge_read: the same on tmpfs huge=always, the file one PMD
 *	folio (2 MiB, so that the mlock() below holds it: a large folio is
 *	mlocked only where one page table maps all of it); the fault's
 *	reclaim must defer it, and swaps it out whole (CONFIG_THP_SWAP, the
 *	file ending where the folio does), so all 512 pages are held.
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

#include <sys/prctl.h>

#define PAGE_CLUSTER	"/proc/sys/vm/page-cluster"

/* At most for the writer's setup, and for its fault */
#define FAULT_WAIT_S	60

/* Where the writer failed (fault_ctl.step) */
enum {
	FW_OK, FW_PIN, FW_MEMCG, FW_BUF, FW_CONTENT, FW_FSYNC, FW_MLOCK,
	FW_PAGEMAP, FW_MEM, FW_MAP, FW_MADVISE, FW_TIMEOUT, FW_GUP,
};
static const char *const fault_step[] = {
	"ok", "pin to CPU 0", "enter the memcg", "buffer",
	"charge the test pages", "fsync", "mlockall", "pagemap",
	"/proc/self/mem", "map the file", "madvise",
	"timeout", "write to /proc/self/mem",
};

/* Shared between the test process and the writer */
struct fault_ctl {
	char pad[64];		/* prefault_all() rewrites byte 0 */
	atomic_int ready, go, done, quit;
	int step, err;
	uint64_t pfn;		/* the writer's page 0 after the write */
};

FIXTURE(fault) {
	struct oracle o;
	struct fault_ctl *ctl;
	void *lock;		/* the test process's mlocked mapping */
	char cg[256];
	pid_t child;
	char page_cluster[16];	/* vm.page-cluster to put back, or "" */
	uint64_t aging_pct;	/* the knob to put back (tmpfs_huge_read), or ~0 */
};

/* How the writer's access faults page 0 in */
enum fault_how {
	FAULT_WRITE,	/* a write: do_shared_fault() */
	FAULT_GUP,	/* pwrite() to /proc/self/mem: a GUP write fault */
	FAULT_READ,	/* a read, then writes that do not fault */
};

FIXTURE_VARIANT(fault) {
	int brk;
	const char *dir;
	enum fault_how how;
	bool large;	/* the fault's reclaim must defer a large folio */
};

/* Why ext4_write passes on e9bb51e and the other two fail: see the top */
FIXTURE_VARIANT_ADD(fault, ext4_write) { .brk = BRK_FAULT, .dir = LUF_EXT4_DIR, .how = FAULT_WRITE };
FIXTURE_VARIANT_ADD(fault, ext4_write_gup) { .brk = BRK_FAULT, .dir = LUF_EXT4_DIR, .how = FAULT_GUP };
/* XFS's readahead reads the writer's pages back as large folios */
FIXTURE_VARIANT_ADD(fault, xfs_large_write_gup) {
	.brk = BRK_FAULT, .dir = LUF_XFS_DIR, .how = FAULT_GUP, .large = true
};
/*
 * arm64 (configs/arm64.config: no hardware dirty-bit management) maps a
 * clean writable PTE read-only in hardware: the writer's first write
 * after its read fault faults again, through the write_fault hook at
 * handle_mm_fault() entry, so there the install-site hook is not the
 * only flush.  That fault also flushes the page from the TLB, which
 * QEMU 7.2's TCG applies to every ASID and, on a vCPU whose TLB has
 * shrunk to under 128 entries (the readers'), to the whole TLB.
 */
FIXTURE_VARIANT_ADD(fault, tmpfs_read) { .brk = BRK_X86(BRK_FAULT), .dir = LUF_TMP_DIR, .how = FAULT_READ };
FIXTURE_VARIANT_ADD(fault, tmpfs_huge_read) {
	.brk = BRK_X86(BRK_FAULT), .dir = LUF_THP_DIR, .how = FAULT_READ, .large = true
};

/* tmpfs (huge= or not): the writer writes the content, and the fault swaps it in */
static bool fault_shmem(const FIXTURE_VARIANT(fault) *variant)
{
	return !strcmp(variant->dir, LUF_TMP_DIR) || !strcmp(variant->dir, LUF_THP_DIR);
}

/* What one page table maps */
static size_t pmd_span(void)
{
	return ps * (ps / 8);
}

/*
 * Map @f shared at a fresh PMD boundary, where no page table is yet;
 * NULL on failure.  The PROT_NONE rest of the reservation stays.
 */
static void *map_fresh(const struct luf_file *f, int prot)
{
	uintptr_t at;
	void *res, *p;

	res = mmap(NULL, 2 * pmd_span(), PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return NULL;
	at = ((uintptr_t)res + pmd_span() - 1) & ~(pmd_span() - 1);
	p = mmap((void *)at, f->size, prot, MAP_SHARED | MAP_FIXED, f->fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, f->size, MADV_NOHUGEPAGE);
	return p;
}

/* PFN behind @addr from /proc/self/pagemap (@fd), 0 if none */
static uint64_t pagemap_pfn(int fd, const void *addr)
{
	uint64_t e;

	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / ps * sizeof(e)) !=
	    (ssize_t)sizeof(e))
		return 0;
	return e >> 63 ? e & ((1ULL << 55) - 1) : 0;
}

static void __attribute__((noreturn)) writer_fail(struct fault_ctl *ctl,
						  int step)
{
	ctl->err = errno;
	ctl->step = step;
	_exit(1);
}

/* Sleep until @flag is set; false after FAULT_WAIT_S */
static bool writer_wait(atomic_int *flag)
{
	double t0 = luf_now();

	while (!atomic_load(flag)) {
		if (luf_now() - t0 > FAULT_WAIT_S)
			return false;
		luf_msleep(1);
	}
	return true;
}

/*
 * The writer, in memcg @cg.  Everything it needs is allocated and
 * present before it says it is ready: from then on, until its fault,
 * nothing of it may charge the memcg (which would reclaim outside the
 * fault) or fault.  It never prints and leaves with _exit().
 */
static void __attribute__((noreturn))
fault_writer(struct fault_ctl *ctl, const char *cg, const struct luf_file *f,
	     unsigned int gen, enum fault_how how, bool by_write)
{
	size_t wpp = ps / 8, p, i;
	volatile uint64_t *w;
	uint64_t *buf;
	int pm, mem;

	/* not left behind if the test process dies */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pin_to_cpu(0))
		writer_fail(ctl, FW_PIN);
	if (memcg_enter(cg))
		writer_fail(ctl, FW_MEMCG);
	buf = mmap(NULL, ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		writer_fail(ctl, FW_BUF);
	/*
	 * The page cache of the test pages, charged to @cg: shmem pages are
	 * charged where they are created, so the writer writes them (one
	 * page per write, as tfile_create() does); ext4 has written and
	 * dropped them, and the writer reads them back, so no filesystem
	 * metadata read for the write is charged here too (it would be
	 * more for reclaim to find).
	 */
	for (p = 0; p < f->size / ps; p++) {
		if (!by_write) {
			if (pread(f->fd, buf, 1, p * ps) != 1)
				writer_fail(ctl, FW_CONTENT);
			continue;
		}
		for (i = 0; i < wpp; i++)
			buf[i] = word(p * wpp + i, gen);
		if (pwrite(f->fd, buf, ps, p * ps) != (ssize_t)ps)
			writer_fail(ctl, FW_CONTENT);
	}
	if (by_write && fsync(f->fd))
		writer_fail(ctl, FW_FSYNC);
	luf_prefault_stack(256 << 10);
	/*
	 * Every private page copied now (the fork made them copy-on-write),
	 * everything present and unevictable: the fault's reclaim finds the
	 * test pages only, and no later access of the writer faults.
	 */
	if (mlockall(MCL_CURRENT))
		writer_fail(ctl, FW_MLOCK);
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm < 0 || !pagemap_pfn(pm, buf))
		writer_fail(ctl, FW_PAGEMAP);
	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem < 0)
		writer_fail(ctl, FW_MEM);
	/* what FAULT_GUP writes */
	for (i = 0; i < wpp; i++)
		buf[i] = word(i, gen + 1);
	/* the fault must allocate a page table */
	w = map_fresh(f, PROT_READ | PROT_WRITE);
	if (!w)
		writer_fail(ctl, FW_MAP);
	/* no readahead: the fault reads page 0 only */
	if (madvise((void *)w, f->size, MADV_RANDOM))
		writer_fail(ctl, FW_MADVISE);
	atomic_store(&ctl->ready, 1);
	if (!writer_wait(&ctl->go))
		writer_fail(ctl, FW_TIMEOUT);

	/* the fault: reclaim inside it, then page 0 mapped writable */
	if (how == FAULT_GUP) {
		if (pwrite(mem, buf, ps, (off_t)(uintptr_t)w) != (ssize_t)ps)
			writer_fail(ctl, FW_GUP);
	} else {
		if (how == FAULT_READ)
			(void)w[0];
		for (i = 0; i < wpp; i++)
			w[i] = word(i, gen + 1);
	}
	ctl->pfn = pagemap_pfn(pm, (const void *)w);
	atomic_store(&ctl->done, 1);
	writer_wait(&ctl->quit);
	_exit(0);
}

/*
 * Put @cg exactly at its limit with no charge stock on CPU 0 (the
 * caller's and the writer's CPU), without reclaiming the test pages, which
 * the caller keeps mlocked meanwhile.  Memcg charges are batched: a charge
 * takes 64 pages from the page counter and keeps the rest in a per-CPU
 * stock that serves the next charges on that CPU without the counter, so
 * at the limit a charge still reclaims only if its CPU has no stock.
 * memory.high below memory.current drains the stocks (this CPU's at once,
 * where all of the writer's charges were made) and then reclaims, but
 * finds nothing evictable (no OOM kill, unlike memory.max); memory.max
 * set to what remains drains nothing.  Returns the limit in bytes.
 */
static int fault_at_limit(const char *cg, uint64_t *limit)
{
	uint64_t cur;
	char val[32];
	int err;

	err = memcg_u64(cg, "memory.current", &cur);
	if (err)
		return err;
	snprintf(val, sizeof(val), "%" PRIu64, cur - ps);
	err = memcg_write(cg, "memory.high", val);
	if (!err)
		err = memcg_write(cg, "memory.high", "max");
	if (!err)
		err = memcg_u64(cg, "memory.current", &cur);
	if (err)
		return err;
	snprintf(val, sizeof(val), "%" PRIu64, cur);
	*limit = cur;
	return memcg_write(cg, "memory.max", val);
}

/* Wait until @flag is set; false if the writer exits first or on timeout */
static bool fault_wait(FIXTURE_DATA(fault) *self, atomic_int *flag)
{
	double t0 = luf_now();
	int st;

	while (!atomic_load(flag)) {
		if (waitpid(self->child, &st, WNOHANG) == self->child) {
			self->child = -1;
			return false;
		}
		if (luf_now() - t0 > FAULT_WAIT_S)
			return false;
		luf_msleep(1);
	}
	return true;
}

static void fault_release(FIXTURE_DATA(fault) *self)
{
	double t0 = luf_now();
	int st;

	if (self->child > 0) {
		atomic_store(&self->ctl->quit, 1);
		while (waitpid(self->child, &st, WNOHANG) != self->child) {
			if (luf_now() - t0 > 5) {
				kill(self->child, SIGKILL);
				waitpid(self->child, &st, 0);
				break;
			}
			luf_msleep(5);
		}
	}
	self->child = -1;
	oracle_release(&self->o);
	if (self->lock)
		munmap(self->lock, self->o.f.size);
	self->lock = NULL;
	if (self->ctl)
		munmap(self->ctl, sizeof(*self->ctl));
	self->ctl = NULL;
	if (self->cg[0])
		memcg_destroy(self->cg);
	self->cg[0] = '\0';
}

FIXTURE_SETUP(fault)
{
	self->ctl = NULL;
	self->lock = NULL;
	self->cg[0] = '\0';
	self->child = -1;
	self->page_cluster[0] = '\0';
	self->aging_pct = ~0ULL;
	/* Without swap, reclaim can unmap a shmem folio but never free it */
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, BY_PAGEOUT,
		     NEED_MEMCG | (fault_shmem(variant) ? NEED_SWAP : 0));
	if (_metadata->exit_code || !self->o.swapon)
		return;
	/* the PMD folio is most of the memcg: page aging would flush it inside the reclaim */
	if (!strcmp(variant->dir, LUF_THP_DIR)) {
		uint64_t pct;

		ASSERT_EQ(0, luf_knob_read(KNOB(aging_pct), &pct));
		ASSERT_EQ(0, luf_knob_write(KNOB(aging_pct), "0"));
		self->aging_pct = pct;
	}
	/*
	 * The fault swaps page 0 back in, and swap readahead would charge
	 * its neighbours too, to a memcg at its limit whose test pages are
	 * already out and whose other memory is mlocked: an OOM kill, as
	 * soon as earlier swap-ins let the readahead window grow.  One page.
	 */
	ASSERT_LT(0, read_file(PAGE_CLUSTER, self->page_cluster,
			       sizeof(self->page_cluster)));
	ASSERT_EQ(0, write_file_str(PAGE_CLUSTER, "0"));
}

FIXTURE_TEARDOWN(fault)
{
	fault_release(self);
	if (self->page_cluster[0])
		write_file_str(PAGE_CLUSTER, self->page_cluster);
	if (self->aging_pct != ~0ULL) {
		char val[24];

		snprintf(val, sizeof(val), "%" PRIu64, self->aging_pct);
		luf_knob_write(KNOB(aging_pct), val);
	}
	oracle_teardown(_metadata, &self->o);
}

/* What one run of the scenario left for the oracle */
struct fault_run {
	struct luf_ev e0, e1;	/* right before and right after the fault */
	uint64_t old_pfn;	/* the readers' page 0 before */
	uint64_t limit;		/* memory.max of the memcg, bytes */
};

/*
 * Set the scenario up and let the writer fault; returns with the readers
 * still running and the writer done, in the window (no output).
 */
static void fault_run(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fault) *self,
		      const FIXTURE_VARIANT(fault) *variant,
		      struct fault_run *r)
{
	bool shmem = fault_shmem(variant), thp = !strcmp(variant->dir, LUF_THP_DIR);
	static int attempt;
	unsigned int gen = first_gen();
	struct fault_ctl *ctl;
	char name[64], val[32], path[300], stat[4096];
	struct rd_ctl *rd;
	uint64_t cur = 0;
	int ret, pm, i;
	bool done;

	/* settle what an earlier attempt left deferred: pending must be 0 */
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "0"));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	snprintf(name, sizeof(name), "luf-correct-fault-%d-%d", getpid(),
		 attempt++);
	ret = memcg_create(name, self->cg, sizeof(self->cg));
	ASSERT_EQ(0, ret) TH_LOG("memcg %s: %s", name, strerror(-ret));
	/* tmpfs: empty, the writer writes the content; ext4: it reads it */
	ret = tfile_create(&self->o.f, variant->dir, "fault",
			   shmem ? 0 : NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file in %s: %s", variant->dir,
				 strerror(-ret));
	if (!shmem)
		ASSERT_EQ(0, posix_fadvise(self->o.f.fd, 0, 0,
					   POSIX_FADV_DONTNEED));
	self->o.f.size = thp ? pmd_span() : NPAGES * ps;
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	memset(ctl, 0, sizeof(*ctl));
	self->ctl = ctl;
	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = gen;
	rd->new_gen = gen + 1;

	/* before the file is mapped here: mlockall() would populate it */
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child)
		fault_writer(ctl, self->cg, &self->o.f, gen, variant->how,
			     shmem);
	done = fault_wait(self, &ctl->ready);
	ASSERT_TRUE(done) TH_LOG("writer setup failed at \"%s\": %s",
				 fault_step[ctl->step], strerror(ctl->err));

	/* the fork made every private page copy-on-write again */
	prefault_all();
	self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->o.map);
	/* the PMD folio in one page table: mlocked */
	self->lock = thp ? map_aligned(self->o.f.size, 0, PROT_READ, MAP_SHARED, self->o.f.fd) :
		     map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->lock);
	ASSERT_EQ(0, mlock(self->lock, self->o.f.size))
		TH_LOG("mlock: %s", strerror(errno));
	ret = luf_rd_start(&rd->rd, self->o.map, ps / 8, NULL, NREADERS);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, pm);
	r->old_pfn = pagemap_pfn(pm, self->o.map);
	close(pm);
	ASSERT_NE((uint64_t)0, r->old_pfn)
		TH_LOG("no PFN for the readers' page 0");

	ret = fault_at_limit(self->cg, &r->limit);
	ASSERT_EQ(0, ret) TH_LOG("memcg limit: %s", strerror(-ret));
	/* munlock() drains this CPU's mlock batch: evictable again at once */
	ASSERT_EQ(0, munlock(self->lock, self->o.f.size));
	munmap(self->lock, self->o.f.size);
	self->lock = NULL;
	/* something uncharged meanwhile (an RCU free): follow it down */
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, memcg_u64(self->cg, "memory.current", &cur));
		if (cur == r->limit)
			break;
		snprintf(val, sizeof(val), "%" PRIu64, cur);
		ASSERT_EQ(0, memcg_write(self->cg, "memory.max", val));
		r->limit = cur;
	}
	ASSERT_EQ(r->limit, cur)
		TH_LOG("memory.current does not stay at the limit");
	/*
	 * Whether reclaim turns active folios inactive (inactive_is_low()) is
	 * read from the memcg's LRU statistics, which are flushed lazily: the
	 * PMD folio that munlock() put on the active list would not count, and
	 * the fault's reclaim would scan nothing (a memcg OOM kill).  Reading
	 * memory.stat flushes them.
	 */
	snprintf(path, sizeof(path), "%s/memory.stat", self->cg);
	ASSERT_LT(0, read_file(path, stat, sizeof(stat)));
	/*
	 * Old and unreferenced, with the readers' TLB entries intact
	 * (clear_refs flushes nothing): the fault's reclaim takes the pages
	 * at first sight.  Otherwise it clears their accessed bits first,
	 * which on arm64 is a TLB flush of the page
	 * (__ptep_clear_flush_young()), and whether a reader refills its
	 * entry before the unmap is up to scheduling.
	 */
	ASSERT_EQ(0, write_file_str("/proc/self/clear_refs", "3"));
	/* right before the fault: the writer only wakes up in between */
	ASSERT_EQ(0, luf_ev_read(&r->e0));

	/* the window: no output, no write fault, no munmap until the verdict */
	atomic_store(&ctl->go, 1);
	done = fault_wait(self, &ctl->done);
	ASSERT_TRUE(done) TH_LOG("the writer failed at \"%s\": %s",
				 fault_step[ctl->step], strerror(ctl->err));
	ASSERT_EQ(0, luf_ev_read(&r->e1));
}

/*
 * One attempt.  Its fault must have replaced the readers' page 0 (the
 * writer got another PFN), or the run shows nothing: the reclaim in the
 * fault took only other test pages.  Seen on arm64 under QEMU, where the
 * accessed flag is set by a fault: a reader that lost its TLB entry after
 * clear_refs (to any flush by address, which empties a small TCG TLB)
 * marks page 0 young again, and reclaim keeps it.  Such a run is set up
 * again, at most LUF_TRIES times.
 */
static void fault_once(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fault) *self,
		       const FIXTURE_VARIANT(fault) *variant, struct rd_sum *s)
{
	struct fault_run r;
	struct luf_ev e2;
	int tries;

	for (tries = 1; ; tries++) {
		fault_run(_metadata, self, variant, &r);
		if (r.old_pfn != self->ctl->pfn || tries == LUF_TRIES)
			break;
		fault_release(self);
	}
	oracle_check(_metadata, self->o.rd, &r.e0, &r.e1, &e2,
		     "after the write", s);
	note("(page-out: the writer's fault) memcg limit %" PRIu64
	     " kB; forced_write_fault %" PRIu64 " -> %" PRIu64 " -> %" PRIu64
	     "; page 0: PFN %#" PRIx64 " -> %#" PRIx64 " (run %d)\n",
	     r.limit >> 10, r.e0.wf, r.e1.wf, e2.wf, r.old_pfn,
	     self->ctl->pfn, tries);
	ASSERT_EQ((uint64_t)0, r.e0.pending)
		TH_LOG("deferred before the fault: its entry hook could flush");
	ASSERT_GT(r.e1.deferred, r.e0.deferred)
		TH_LOG("no deferral inside the fault: it would prove nothing");
	if (variant->large)
		ASSERT_GT(r.e1.pages_reclaim - r.e0.pages_reclaim,
			  r.e1.deferred - r.e0.deferred)
			TH_LOG("no large folio was deferred inside the fault");
	ASSERT_NE(r.old_pfn, self->ctl->pfn)
		TH_LOG("in %d runs the fault never replaced the readers' page",
		       tries);
	fault_release(self);
}

TEST_F_TIMEOUT(fault, reclaim_inside, 300)
{
	RUN_ATTEMPTS(fault_once, "reader read the old page after the write");
}

LUF_MAIN(LUF_NEED_MODULE | LUF_QUIET)
