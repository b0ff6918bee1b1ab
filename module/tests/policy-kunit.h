/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit cases of policy.c, included at its end when it is built into
 * luf_kunit.ko (tests/luf_kunit.c).  A policy change changes a case here.
 */
#ifndef _LUF_POLICY_KUNIT_H
#define _LUF_POLICY_KUNIT_H

#include <kunit/test.h>

/*
 * Only migrations between NUMA nodes defer: never compaction, contiguous
 * allocation, hotplug, memory failure, long-term pinning or DAMON, with
 * every knob on; reclaim follows enabled, migration migrc_enabled.
 */
static void luf_policy(struct kunit *test)
{
	static const int nodes[] = { MR_DEMOTION, MR_NUMA_MISPLACED, MR_SYSCALL,
				     MR_MEMPOLICY_MBIND };
	static const int never[] = { MR_COMPACTION, MR_MEMORY_FAILURE,
				     MR_MEMORY_HOTPLUG, MR_CONTIG_RANGE,
				     MR_LONGTERM_PIN, MR_DAMON };
	int i;

	BUILD_BUG_ON(ARRAY_SIZE(nodes) + ARRAY_SIZE(never) != MR_TYPES);
	luf_state.knob[LUF_KNOB_NR(enabled)] = 1;
	luf_state.knob[LUF_KNOB_NR(migrc_enabled)] = 1;
	KUNIT_EXPECT_TRUE(test, luf_may_defer(LUF_CTX_RECLAIM, 0));
	for (i = 0; i < ARRAY_SIZE(nodes); i++)
		KUNIT_EXPECT_TRUE(test, luf_may_defer(LUF_CTX_MIGRATE, nodes[i]));
	for (i = 0; i < ARRAY_SIZE(never); i++)
		KUNIT_EXPECT_FALSE(test, luf_may_defer(LUF_CTX_MIGRATE, never[i]));

	luf_state.knob[LUF_KNOB_NR(migrc_enabled)] = 0;
	KUNIT_EXPECT_TRUE(test, luf_may_defer(LUF_CTX_RECLAIM, 0));
	for (i = 0; i < ARRAY_SIZE(nodes); i++)
		KUNIT_EXPECT_FALSE(test, luf_may_defer(LUF_CTX_MIGRATE, nodes[i]));

	luf_state.knob[LUF_KNOB_NR(enabled)] = 0;
	luf_state.knob[LUF_KNOB_NR(migrc_enabled)] = 1;
	KUNIT_EXPECT_FALSE(test, luf_may_defer(LUF_CTX_RECLAIM, 0));
	KUNIT_EXPECT_TRUE(test, luf_may_defer(LUF_CTX_MIGRATE, MR_DEMOTION));
	luf_state.knob[LUF_KNOB_NR(migrc_enabled)] = 0;
}

/*
 * A private mapping flushes its mm on a write fault (a forced one too,
 * without VM_WRITE) and, with VM_WRITE, on any fault; a
 * shared one flushes everything its VMA has deferred on a write fault,
 * and on any other fault or install only if it has VM_WRITE and no write
 * notification (vm_page_prot writable, as in shmem).
 */
