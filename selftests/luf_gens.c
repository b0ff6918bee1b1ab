// SPDX-License-Identifier: GPL-2.0
/*
 * luf_gens: a deferred flush that every CPU has made unnecessary is not
 * sent at all.
 *
 * Exactly LUF_BATCH_FOLIOS folios are deferred, one MADV_PAGEOUT of one
 * page at a time from a fresh load, so the table entry that took them is
 * closed and the open one is empty.  Then every CPU flushes its whole TLB
 * on its own, which the cpu_flush hook records: the deferring mm runs a
 * spinning thread on every other CPU, and mprotect() in it calls
 * flush_tlb_batched_pending(), a full flush of the mm on each of its CPUs.
 * Disabling LUF then settles the entry: flushes_skipped moves, while
 * flushes and tlbi_issued do not.  The same steps without the CPU flushes
 * (the control) send the flush.
 *
 *  gens.control            no CPU flush in between: the flush is sent
 *                          (arm64: and tlbi_issued moves)
 *  gens.all_cpus_flushed   x86 only: every CPU flushed, nothing is sent
 *                          (up to LUF_TRIES attempts: a CPU that was lazy
 *                          at the mm flush catches up unrecorded)
 *
 * On arm64 the records come from the local flush after an ASID rollover,
 * which takes more new processes than ASIDs (65536 under QEMU -cpu max;
 * more than 13 minutes of forks under TCG): too slow here.  KUnit
 * (luf_generations.luf_prune_by_records) checks the arm64 pruning rule.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "luf_test.h"

#define BATCH_FOLIOS	512	/* LUF_BATCH_FOLIOS in include/luf.h */
#define FILE_PAGES	(BATCH_FOLIOS + 256)

struct spinner {
	pthread_t tid;
	int cpu;
	volatile int *stop;
	int err;
};

FIXTURE(gens) {
	struct luf_file f;
	struct spinner sp[64];
	int nsp;
	volatile int stop;
};

static void *spin(void *arg)
{
	struct spinner *s = arg;

	s->err = pin_to_cpu(s->cpu);
	while (!*s->stop)
		;
	return NULL;
}

/* A fresh load of luf.ko, observe off, the timer out of the way, LUF on */
static int gens_reload(void)
{
	int ret = luf_module_fresh("");

	if (!ret)
		ret = luf_knob_write(KNOB(observe), "0");
	if (!ret)
		ret = luf_knob_write(KNOB(max_defer_ms), "60000");
	if (!ret)
		ret = luf_knob_write(KNOB(enabled), "1");
	return ret;
}

FIXTURE_SETUP(gens)
{
	int ncpus = nr_cpus(), ret, c;

	if (ncpus < 2)
		SKIP(return, "needs two CPUs");
	REQUIRE_DIR(LUF_EXT4_DIR);
	self->f.fd = -1;
	ret = gens_reload();
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	ret = luf_file_create(&self->f, LUF_EXT4_DIR, "gens",
			      (size_t)FILE_PAGES * (size_t)getpagesize());
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	ASSERT_EQ(0, luf_file_map(&self->f));
	ASSERT_EQ(0, pin_to_cpu(0));
	/* keep the mm loaded on every CPU, so the deferral covers them all */
	for (c = 1; c < ncpus && self->nsp < 64; c++) {
		struct spinner *s = &self->sp[self->nsp];

		s->cpu = c;
		s->stop = &self->stop;
		ASSERT_EQ(0, pthread_create(&s->tid, NULL, spin, s));
		self->nsp++;
	}
}

FIXTURE_TEARDOWN(gens)
{
	int i;

	self->stop = 1;
	for (i = 0; i < self->nsp; i++)
		pthread_join(self->sp[i].tid, NULL);
	luf_file_destroy(&self->f);
	luf_ensure_unloaded();
}

/* Defer exactly BATCH_FOLIOS folios, one page at a time. */
static void defer_one_entry(struct __test_metadata *_metadata,
			    FIXTURE_DATA(gens) *self)
{
	uint64_t deferred = 0, v, flushes;
	size_t p;

	ASSERT_EQ((uint64_t)0, luf_file_touch(&self->f));
	for (p = 0; p < self->f.npages && deferred < BATCH_FOLIOS; p++) {
		ASSERT_EQ(0, madvise((void *)(self->f.map + p * ps), ps,
				     MADV_PAGEOUT)) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &deferred));
	}
	ASSERT_EQ((uint64_t)BATCH_FOLIOS, deferred)
		TH_LOG("deferred %" PRIu64 " folios from %zu pages", deferred, p);
	ASSERT_EQ(0, luf_counter_read(CTR(flushes), &flushes));
	ASSERT_EQ(0, luf_counter_read(CTR(flushes_skipped), &v));
	ASSERT_EQ((uint64_t)0, flushes + v)
		TH_LOG("something settled the entry before the test did");
	ASSERT_EQ(0, luf_counter_read(CTR(pending_folios), &v));
	ASSERT_EQ((uint64_t)BATCH_FOLIOS, v);
}

