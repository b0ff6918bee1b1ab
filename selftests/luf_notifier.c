// SPDX-License-Identifier: GPL-2.0
/*
 * luf_notifier: a deferred unmap still tells secondary TLBs at once
 * (invariant I4b).
 *
 * A device that shares the process address space (SMMU SVA on arm64) caches
 * translations in its own TLB and hears of an unmap only through
 * mmu_notifier_arch_invalidate_secondary_tlbs().  LUF may defer the CPU
 * flush of a read-only unmap, but the device has no stale-entry-is-harmless
 * argument of its own and cannot be flushed later: every page whose unmap
 * LUF deferred must have been reported to the notifier before the page is
 * released.  Stock 6.12 reports at the unmap: x86 the whole mm (0..-1) as
 * the PTE joins the batch, arm64 the page, with its per-page TLBI.  On arm64
 * the lazy batch of kernel-hooks 0004 leaves that TLBI out, and the report
 * must stay.
 *
 * The test-only module luf_notifier_test.ko (module/tests/, built with
 * CONFIG_MMU_NOTIFIER) stands in for the device: writing "start" to
 * /sys/kernel/debug/luf_notifier_test/ctl registers an mmu_notifier with
 * .arch_invalidate_secondary_tlbs on the writer's mm and records every range
 * it is told about; reading returns them.
 *
 *  notifier.ctl_abi
 *	the control file: bad input is EINVAL, a second start EBUSY, stop
 *	without start EINVAL, start/stop/start again works and records afresh,
 *	and unloading while registered unregisters.
 *  notifier.mprotect_reported
 *	the recorder sees reports on this architecture: mprotect() of a
 *	written anonymous page flushes it, and a recorded range covers it
 *	(nothing covered it before).
 *  unmap.<pageout|migrate>.reported_while_held
 *	luf.ko with enabled=1, migrc_enabled=1, max_defer_ms=60000; a 16-page
 *	read-only MAP_SHARED mapping of an ext4 file, inside one page table
 *	(one PMD, so that MADV_PAGEOUT walks it once), read by the main
 *	thread on CPU 0 and a reader pinned on CPU 1 (x86 batches an unmap
 *	only when another CPU may cache the mm).  Recording starts; no
 *	recorded range covers the mapping yet; then reclaim (MADV_PAGEOUT)
 *	or MIGRC (move_pages(2) to node 1; the sources are the pages held)
 *	unmaps it, and the unmap was deferred (deferred_folios grew,
 *	held_pages > 0; arm64: tlbi_avoided grew, so the lazy batch, which
 *	issues no per-page TLBI, was used).  Then, with released_pages
 *	unchanged since before the unmap (no page was given back yet) and
 *	held_pages > 0, every page of the mapping must be covered by a
 *	recorded range.
 *
 *  notifier.contig_isolated
 *	alloc_contig_range() must not fail because of pages LUF holds.  The
 *	allocation isolates a pageblock, releases what is held and migrates
 *	what is in use; a page that reclaim unmaps in the isolated pageblock
 *	meanwhile must not have its flush deferred, or it would be held
 *	when it is freed and make test_pages_isolated() fail with -EBUSY
 *	(its release would only be queued).  A 16 MiB ext4 file, on node 1
 *	if it has memory, is mapped and read while a thread of the mm spins
 *	on CPU 1 (x86 defers only then); the page-out of one page of it
 *	first must defer (the setup can defer).  Then the test module's
 *	contig file holds the allocation of a pageblock of the file at the
 *	migration of its first mapped page, and MADV_PAGEOUT reclaims the
 *	file page with the highest pfn of that pageblock (64 or more mapped
 *	pages before it, so the allocation has not taken it yet): it must be
 *	unmapped read-only (reclaim_ro_folios grew) without a deferral, no
 *	page may be held in an isolated pageblock (held_isolated) and the
 *	allocation must succeed.  Up to 16 pageblocks are tried until one
 *	gets that far (isolation fails with -EBUSY where a kernel page
 *	sits).
 *
 * Nothing between the start of recording and the check may report the
 * whole mm by another route, or the check would pass without the unmap's
 * report: no munmap, mprotect, madvise or mremap of this mm (each flushes
 * the mm's pending batched unmaps first, and arm64 flush_tlb_mm() reports
 * 0..-1), no write fault (every writable page the window touches is
 * written before), and NUMA balancing is off for the run (its PTE scans
 * are mprotect-like).  No broken mode: no debug_break mode removes this
 * report (it is the core's, not the module's); on the arm64 kernel of
 * kernel-hooks 0004 before the fix the lazy branch reported nothing and
 * the check fails there.
 *
 * Needs root, luf.ko, and luf_notifier_test.ko ($LUF_NOTIFIER_KO, default
 * /luf/luf_notifier_test.ko).  A kernel without MMU notifiers (no
 * mmu_notifier_register in /proc/kallsyms) has no secondary TLB and skips;
 * a kernel with them but no test module fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "luf_test.h"


#define NT_MODNAME	"luf_notifier_test"
#define NT_CTL		"/sys/kernel/debug/luf_notifier_test/ctl"
#define NT_CONTIG	"/sys/kernel/debug/luf_notifier_test/contig"
#define NT_MAX_RANGES	1024	/* LNT_MAX_RANGES of the module */
#define NUMA_KNOB	"/proc/sys/kernel/numa_balancing"
#define NPAGES		16
#define READER_CPU	1
#define MIGRATE_NODE	1