static void luf_write_fault_scopes(struct kunit *test)
{
	static const struct {
		unsigned long vm_flags;
		unsigned int fault_flags;
		bool prot_write;
		enum luf_scope scope;
	} c[] = {
		{ VM_READ, 0, false, LUF_SCOPE_NONE },
		{ VM_READ, FAULT_FLAG_WRITE, false, LUF_SCOPE_MM },
		/* read-only private: a read fault maps read-only */
		{ VM_READ | VM_MAYWRITE, 0, false, LUF_SCOPE_NONE },
		{ VM_READ | VM_MAYWRITE, FAULT_FLAG_USER, false, LUF_SCOPE_NONE },
		/* a forced write (FOLL_FORCE) */
		{ VM_READ | VM_MAYWRITE, FAULT_FLAG_WRITE, false, LUF_SCOPE_MM },
		{ VM_READ | VM_WRITE | VM_MAYWRITE, 0, false, LUF_SCOPE_MM },
		{ VM_SHARED | VM_READ, 0, false, LUF_SCOPE_NONE },
		{ VM_SHARED | VM_READ | VM_MAYWRITE, 0, false, LUF_SCOPE_NONE },
		{ VM_SHARED | VM_READ, FAULT_FLAG_WRITE, false, LUF_SCOPE_ALL },
		{ VM_SHARED | VM_READ | VM_WRITE, 0, true, LUF_SCOPE_ALL },
		/* write notification (page_mkwrite, uffd-wp, soft-dirty) */
		{ VM_SHARED | VM_READ | VM_WRITE, 0, false, LUF_SCOPE_NONE },
		{ VM_SHARED | VM_READ | VM_WRITE, FAULT_FLAG_USER, false,
		  LUF_SCOPE_NONE },
		{ VM_SHARED | VM_WRITE, FAULT_FLAG_WRITE, false, LUF_SCOPE_ALL },
		{ VM_SHARED | VM_WRITE, FAULT_FLAG_WRITE, true, LUF_SCOPE_ALL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, luf_write_fault_scope(c[i].vm_flags,
								c[i].fault_flags,
								c[i].prot_write),
				    c[i].scope, "case %zu", i);
}

/*
 * Ranges and defaults of the knobs (their values are LUF_KNOBS', not
 * repeated here); turning LUF or MIGRC off settles everything deferred,
 * nothing else does.
 */
static void luf_knob_rules(struct kunit *test)
{
	unsigned long min, max, total = totalram_pages() << (PAGE_SHIFT - 10);
	unsigned int k;

	for (k = 0; k < LUF_NR_KNOBS; k++) {
		luf_knob_range(k, &min, &max);
		KUNIT_EXPECT_GE(test, luf_knob_default(k), min);
		KUNIT_EXPECT_LE(test, luf_knob_default(k), max);
		KUNIT_EXPECT_FALSE(test, luf_knob_settles(k, 1));
		KUNIT_EXPECT_EQ(test, luf_knob_settles(k, 0),
				k == LUF_KNOB_NR(enabled) ||
				k == LUF_KNOB_NR(migrc_enabled));
		KUNIT_EXPECT_EQ(test, luf_knob_allowed(k, 0), 0);
	}
	/* less than a page would hold nothing: LUF silently off */
	luf_knob_range(LUF_KNOB_NR(max_pending_kb), &min, &max);
	KUNIT_EXPECT_GE(test, min, PAGE_SIZE >> 10);
	KUNIT_EXPECT_LE(test, max, total);
	/* off unless asked for */
	KUNIT_EXPECT_EQ(test, luf_knob_default(LUF_KNOB_NR(enabled)), 0UL);
	KUNIT_EXPECT_EQ(test, luf_knob_default(LUF_KNOB_NR(migrc_enabled)), 0UL);
}

/* max_pending_kb bounds deferred pages plus held pages together */
static void luf_bounds(struct kunit *test)
{
	luf_state.knob[LUF_KNOB_NR(max_pending_kb)] = 64;
	KUNIT_EXPECT_EQ(test, luf_max_pending_pages(), 64UL >> (PAGE_SHIFT - 10));
	KUNIT_EXPECT_FALSE(test, luf_bound_reached(0, 0, 1, 16));
	KUNIT_EXPECT_FALSE(test, luf_bound_reached(10, 5, 1, 16));
	KUNIT_EXPECT_TRUE(test, luf_bound_reached(10, 6, 1, 16));
	KUNIT_EXPECT_TRUE(test, luf_bound_reached(0, 16, 1, 16));
	/* a large folio counts every page: it fits whole or not at all */
	KUNIT_EXPECT_FALSE(test, luf_bound_reached(0, 0, 16, 16));
	KUNIT_EXPECT_TRUE(test, luf_bound_reached(1, 0, 16, 16));
	KUNIT_EXPECT_TRUE(test, luf_bound_reached(0, 0, 17, 16));
	luf_state.knob[LUF_KNOB_NR(max_pending_kb)] = 0;
}

/* Large folios up to a PMD, as one multi-index entry; nothing larger */
static void luf_orders(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, luf_order_deferrable(0));
	KUNIT_EXPECT_EQ(test, luf_order_deferrable(4),
			IS_ENABLED(CONFIG_XARRAY_MULTI));
	KUNIT_EXPECT_EQ(test, luf_order_deferrable(LUF_MAX_ORDER),
			IS_ENABLED(CONFIG_XARRAY_MULTI));
	KUNIT_EXPECT_FALSE(test, luf_order_deferrable(LUF_MAX_ORDER + 1));
}