#if defined(__x86_64__)
static void every_cpu_flushes(struct __test_metadata *_metadata)
{
	char *p = mmap(NULL, (size_t)getpagesize(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	/*
	 * A write fault in an mm with deferred unmaps of other memory settles
	 * nothing; and mprotect() reaches flush_tlb_batched_pending() only
	 * where a page table exists.
	 */
	*p = 1;
	ASSERT_EQ(0, mprotect(p, (size_t)getpagesize(), PROT_READ));
	munmap(p, (size_t)getpagesize());
}
#endif

struct gens_delta {
	uint64_t flushes, skipped, tlbi, pruned;
};

/* Disable LUF (which settles the entry); what that sent, in @d */
static void settle(struct __test_metadata *_metadata, struct gens_delta *d)
{
	struct gens_delta a, b;

	ASSERT_EQ(0, luf_counter_read(CTR(flushes), &a.flushes));
	ASSERT_EQ(0, luf_counter_read(CTR(flushes_skipped), &a.skipped));
	ASSERT_EQ(0, luf_counter_read(CTR(tlbi_issued), &a.tlbi));
	ASSERT_EQ(0, luf_counter_read(CTR(cpus_pruned), &a.pruned));
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "0"));
	ASSERT_EQ(0, luf_counter_read(CTR(flushes), &b.flushes));
	ASSERT_EQ(0, luf_counter_read(CTR(flushes_skipped), &b.skipped));
	ASSERT_EQ(0, luf_counter_read(CTR(tlbi_issued), &b.tlbi));
	ASSERT_EQ(0, luf_counter_read(CTR(cpus_pruned), &b.pruned));
	d->flushes = b.flushes - a.flushes;
	d->skipped = b.skipped - a.skipped;
	d->tlbi = b.tlbi - a.tlbi;
	d->pruned = b.pruned - a.pruned;
	note("flushes +%" PRIu64 " skipped +%" PRIu64 " tlbi_issued +%" PRIu64
	     " cpus_pruned +%" PRIu64 "\n", d->flushes, d->skipped, d->tlbi,
	     d->pruned);
}

/*
 * The control needs no CPU to flush between the deferral and the settle.
 * Something in the window that flushes the mm on every CPU by accident
 * (a fault of this process in a private mapping flushes its batched
 * unmaps: flush_tlb_batched_pending()) shows as cpus_pruned; then the premise
 * is gone, and the attempt is made again from a fresh load.
 */
TEST_F_TIMEOUT(gens, control, 300)
{
	struct gens_delta d;
	int i;

	for (i = 0; i < LUF_TRIES; i++) {
		if (i)
			ASSERT_EQ(0, gens_reload());
		defer_one_entry(_metadata, self);
		settle(_metadata, &d);
		if (!d.pruned)
			break;
		note("attempt %d: every CPU flushed in the window, again\n", i + 1);
	}
	ASSERT_EQ((uint64_t)0, d.pruned)
		TH_LOG("the CPUs flushed by accident in all %d attempts", LUF_TRIES);
	ASSERT_EQ((uint64_t)0, d.skipped);
	ASSERT_EQ((uint64_t)1, d.flushes);
#if defined(__aarch64__)
	ASSERT_GT(d.tlbi, (uint64_t)0);
#endif
}

#if defined(__x86_64__)
/*
 * A spinner that a kernel thread preempts at the moment of the flush is
 * lazy and gets no IPI; it catches up when it switches back
 * (switch_mm_irqs_off()), which the hook does not record.  That CPU then
 * still needs the deferred flush, rightly: so the scenario is tried up to
 * LUF_TRIES times, each from a fresh load, and must end with nothing sent
 * once.
 */
TEST_F_TIMEOUT(gens, all_cpus_flushed, 600)
{
	struct gens_delta d;
	uint64_t v;
	int i;

	for (i = 0; i < LUF_TRIES; i++) {
		if (i)
			ASSERT_EQ(0, gens_reload());
		defer_one_entry(_metadata, self);
		every_cpu_flushes(_metadata);
		ASSERT_EQ(0, luf_counter_read(CTR(pending_folios), &v));
		ASSERT_EQ((uint64_t)BATCH_FOLIOS, v)
			TH_LOG("the deferral was settled while the CPUs flushed");
		settle(_metadata, &d);
		if (!d.flushes) {
			ASSERT_EQ((uint64_t)1, d.skipped);
			ASSERT_EQ((uint64_t)0, d.tlbi);
			ASSERT_GT(d.pruned, (uint64_t)0);
			return;
		}
		note("attempt %d: a CPU missed the flush (lazy?), again\n", i + 1);
	}
	ASSERT_TRUE(false) TH_LOG("the flush was sent in all %d attempts", LUF_TRIES);
}
#endif

LUF_MAIN(LUF_NEED_MODULE)