/* ---- the test module ------------------------------------------------- */

/* Does the running kernel have MMU notifiers at all? */
static bool kernel_has_mmu_notifier(void)
{
	char line[256];
	bool found = false;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return true;	/* cannot tell: expect the module */
	while (!found && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');

		found = name && !strncmp(name + 1, "mmu_notifier_register",
					 strlen("mmu_notifier_register")) &&
			(name[1 + strlen("mmu_notifier_register")] == '\n' ||
			 name[1 + strlen("mmu_notifier_register")] == '\t');
	}
	fclose(f);
	return found;
}

static bool nt_is_loaded(void)
{
	return path_exists("/sys/module/" NT_MODNAME);
}

static int nt_unload(void)
{
	if (!nt_is_loaded())
		return 0;
	return module_unload(NT_MODNAME);
}

static int nt_ctl(const char *cmd)
{
	return write_file_str(NT_CTL, cmd);
}

struct nt_range {
	unsigned long start, end;	/* [start, end) */
};

struct nt_rec {
	int active;
	uint64_t calls, dropped;
	size_t nr;
	struct nt_range r[NT_MAX_RANGES];
};

static char nt_buf[(NT_MAX_RANGES + 8) * 40];

/* Read and parse the control file; 0 or -errno (-EPROTO: bad format). */
static int nt_read(struct nt_rec *rec)
{
	unsigned long nr, i;
	char *p, *end;
	ssize_t n;

	n = read_file(NT_CTL, nt_buf, sizeof(nt_buf));
	if (n < 0)
		return (int)n;
	p = nt_buf;
	if (sscanf(p, "active %d\ncalls %" SCNu64 "\ndropped %" SCNu64
		   "\nranges %lu\n", &rec->active, &rec->calls, &rec->dropped,
		   &nr) != 4 || nr > NT_MAX_RANGES)
		return -EPROTO;
	for (i = 0; i < 4; i++) {
		p = strchr(p, '\n');
		if (!p)
			return -EPROTO;
		p++;
	}
	for (i = 0; i < nr; i++) {
		errno = 0;
		rec->r[i].start = strtoul(p, &end, 16);
		if (errno || end == p || *end != ' ')
			return -EPROTO;
		p = end + 1;
		rec->r[i].end = strtoul(p, &end, 16);
		if (errno || end == p || *end != '\n')
			return -EPROTO;
		p = end + 1;
	}
	if (*p)
		return -EPROTO;
	rec->nr = nr;
	return 0;
}

/* Is the page at @addr inside one recorded range? */
static bool nt_covers(const struct nt_rec *rec, unsigned long addr)
{
	size_t i;

	for (i = 0; i < rec->nr; i++)
		if (rec->r[i].start <= addr && addr + ps <= rec->r[i].end)
			return true;
	return false;
}

