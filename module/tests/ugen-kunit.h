/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit cases of ugen.c, included at its end when it is built into
 * luf_kunit.ko (tests/luf_kunit.c): generation arithmetic (wraparound
 * included), table keys and the pruning of entries by CPU flush records.
 */
#ifndef _LUF_UGEN_KUNIT_H
#define _LUF_UGEN_KUNIT_H

#include <kunit/test.h>
#include <linux/limits.h>

static void luf_gen_order(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, luf_gen_after(2, 1));
	KUNIT_EXPECT_FALSE(test, luf_gen_after(1, 1));
	KUNIT_EXPECT_FALSE(test, luf_gen_after(1, 2));
	/* across the wrap */
	KUNIT_EXPECT_TRUE(test, luf_gen_after(0, U32_MAX));
	KUNIT_EXPECT_TRUE(test, luf_gen_after(5, U32_MAX - 5));
	KUNIT_EXPECT_FALSE(test, luf_gen_after(U32_MAX - 5, 5));
}

static void luf_gen_cover(struct kunit *test)
{
	/* a flush recorded at 10 covers 10 and older, not 11 */
	KUNIT_EXPECT_TRUE(test, luf_gen_covers(10, 10, 12));
	KUNIT_EXPECT_TRUE(test, luf_gen_covers(10, 3, 12));
	KUNIT_EXPECT_FALSE(test, luf_gen_covers(10, 11, 12));
	/* wrapped generations */
	KUNIT_EXPECT_TRUE(test, luf_gen_covers(2, U32_MAX, 3));
	KUNIT_EXPECT_FALSE(test, luf_gen_covers(U32_MAX, 2, 3));
	/* a record left behind by more than the horizon covers nothing */
	KUNIT_EXPECT_FALSE(test, luf_gen_covers(7, 5, 7 + LUF_GEN_HORIZON));
	KUNIT_EXPECT_TRUE(test, luf_gen_covers(7, 5, 7 + LUF_GEN_HORIZON - 1));
	/* the initial record 0 covers nothing of generations from 1 */
	KUNIT_EXPECT_FALSE(test, luf_gen_covers(0, 1, 1));
}

static void luf_gen_pend(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, luf_gen_pending(5, 4, 6));
	/* @now read before a newer deferral: still pending, not too old */
	KUNIT_EXPECT_TRUE(test, luf_gen_pending(7, 4, 6));
	KUNIT_EXPECT_TRUE(test, luf_gen_pending(1, U32_MAX - 1, U32_MAX));
	KUNIT_EXPECT_FALSE(test, luf_gen_pending(4, 4, 6));
	KUNIT_EXPECT_FALSE(test, luf_gen_pending(3, 4, 6));
	KUNIT_EXPECT_TRUE(test, luf_gen_pending(1, U32_MAX, 2));
	KUNIT_EXPECT_FALSE(test, luf_gen_pending(U32_MAX, 1, 2));
	/* stale side-table values far behind never look pending */
	KUNIT_EXPECT_FALSE(test, luf_gen_pending(100, 50, 100 + LUF_GEN_HORIZON));
}

/*
 * The free path's filter (luf_filter in batch.c): a slot holds the newest
 * generation deferred into it, at most about two tables' worth ahead of
 * any pending generation of its pfns; whenever such a generation is
 * pending, so is the slot, with @now read before or after the slot's
 * store, across the wrap too.
 */
static void luf_gen_slot_ahead(struct kunit *test)
{
	static const u32 starts[] = { 1, U32_MAX - LUF_NR_BATCH, U32_MAX };
	unsigned int i, d, k;

	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		u32 done = starts[i] - 1, g = starts[i];

		for (d = 0; d <= LUF_NR_BATCH + 2; d++, g = luf_gen_next(g)) {
			u32 slot = g;

			KUNIT_EXPECT_TRUE(test, luf_gen_pending(g, done, g));
			for (k = 0; k <= 2 * LUF_NR_BATCH + 2; k++) {
				KUNIT_EXPECT_TRUE(test, luf_gen_pending(slot, done, g));
				KUNIT_EXPECT_TRUE(test, luf_gen_pending(slot, done, slot));
				slot = luf_gen_next(slot);
			}
			/* once flushed up to the slot, g is not pending */
			KUNIT_EXPECT_FALSE(test, luf_gen_pending(g, slot, slot));
		}
	}
}

static void luf_key_wrap(struct kunit *test)
{
	u32 g;

	/* LUF_NR_BATCH consecutive generations use distinct entries */
	for (g = U32_MAX - 3; g != LUF_NR_BATCH - 4; g++)
		KUNIT_EXPECT_NE(test, luf_batch_key(g),
				luf_batch_key(g + LUF_NR_BATCH - 1));
	KUNIT_EXPECT_EQ(test, luf_batch_key(U32_MAX) + 1, (u32)LUF_NR_BATCH);
	KUNIT_EXPECT_EQ(test, luf_batch_key(0), 0U);
	KUNIT_EXPECT_EQ(test, luf_batch_key(LUF_NR_BATCH), 0U);
	BUILD_BUG_ON(LUF_NR_BATCH & (LUF_NR_BATCH - 1));
}

/* Every possible CPU records a whole-TLB flush at @rec, @last_rec for one */
static void luf_set_records(u32 rec, u32 last_rec)
{
	unsigned int cpu, last = cpumask_last(cpu_possible_mask);

	for_each_possible_cpu(cpu)
		per_cpu(luf_cpu_flushed_gen, cpu) = cpu == last ? last_rec : rec;
}