/* Both halves of the aging test, as luf_hook_unmap_done() asks them */
static bool luf_aging_test(enum luf_ctx ctx, long pending, unsigned long pages)
{
	return luf_aging_wanted(ctx) && luf_aging_due(pending, pages);
}

/*
 * Aging asks for a flush once aging_pct percent of the memcg is deferred,
 * never below LUF_AGING_MIN_PAGES, only for reclaim, never at 0, and not
 * where clearing the accessed bit invalidates the translation.
 */
static void luf_aging_rules(struct kunit *test)
{
	const bool arch = !luf_arch_aging_flushes();
	const long min = LUF_AGING_MIN_PAGES;

	luf_state.knob[LUF_KNOB_NR(aging_pct)] = 25;
	KUNIT_EXPECT_FALSE(test, luf_aging_test(LUF_CTX_RECLAIM, 255, 1024));
	KUNIT_EXPECT_EQ(test, luf_aging_test(LUF_CTX_RECLAIM, 256, 1024), arch);
	KUNIT_EXPECT_EQ(test, luf_aging_test(LUF_CTX_RECLAIM, 300, 1024), arch);
	KUNIT_EXPECT_FALSE(test, luf_aging_test(LUF_CTX_MIGRATE, 300, 1024));
	/* a small memcg: the floor */
	KUNIT_EXPECT_FALSE(test, luf_aging_test(LUF_CTX_RECLAIM, min - 1, 16));
	KUNIT_EXPECT_EQ(test, luf_aging_test(LUF_CTX_RECLAIM, min, 16), arch);
	KUNIT_EXPECT_FALSE(test, luf_aging_due(min - 1, 16));
	KUNIT_EXPECT_FALSE(test, luf_aging_due(0, 0));
	/* no overflow for a huge LRU */
	KUNIT_EXPECT_FALSE(test, luf_aging_test(LUF_CTX_RECLAIM, LONG_MAX / 8,
						ULONG_MAX));
	luf_state.knob[LUF_KNOB_NR(aging_pct)] = 100;
	KUNIT_EXPECT_FALSE(test, luf_aging_test(LUF_CTX_RECLAIM, 1023, 1024));
	KUNIT_EXPECT_EQ(test, luf_aging_test(LUF_CTX_RECLAIM, 1024, 1024), arch);
	luf_state.knob[LUF_KNOB_NR(aging_pct)] = 0;
	KUNIT_EXPECT_FALSE(test, luf_aging_wanted(LUF_CTX_RECLAIM));
}

/*
 * A migration walk marked as begun refuses a nested unmap before it put
 * any PTE into the batch (a blockable mmu notifier that allocates into
 * direct reclaim), and its context survives; the core's end of the walk
 * clears the mark.  Entries, or a PTE that was not read-only and clean,
 * refuse too.
 */
static void luf_walk_nesting(struct kunit *test)
{
	struct tlbflush_unmap_batch ro = {};

	KUNIT_EXPECT_FALSE(test, luf_walk_nested(&ro));
	luf_walk_begin(&ro, LUF_CTX_MIGRATE, MR_SYSCALL);
	KUNIT_EXPECT_TRUE(test, luf_walk_nested(&ro));
	KUNIT_EXPECT_EQ(test, ro.luf_ctx, LUF_CTX_MIGRATE);
	KUNIT_EXPECT_EQ(test, ro.luf_reason, MR_SYSCALL);
	/* what luf_unmap_end() clears */
	ro.luf_ro = 0;
	KUNIT_EXPECT_FALSE(test, luf_walk_nested(&ro));
	ro.flush_required = true;
	KUNIT_EXPECT_TRUE(test, luf_walk_nested(&ro));
	ro.flush_required = false;
	ro.luf_other = true;
	KUNIT_EXPECT_TRUE(test, luf_walk_nested(&ro));
}

LUF_KUNIT_SUITE(luf_policy,
		KUNIT_CASE(luf_policy),
		KUNIT_CASE(luf_write_fault_scopes),
		KUNIT_CASE(luf_knob_rules),
		KUNIT_CASE(luf_bounds),
		KUNIT_CASE(luf_orders),
		KUNIT_CASE(luf_aging_rules),
		KUNIT_CASE(luf_walk_nesting));

#endif /* _LUF_POLICY_KUNIT_H */