/* Pages of [base, base + npages pages) that no recorded range covers */
static size_t nt_uncovered(const struct nt_rec *rec, unsigned long base,
			   size_t npages, size_t *first)
{
	size_t i, n = 0;

	for (i = 0; i < npages; i++) {
		if (nt_covers(rec, base + i * ps))
			continue;
		if (!n++)
			*first = i;
	}
	return n;
}

/* Pages of [base, base + npages pages) that a recorded range covers */
static size_t nt_covered(const struct nt_rec *rec, unsigned long base,
			 size_t npages)
{
	size_t first = 0;

	return npages - nt_uncovered(rec, base, npages, &first);
}

static void nt_log(const char *what, const struct nt_rec *rec)
{
	size_t i;

	note("%s: active=%d calls=%" PRIu64 " dropped=%" PRIu64 " ranges=%zu\n",
	     what, rec->active, rec->calls, rec->dropped, rec->nr);
	for (i = 0; i < rec->nr && i < 40; i++)
		note("  [%#lx, %#lx)\n", rec->r[i].start, rec->r[i].end);
	if (rec->nr > 40)
		note("  ... %zu more\n", rec->nr - 40);
}

/* ---- luf counters ---------------------------------------------------- */

/* ---- fixtures ------------------------------------------------------ */

/* Both luf.ko and the test module freshly loaded, luf enabled; CPU 0 */
static void nt_setup(struct __test_metadata *_metadata)
{
	int ret;

	if (access(luf_module_path(NT_MODNAME), R_OK)) {
		if (!kernel_has_mmu_notifier())
			SKIP(return, "kernel without MMU notifiers: no secondary TLB to tell");
		ASSERT_EQ(0, access(luf_module_path(NT_MODNAME), R_OK))
			TH_LOG("%s: %s (the kernel has MMU notifiers: was the module built?)",
			       luf_module_path(NT_MODNAME), strerror(errno));
	}
	ASSERT_EQ(0, nt_unload());
	ASSERT_EQ(0, luf_ensure_unloaded());
	ret = luf_load("");
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	ASSERT_EQ(0, luf_knob_write(KNOB(migrc_enabled), "1"));
	ret = luf_insmod(luf_module_path(NT_MODNAME), "");
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_module_path(NT_MODNAME), strerror(-ret));
	ASSERT_EQ(0, pin_to_cpu(0));
}

static void nt_teardown(struct __test_metadata *_metadata)
{
	if (nt_is_loaded())
		nt_ctl("stop");
	EXPECT_EQ(0, nt_unload());
	EXPECT_EQ(0, luf_ensure_unloaded());
}

FIXTURE(notifier) {
	int unused;
};

FIXTURE_SETUP(notifier)
{
	nt_setup(_metadata);
}

FIXTURE_TEARDOWN(notifier)
{
	nt_teardown(_metadata);
}

static struct nt_rec rec0, rec1;

TEST_F(notifier, ctl_abi)
{
	static const char *const bad[] = {
		"bogus", "startx", "stop start", "sto", "\n", "start start",
	};
	size_t i;

	ASSERT_EQ(0600, file_mode(NT_CTL));
	ASSERT_EQ(0, nt_read(&rec0));
	ASSERT_EQ(0, rec0.active);
	ASSERT_EQ((size_t)0, rec0.nr);
	ASSERT_EQ(-EINVAL, nt_ctl("stop")) TH_LOG("stop without start");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = nt_ctl(bad[i]);

		if (ret != -EINVAL)
			note("writing \"%s\": %d\n", bad[i], ret);
		ASSERT_EQ(-EINVAL, ret);
	}
	ASSERT_EQ(0, nt_ctl("start\n"));
	ASSERT_EQ(-EBUSY, nt_ctl("start"));
	ASSERT_EQ(-EINVAL, nt_ctl("bogus"));
	ASSERT_EQ(0, nt_read(&rec0));
	ASSERT_EQ(1, rec0.active);
	ASSERT_EQ(0, nt_ctl("stop"));
	ASSERT_EQ(-EINVAL, nt_ctl("stop"));
	ASSERT_EQ(0, nt_read(&rec0));
	ASSERT_EQ(0, rec0.active);
	/* again, and unloading while registered unregisters */
	ASSERT_EQ(0, nt_ctl("start"));
	ASSERT_EQ(0, nt_unload());
	ASSERT_FALSE(nt_is_loaded());
	ASSERT_EQ(0, luf_insmod(luf_module_path(NT_MODNAME), ""));
	ASSERT_EQ(0, nt_read(&rec0));
	ASSERT_EQ(0, rec0.active);
	ASSERT_EQ((uint64_t)0, rec0.calls);
	ASSERT_EQ(0, nt_ctl("start"));
	ASSERT_EQ(0, nt_ctl("stop"));
}

