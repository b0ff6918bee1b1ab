/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit cases of batch.c, included at its end when it is built into
 * luf_kunit.ko (tests/luf_kunit.c): the pfn side table with large folios,
 * as multi-index entries, and its filters.  The pfns are numbers only:
 * nothing here touches a struct page.
 */
#ifndef _LUF_BATCH_KUNIT_H
#define _LUF_BATCH_KUNIT_H

#include <kunit/test.h>

/* Well above this guest's memory, aligned to a PMD's worth of pages */
#define LUF_TEST_PFN	BIT(30)

/* Record @order pages from @pfn at the open generation, as a deferral does */
static void luf_test_defer(struct kunit *test, unsigned long pfn,
			   unsigned int order)
{
	u32 gen;

	spin_lock(&luf_batch_lock);
	gen = luf_state.ugen;
	WRITE_ONCE(*luf_filter_slot(pfn, order), gen);
	KUNIT_EXPECT_EQ(test, luf_pfns_store(pfn, order, gen), 0);
	spin_unlock(&luf_batch_lock);
}

/* Settle everything recorded so far and open the next generation */
static void luf_test_settle(void)
{
	spin_lock(&luf_batch_lock);
	/* as luf_batch_flush() publishes it, for luf_pfn_pending() */
	smp_store_release(&luf_done, luf_state.ugen);
	luf_state.ugen = luf_gen_next(luf_state.ugen);
	spin_unlock(&luf_batch_lock);
}

static int luf_side_table_init(struct kunit *test)
{
	return luf_batch_init();
}

static void luf_side_table_exit(struct kunit *test)
{
	luf_batch_exit();
}

/* Every page of a large folio is pending, found from any page or block */
static void luf_large_ranges(struct kunit *test)
{
	const unsigned long p = LUF_TEST_PFN;

	luf_test_defer(test, p, 4);
	KUNIT_EXPECT_TRUE(test, luf_pfn_pending(p));
	KUNIT_EXPECT_TRUE(test, luf_pfn_pending(p + 15));
	KUNIT_EXPECT_FALSE(test, luf_pfn_pending(p + 16));
	KUNIT_EXPECT_FALSE(test, luf_pfn_pending(p - 1));
	/* pieces of a split: order-2 and order-0 blocks inside */
	KUNIT_EXPECT_TRUE(test, luf_range_pending(p + 4, 2));
	KUNIT_EXPECT_TRUE(test, luf_range_pending(p + 9, 0));
	/* blocks around it and beside it */
	KUNIT_EXPECT_TRUE(test, luf_range_pending(p, LUF_MAX_ORDER));
	KUNIT_EXPECT_FALSE(test, luf_range_pending(p + 16, 4));
	luf_test_settle();
	KUNIT_EXPECT_FALSE(test, luf_pfn_pending(p + 3));
	KUNIT_EXPECT_FALSE(test, luf_range_pending(p, 4));
}

/*
 * A store into part of an entry moves all of it to the newer generation:
 * pending longer, never shorter.  A settled page is forgotten only if its
 * whole entry is settled.
 */
static void luf_large_overwrite(struct kunit *test)
{
	const unsigned long p = LUF_TEST_PFN;

	luf_test_defer(test, p, 4);
	luf_state.ugen = luf_gen_next(luf_state.ugen);
	luf_test_defer(test, p + 2, 1);
	KUNIT_EXPECT_TRUE(test, luf_pfn_pending(p + 12));
	/* a neighbour deferred again: forgetting this page must keep it */
	luf_pfn_forget(p + 7);
	KUNIT_EXPECT_TRUE(test, luf_pfn_pending(p + 2));
	KUNIT_EXPECT_TRUE(test, luf_pfn_pending(p + 7));
	luf_test_settle();
	luf_pfn_forget(p + 7);
	KUNIT_EXPECT_NULL(test, xa_load(&luf_pfns, p));
	KUNIT_EXPECT_NULL(test, xa_load(&luf_pfns, p + 15));
}

/*
 * A settled entry wider than a new deferral goes first: the pages no
 * deferral counts do not become pending again.
 */
static void luf_large_no_phantom(struct kunit *test)
{
	const unsigned long p = LUF_TEST_PFN;

	luf_test_defer(test, p, LUF_MAX_ORDER);
	luf_test_settle();
	luf_test_defer(test, p + 1, 0);
	KUNIT_EXPECT_TRUE(test, luf_pfn_pending(p + 1));
	KUNIT_EXPECT_NULL(test, xa_load(&luf_pfns, p + 100));
	KUNIT_EXPECT_FALSE(test, luf_range_pending(p + 256, 8));
}

/* The sweep erases settled multi-index entries and keeps pending ones */
static void luf_large_sweep(struct kunit *test)
{
	const unsigned long p = LUF_TEST_PFN;

	luf_test_defer(test, p, 4);
	luf_test_defer(test, p + 512, LUF_MAX_ORDER);
	luf_test_settle();
	luf_test_defer(test, p + 2048, 2);
	luf_pfns_sweep(luf_done);
	KUNIT_EXPECT_NULL(test, xa_load(&luf_pfns, p + 3));
	KUNIT_EXPECT_NULL(test, xa_load(&luf_pfns, p + 700));
	KUNIT_EXPECT_TRUE(test, luf_pfn_pending(p + 2051));
}

static struct kunit_case luf_side_table_cases[] = {
	KUNIT_CASE(luf_large_ranges),
	KUNIT_CASE(luf_large_overwrite),
	KUNIT_CASE(luf_large_no_phantom),
	KUNIT_CASE(luf_large_sweep),
	{}
};

static struct kunit_suite luf_side_table_suite = {
	.name = "luf_side_table",
	.init = luf_side_table_init,
	.exit = luf_side_table_exit,
	.test_cases = luf_side_table_cases,
};

kunit_test_suite(luf_side_table_suite);

#endif /* _LUF_BATCH_KUNIT_H */