/* A batch of the entry's unmaps, as the architecture records them */
static void luf_fill_batch(struct arch_tlbflush_unmap_batch *b)
{
	luf_arch_clear(b);
#ifdef CONFIG_X86
	cpumask_copy(&b->cpumask, cpu_possible_mask);
#else
	b->nr_asids = 1;
	b->asids[0] = 42;
#endif
}

/*
 * Generation 4 is closed (luf_state.ugen 5).  Its batch needs nothing only once
 * every CPU has recorded a flush that covers it; x86 drops the CPUs that
 * did one by one, arm64 (no per-CPU batch) only when all did.  The open
 * generation is never covered by a record taken while it is open.
 */
static void luf_prune_by_records(struct kunit *test)
{
	struct arch_tlbflush_unmap_batch b;
	unsigned int n = num_possible_cpus();

	luf_ugen_reset();
	WRITE_ONCE(luf_state.ugen, 5);

	luf_fill_batch(&b);
	luf_set_records(3, 3);
	KUNIT_EXPECT_EQ(test, luf_ugen_prune(&b, 4), 0U);
	KUNIT_EXPECT_FALSE(test, luf_arch_empty(&b));

	luf_fill_batch(&b);
	luf_set_records(4, 3);
	KUNIT_EXPECT_FALSE(test, luf_ugen_all_flushed(4));
#ifdef CONFIG_X86
	KUNIT_EXPECT_EQ(test, luf_ugen_prune(&b, 4), n - 1);
#else
	KUNIT_EXPECT_EQ(test, luf_ugen_prune(&b, 4), 0U);
#endif
	KUNIT_EXPECT_FALSE(test, luf_arch_empty(&b));

	luf_fill_batch(&b);
	luf_set_records(4, 4);
	KUNIT_EXPECT_TRUE(test, luf_ugen_all_flushed(4));
	KUNIT_EXPECT_EQ(test, luf_ugen_prune(&b, 4), n);
	KUNIT_EXPECT_TRUE(test, luf_arch_empty(&b));

	/* this CPU flushes now, while generation 5 is open */
	luf_fill_batch(&b);
	luf_set_records(4, 4);
	preempt_disable();
	luf_ugen_cpu_flush(false);
	luf_ugen_cpu_flush(true);
	preempt_enable();
	KUNIT_EXPECT_FALSE(test, luf_ugen_all_flushed(5));
	KUNIT_EXPECT_EQ(test, luf_ugen_prune(&b, 5), 0U);
	KUNIT_EXPECT_FALSE(test, luf_arch_empty(&b));
	luf_ugen_reset();
}

/* 0 means "no record": never handed out, even across the wrap */
static void luf_gen_never_zero(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, luf_gen_next(5), 6U);
	KUNIT_EXPECT_EQ(test, luf_gen_next(U32_MAX - 1), U32_MAX);
	KUNIT_EXPECT_EQ(test, luf_gen_next(U32_MAX), 1U);
	/* the generation after U32_MAX is after it */
	KUNIT_EXPECT_TRUE(test, luf_gen_after(luf_gen_next(U32_MAX), U32_MAX));
	KUNIT_EXPECT_TRUE(test, luf_gen_pending(1, U32_MAX, 1));
	KUNIT_EXPECT_FALSE(test, luf_gen_pending(U32_MAX, U32_MAX, 1));
}

/*
 * A CPU that never flushed (record 0) covers nothing, also once the
 * counter has wrapped; a record older than the horizon is dropped at the
 * next flush, so it cannot look recent again 2^32 generations later.
 */
static void luf_records_expire(struct kunit *test)
{
	unsigned int last = cpumask_last(cpu_possible_mask);

	luf_ugen_reset();
	WRITE_ONCE(luf_state.ugen, 3);	/* wrapped: U32_MAX is closed */
	KUNIT_EXPECT_FALSE(test, luf_gen_covers(0, U32_MAX, 3));
	luf_set_records(0, 0);
	KUNIT_EXPECT_FALSE(test, luf_ugen_all_flushed(U32_MAX));

	WRITE_ONCE(luf_state.ugen, 100 + LUF_GEN_HORIZON);
	luf_set_records(100 + LUF_GEN_HORIZON - 1, 99);
	luf_ugen_expire();
	KUNIT_EXPECT_EQ(test, per_cpu(luf_cpu_flushed_gen, last), 0U);
	if (num_possible_cpus() > 1)
		KUNIT_EXPECT_EQ(test, per_cpu(luf_cpu_flushed_gen,
					      cpumask_first(cpu_possible_mask)),
				100 + LUF_GEN_HORIZON - 1);
	luf_ugen_reset();
}

LUF_KUNIT_SUITE(luf_generations,
		KUNIT_CASE(luf_gen_never_zero),
		KUNIT_CASE(luf_records_expire),
		KUNIT_CASE(luf_gen_order),
		KUNIT_CASE(luf_gen_cover),
		KUNIT_CASE(luf_gen_pend),
		KUNIT_CASE(luf_gen_slot_ahead),
		KUNIT_CASE(luf_key_wrap),
		KUNIT_CASE(luf_prune_by_records));

#endif /* _LUF_UGEN_KUNIT_H */