TEST_F(notifier, mprotect_reported)
{
	char *p;
	size_t first = 0;

	p = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	p[ps] = 1;
	memset(&rec0, 0, sizeof(rec0));
	memset(&rec1, 0, sizeof(rec1));
	ASSERT_EQ(0, nt_ctl("start"));
	ASSERT_EQ(0, nt_read(&rec0));
	ASSERT_EQ(0, mprotect(p, 4 * ps, PROT_READ));
	ASSERT_EQ(0, nt_read(&rec1));
	ASSERT_EQ(0, nt_ctl("stop"));
	munmap(p, 4 * ps);
	nt_log("before mprotect", &rec0);
	nt_log("after mprotect", &rec1);
	ASSERT_EQ((size_t)1, nt_uncovered(&rec0, (unsigned long)p + ps, 1, &first))
		TH_LOG("the page was reported before the mprotect: the check proves nothing");
	ASSERT_GT(rec1.calls, rec0.calls);
	ASSERT_EQ((size_t)0, nt_uncovered(&rec1, (unsigned long)p + ps, 1, &first))
		TH_LOG("mprotect flushed the page and told no secondary TLB");
}

struct contig {
	char pfn[24];
	int ret;
	atomic_int stop, spinning;
};

static void *contig_fn(void *arg)
{
	struct contig *c = arg;

	c->ret = pin_to_cpu(2) ?: write_file_str(NT_CONTIG, c->pfn);
	return NULL;
}

/* Keeps the mm live on CPU 1: x86 defers only then */
static void *contig_spin_fn(void *arg)
{
	struct contig *c = arg;

	if (pin_to_cpu(READER_CPU))
		return NULL;
	atomic_store(&c->spinning, 1);
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed))
		;
	return NULL;
}

/*
 * One try on the pageblock of page @y: the allocation waits at the first
 * mapped page it migrates, and Y is paged out meanwhile.  -ESRCH: the
 * allocation ended (c->ret) without reaching a mapped page.
 */
static const char *const contig_ctrs[] = {
	CTR(deferred_folios), CTR(held_isolated), CTR_PATH(reclaim, unmaps),
	CTR_PATH(reclaim, ro_folios), CTR(declined_pending),
};

static int contig_try(struct luf_file *f, size_t y, uint64_t pfn,
		      struct contig *c, uint64_t *d)
{
	uint64_t v0[ARRAY_SIZE(contig_ctrs)], after = 0;
	pthread_t th;
	size_t i;
	int ret;

	snprintf(c->pfn, sizeof(c->pfn), "%#" PRIx64, pfn);
	c->ret = 0;
	ret = pthread_create(&th, NULL, contig_fn, c);
	if (ret)
		return -ret;
	ret = write_file_str(NT_CONTIG, "wait");
	if (!ret) {
		for (i = 0; i < ARRAY_SIZE(contig_ctrs); i++)
			luf_counter_read(contig_ctrs[i], &v0[i]);
		ret = madvise((char *)f->map + y * ps, ps, MADV_PAGEOUT) ?
		      -errno : 0;
		for (i = 0; i < ARRAY_SIZE(contig_ctrs); i++) {
			luf_counter_read(contig_ctrs[i], &d[i]);
			d[i] -= v0[i];
		}
		luf_pagemap_pfns((char *)f->map + y * ps, 1, &after);
	}
	write_file_str(NT_CONTIG, "resume");
	pthread_join(th, NULL);
	if (!ret) {
		char line[256];
		int n;

		n = snprintf(line, sizeof(line), "Y at pfn %#" PRIx64 " after the page-out:",
			     after);
		for (i = 0; i < ARRAY_SIZE(contig_ctrs) && n < (int)sizeof(line); i++)
			n += snprintf(line + n, sizeof(line) - n, " %s+%" PRIu64,
				      contig_ctrs[i], d[i]);
		note("%s\n", line);
	}
	return ret;
}

#define CONTIG_PAGES	4096
#define CONTIG_BEFORE	64	/* mapped pages of the pageblock before Y */

TEST_F_TIMEOUT(notifier, contig_isolated, 300)
{
	size_t pb = ps / 8;	/* pages of a pageblock: one PMD */
	uint64_t pfns[CONTIG_PAGES], d[ARRAY_SIZE(contig_ctrs)] = {};
	pthread_t spin;
	struct luf_file f;
	struct contig c;
	int tries = 0, ret = -ESRCH;
	size_t i, j;

	REQUIRE_DIR(LUF_EXT4_DIR);
	if (nr_cpus() < 3)
		SKIP(return, "needs 3 CPUs");
	memset(&c, 0, sizeof(c));
	/*
	 * The file's page cache on node 1 if it has memory: pageblocks there
	 * hold no kernel allocations that would make isolation fail.
	 */
	if (numa_node_has_memory(MIGRATE_NODE)) {
		unsigned long mask = 1UL << MIGRATE_NODE;

		ASSERT_EQ(0, syscall(SYS_set_mempolicy, 2 /* MPOL_BIND */,
				     &mask, 8 * sizeof(mask)));
	}
	ret = luf_file_create(&f, LUF_EXT4_DIR, "contig", CONTIG_PAGES * ps);
	syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0);
	ASSERT_EQ(0, ret) TH_LOG("creating a file: %s", strerror(-ret));
	ASSERT_EQ(0, luf_file_map(&f));
	madvise((void *)f.map, f.size, MADV_NOHUGEPAGE);
	ASSERT_EQ((uint64_t)0, luf_file_touch(&f));
	ASSERT_EQ(0, luf_file_pfns(&f, pfns));
	ASSERT_EQ(0, pthread_create(&spin, NULL, contig_spin_fn, &c));
	while (!atomic_load(&c.spinning))
		luf_msleep(1);
	/* the setup defers: the page-out of the file's last page */
	ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &d[0]));
	ASSERT_EQ(0, madvise((char *)f.map + f.size - ps, ps, MADV_PAGEOUT));
	ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &d[1]));
	ASSERT_GT(d[1], d[0]) TH_LOG("a page-out deferred nothing: the test would prove nothing");
	/* Y: the highest pfn of its pageblock, with enough of the file below */
	ret = -ESRCH;
	for (i = 0; i < CONTIG_PAGES - 1 && ret == -ESRCH && tries < LUF_TRIES; i++) {
		size_t below = 0;
		bool top = pfns[i] != 0;

		for (j = 0; j < CONTIG_PAGES && top; j++) {
			if (pfns[j] / pb != pfns[i] / pb)
				continue;
			below += pfns[j] < pfns[i];
			top = pfns[j] <= pfns[i];
		}
		if (!top || below < CONTIG_BEFORE)
			continue;
		tries++;
		ret = contig_try(&f, i, pfns[i], &c, d);
		note("try %d: pageblock %#" PRIx64 ", Y = page %zu (%zu of the file below): %s; alloc_contig_range %d\n",
		     tries, pfns[i] / pb, i, below,
		     ret == -ESRCH ? "ended before a mapped page" : strerror(-ret), c.ret);
	}
	atomic_store(&c.stop, 1);
	pthread_join(spin, NULL);
	luf_file_destroy(&f);
	ASSERT_NE(0, tries) TH_LOG("no pageblock has enough of the file");
	ASSERT_EQ(0, ret) TH_LOG("no try reached a mapped page, or the page-out failed");
	ASSERT_GT(d[3], (uint64_t)0) TH_LOG("Y was not unmapped read-only");
	ASSERT_EQ((uint64_t)0, d[0]) TH_LOG("Y's flush was deferred in an isolated pageblock");
	ASSERT_EQ((uint64_t)0, d[1]) TH_LOG("a page was held in an isolated pageblock");
	ASSERT_EQ(0, c.ret) TH_LOG("alloc_contig_range: %s", strerror(-c.ret));
}

enum how {
	BY_PAGEOUT,	/* reclaim: MADV_PAGEOUT */
	BY_MIGRATION,	/* MIGRC: move_pages(2) to MIGRATE_NODE */
};

FIXTURE(unmap) {
	struct luf_file f;
	void *resv;		/* PROT_NONE reservation holding the mapping */
	size_t resv_len;
	struct luf_rd rd;
	char numa_saved[16];
};

FIXTURE_VARIANT(unmap) {
	enum how how;
};

FIXTURE_VARIANT_ADD(unmap, pageout) { .how = BY_PAGEOUT };
FIXTURE_VARIANT_ADD(unmap, migrate) { .how = BY_MIGRATION };

FIXTURE_SETUP(unmap)
{
	memset(&self->f, 0, sizeof(self->f));
	self->f.fd = -1;
	self->resv = NULL;
	self->numa_saved[0] = '\0';
	nt_setup(_metadata);
}

FIXTURE_TEARDOWN(unmap)
{
	luf_readers_stop(&self->rd);
	if (self->resv)
		munmap(self->resv, self->resv_len);
	self->resv = NULL;
	self->f.map = NULL;
	luf_file_destroy(&self->f);
	if (self->numa_saved[0])
		write_file_str(NUMA_KNOB, self->numa_saved);
	nt_teardown(_metadata);
}

/* 16 pages of an ext4 file, read-only MAP_SHARED, inside one PMD */
static void map_in_one_pmd(struct __test_metadata *_metadata,
			   FIXTURE_DATA(unmap) *self)
{
	size_t pmd = ps * (ps / 8);	/* what one page table maps */
	unsigned long base;
	void *p;
	int ret;

	ret = luf_file_create(&self->f, LUF_EXT4_DIR, "notifier", NPAGES * ps);
	ASSERT_EQ(0, ret) TH_LOG("creating a file in %s: %s", LUF_EXT4_DIR,
				 strerror(-ret));
	self->resv_len = pmd + self->f.size;
	self->resv = mmap(NULL, self->resv_len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->resv) {
		self->resv = NULL;
	}
	base = ((unsigned long)self->resv + pmd - 1) & ~(pmd - 1);
	p = mmap((void *)base, self->f.size, PROT_READ, MAP_SHARED | MAP_FIXED,
		 self->f.fd, 0);
	ASSERT_EQ((void *)base, p) TH_LOG("mmap: %s", strerror(errno));
	/* order-0 folios only: large ones are never deferred */
	madvise(p, self->f.size, MADV_NOHUGEPAGE);
	self->f.map = p;
}

/* NUMA balancing off for the run: its PTE scans flush the whole mm */
static void numa_balancing_off(FIXTURE_DATA(unmap) *self)
{
	char *nl;

	if (read_file(NUMA_KNOB, self->numa_saved, sizeof(self->numa_saved)) <= 0) {
		self->numa_saved[0] = '\0';
		return;
	}
	nl = strchr(self->numa_saved, '\n');
	if (nl)
		*nl = '\0';
	if (strcmp(self->numa_saved, "0"))
		write_file_str(NUMA_KNOB, "0");
	else
		self->numa_saved[0] = '\0';
}

TEST_F_TIMEOUT(unmap, reported_while_held, 120)
{
	const int cpus[1] = { READER_CPU };
	struct luf_ev e0, e1, e2;
	unsigned long base;
	size_t first = 0, n;
	int ret;

	REQUIRE_DIR(LUF_EXT4_DIR);
	if (nr_cpus() <= READER_CPU)
		SKIP(return, "needs CPU %d for a reader", READER_CPU);
	if (variant->how == BY_MIGRATION && !numa_node_has_memory(MIGRATE_NODE))
		SKIP(return, "needs memory on NUMA node %d", MIGRATE_NODE);
	map_in_one_pmd(_metadata, self);
	base = (unsigned long)self->f.map;
	ASSERT_EQ((uint64_t)0, luf_file_touch(&self->f));
	numa_balancing_off(self);
	ret = luf_readers_start(&self->rd, self->f.map, self->f.npages, cpus, 1, 0);
	ASSERT_EQ(0, ret) TH_LOG("reader: %s", strerror(-ret));
	/* what the window writes, written once now (no write fault in it) */
	memset(&rec0, 0, sizeof(rec0));
	memset(&rec1, 0, sizeof(rec1));
	memset(nt_buf, 0, sizeof(nt_buf));
	memset(&e0, 0, sizeof(e0));
	memset(&e1, 0, sizeof(e1));
	memset(&e2, 0, sizeof(e2));
	sync();

	/* the window: no output, no munmap/mprotect/madvise but the unmap */
	ret = nt_ctl("start");
	ASSERT_EQ(0, ret) TH_LOG("start: %s", strerror(-ret));
	ASSERT_EQ(0, nt_read(&rec0));
	ASSERT_EQ(0, luf_ev_read(&e0));
	if (variant->how == BY_PAGEOUT)
		ret = madvise((void *)self->f.map, self->f.size, MADV_PAGEOUT) ?
		      -errno : 0;
	else
		ret = luf_move_to_node(self->f.map, NPAGES, MIGRATE_NODE, 0, NULL);
	if (ret > 0)	/* pages left behind */
		ret = -EAGAIN;
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", variant->how == BY_PAGEOUT ?
				 "MADV_PAGEOUT" : "move_pages", strerror(-ret));
	ASSERT_EQ(0, luf_ev_read(&e1));
	ASSERT_EQ(0, nt_read(&rec1));
	ASSERT_EQ(0, luf_ev_read(&e2));
	/* end of the window */

	luf_readers_stop(&self->rd);
	luf_ev_log("before the unmap", &e0);
	luf_ev_log("after the unmap", &e1);
	luf_ev_log("after reading the records", &e2);
	nt_log("records before the unmap", &rec0);
	nt_log("records after the unmap", &rec1);
	note("mapping [%#lx, %#lx), %d pages; covered before %zu, after %zu\n",
	     base, base + self->f.size, NPAGES,
	     nt_covered(&rec0, base, NPAGES), nt_covered(&rec1, base, NPAGES));

	ASSERT_EQ((size_t)0, nt_covered(&rec0, base, NPAGES))
		TH_LOG("pages were reported before the unmap: the check proves nothing");
	/* make_deferred() of luf_correct */
	ASSERT_GT(e1.deferred, e0.deferred)
		TH_LOG("the unmap deferred nothing: the test would prove nothing");
	ASSERT_GT(e1.held, (uint64_t)0) TH_LOG("no page is held back");
#ifdef __aarch64__
	ASSERT_GT(e1.tlbi_avoided, e0.tlbi_avoided)
		TH_LOG("no per-page TLBI was left out: the lazy batch was not used");
#endif
	/* the records were read while nothing had been released */
	ASSERT_EQ(e0.released, e2.released)
		TH_LOG("pages were released before the records were read");
	ASSERT_GT(e2.held, (uint64_t)0) TH_LOG("nothing held when the records were read");
	ASSERT_EQ(1, rec1.active);
	ASSERT_EQ((uint64_t)0, rec1.dropped) TH_LOG("the recorder dropped reports");
	n = nt_uncovered(&rec1, base, NPAGES, &first);
	ASSERT_EQ((size_t)0, n)
		TH_LOG("%zu of %d pages (first: page %zu at %#lx) were unmapped with a deferred flush and held without being reported to the secondary TLB notifier",
		       n, NPAGES, first, base + first * ps);
	ASSERT_EQ((uint64_t)0, luf_rd_count(&self->rd, LUF_RD_CORRUPT))
		TH_LOG("the reader saw wrong content");
}

LUF_MAIN(LUF_NEED_MODULE)
