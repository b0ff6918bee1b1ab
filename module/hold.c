// SPDX-License-Identifier: GPL-2.0
/*
 * Pages held back from the allocator while a deferred translation may
 * still reach them (invariant I1).
 *
 * The free_page hook holds a pending block, of the order it is freed at,
 * on the held list of that order instead of letting it reach pcp or
 * buddy, and it goes back at that order.  Held pages go back in bulk, after one flush,
 * from process context only: on the max_defer_ms timer, when deferred
 * memory reaches max_pending_kb, from the shrinker, when an allocation
 * finds a zone low, when LUF is disabled and on unload.
 */
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/page-isolation.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include "luf.h"
#include "trace.h"

/* Held blocks by order: a block keeps nothing of its own to say it */
static struct list_head luf_held_list[NR_PAGE_ORDERS];
static DEFINE_SPINLOCK(luf_hold_lock);	/* taken from any context */

static struct workqueue_struct *luf_wq;
static struct delayed_work luf_timer_work;
static struct work_struct luf_release_work;
static struct work_struct luf_sweep_work;
static struct shrinker *luf_shrinker;
/*
 * luf_release() calls that have taken or may take the held list, in two
 * phases: luf_release_wait() turns the phase and waits only for the calls
 * of the old one, so releases that begin later cannot starve it.  A
 * release counts itself with preemption off, so a waiter (a hook,
 * preemption off too) spins only on a CPU that is running it.
 */
static atomic_t luf_releasing[2];
static unsigned int luf_release_phase;
static DEFINE_SPINLOCK(luf_release_wait_lock);

/**
 * luf_hold_page - hold a block back if a deferred translation may reach it
 * @page: first page of the block being freed
 * @order: its order
 *
 * The whole block is held if any page of it is pending: a deferred large
 * folio freed whole, or any piece of one split after its deferral
 * (luf_range_pending()).
 *
 * Context: any; never flushes.
 * Return: true if the block is now held.
 */
bool luf_hold_page(struct page *page, unsigned int order)
{
	unsigned long pfn = page_to_pfn(page), flags;
	long nr = 1L << order, held, peak;

	/*
	 * A poisoned order-0 page never goes back to the allocator
	 * (free_pages_prepare()); holding it would only keep
	 * memory_failure() waiting.  One poisoned just after this test is
	 * held, but was deferred before pages_wanted's first flush, so that
	 * release hands it to free_pages_prepare(), which drops it
	 * (memory_failure() then reports it unhandled, not recovered:
	 * Documentation/mm/luf/safety.rst).  A larger block with a poisoned first page does
	 * go to buddy, where memory_failure() takes only that page off: it
	 * is held like any other.
	 */
	if (order >= NR_PAGE_ORDERS || (!order && PageHWPoison(page)) ||
	    !luf_range_pending(pfn, order))
		return false;
	/*
	 * Checked again under the lock: luf_release() flushes before it takes
	 * the list, so a page whose flush it made is either seen as settled
	 * here or taken and given back there, never left behind.
	 */
	spin_lock_irqsave(&luf_hold_lock, flags);
	if (!luf_range_pending(pfn, order)) {
		spin_unlock_irqrestore(&luf_hold_lock, flags);
		return false;
	}
	list_add_tail(&page->lru, &luf_held_list[order]);
	/*
	 * Counted before the lock is dropped: luf_release() subtracts what
	 * it took from the list, so held never goes below the list's length
	 * (the shrinker's count and the bound read it).
	 */
	held = atomic_long_add_return(nr, &luf_state.held);
	spin_unlock_irqrestore(&luf_hold_lock, flags);
	/*
	 * Offlining or a contiguous allocation waits for this page.  Not
	 * after the pages_wanted hook: what is deferred from an isolated
	 * pageblock is settled at once (luf_hook_unmap_done()).
	 */
	if (is_migrate_isolate(get_pageblock_migratetype(page))) {
		luf_count(LUF_EV_HELD_ISOLATED, 1);
		if (READ_ONCE(luf_state.debug_break) != LUF_BREAK_ISOLATE)
			luf_kick(LUF_CAUSE_ISOLATE);
	}
	peak = atomic_long_read(&luf_state.held_peak);
	while (held > peak &&
	       !atomic_long_try_cmpxchg(&luf_state.held_peak, &peak, held))
		;
	luf_count(LUF_EV_HELD, nr);
	return true;
}

/*
 * Count a release in the phase it finds, and find it again after the
 * count is visible: a luf_release_wait() that turned the phase meanwhile
 * either sees the count or is seen, and then the release counts itself in
 * the new phase.
 */
static atomic_t *luf_release_begin(void)
{
	unsigned int phase;
	atomic_t *r;

	for (;;) {
		phase = READ_ONCE(luf_release_phase);
		r = &luf_releasing[phase & 1];
		atomic_inc(r);
		/*
		 * Pairs with smp_mb() in luf_release_wait().  Also orders the
		 * flush a luf_release_all() made before its first wait (the
		 * store of luf_done) before that wait's turn of the phase: a
		 * release counted in the new phase sees that flush.  A wait
		 * without a release before it would lose this.
		 */
		smp_mb__after_atomic();
		if (READ_ONCE(luf_release_phase) == phase)
			return r;
		atomic_dec(r);
	}
}

/**
 * luf_release - flush everything deferred and free every held page
 * @cause: why, for the counters
 *
 * Context: task context with IRQs enabled; does not sleep, and runs with
 * preemption off from when it takes the held list until it has freed
 * what it took.
 * Return: number of pages given back to the allocator.
 */
unsigned long luf_release(enum luf_cause cause)
{
	struct list_head list[NR_PAGE_ORDERS], keep[NR_PAGE_ORDERS];
	unsigned long flags, freed = 0;
	struct page *page, *next;
	atomic_t *releasing;
	unsigned int order;

	luf_batch_flush(cause, true);
	/* what a settle under a page table lock left (luf_settle()) */
	luf_batch_sweep();
	/* counted before it takes the list (luf_release_wait()) */
	preempt_disable();
	releasing = luf_release_begin();
	spin_lock_irqsave(&luf_hold_lock, flags);
	for (order = 0; order < NR_PAGE_ORDERS; order++) {
		INIT_LIST_HEAD(&list[order]);
		INIT_LIST_HEAD(&keep[order]);
		list_splice_init(&luf_held_list[order], &list[order]);
	}
	spin_unlock_irqrestore(&luf_hold_lock, flags);

	for (order = 0; order < NR_PAGE_ORDERS; order++) {
		list_for_each_entry_safe(page, next, &list[order], lru) {
			unsigned long pfn = page_to_pfn(page);

			/* Deferred again after the flush above: the next one */
			if (luf_range_pending(pfn, order)) {
				list_move_tail(&page->lru, &keep[order]);
				continue;
			}
			list_del(&page->lru);
			luf_pfn_forget(pfn);
			/*
			 * Held at the top of free_pages_prepare() with
			 * refcount 0: give it its reference back and drop
			 * it, which frees it at its order the way it was
			 * being freed (free_pages_prepare() again, where
			 * the free_page hook now lets it go).
			 */
			set_page_count(page, 1);
			__free_pages(page, order);
			freed += 1UL << order;
		}
	}
	spin_lock_irqsave(&luf_hold_lock, flags);
	for (order = 0; order < NR_PAGE_ORDERS; order++)
		list_splice(&keep[order], &luf_held_list[order]);
	spin_unlock_irqrestore(&luf_hold_lock, flags);
	atomic_long_sub_return_release(freed, &luf_state.held);
	/* The pages freed (maybe to a pcp list) before the count drops */
	atomic_dec_return_release(releasing);
	preempt_enable();
	luf_count(LUF_EV_RELEASED, freed);
	luf_count(LUF_EV_RELEASED_BASE + cause, freed);
	trace_luf_release(freed, cause);
	/* Deferred meanwhile: the timer still bounds how long it waits. */
	if (atomic_long_read(&luf_state.pending))
		luf_kick(LUF_CAUSE_TIMER);
	return freed;
}

/*
 * luf_release_wait - wait for the luf_release() calls of other tasks
 *
 * A release takes the held pages off the list before it frees them one by
 * one: a caller that needs them free (test_pages_isolated()) waits for
 * the releases that began before this call.
 *
 * Context: task context, not in luf_release(); does not sleep (a hook
 * runs with preemption off).  It spins for as long as the releases it
 * waits for take to free what they took, which run with preemption off.
 */
static void luf_release_wait(void)
{
	atomic_t *old;

	spin_lock(&luf_release_wait_lock);
	old = &luf_releasing[luf_release_phase & 1];
	WRITE_ONCE(luf_release_phase, luf_release_phase + 1);
	/* Pairs with smp_mb__after_atomic() in luf_release_begin() */
	smp_mb();
	while (atomic_read_acquire(old))
		cpu_relax();
	spin_unlock(&luf_release_wait_lock);
}

/**
 * luf_release_all - release everything, and what other releases hold
 * @cause: why, for the counters
 *
 * Pages another release took off the list are not free yet, and it may
 * put pages back that were pending when it looked (its keep list) after
 * this release took the list: release, wait for the releases under way,
 * and do both again.  A release that takes the list after the first
 * flush here keeps only folios deferred after that flush: none from a
 * pageblock isolated before this call (luf_hook_unmap_done() settles
 * those at once), and no page freed after the producers stopped.
 *
 * Context: task context with IRQs enabled; does not sleep (see
 * luf_release_wait()).
 */
void luf_release_all(enum luf_cause cause)
{
	luf_release(cause);
	luf_release_wait();
	luf_release(cause);
	luf_release_wait();
}

/**
 * luf_held_now - the held pages, once no luf_hold_page() is half done
 *
 * A page whose hold began before a flush settled its pfn is still added;
 * taking luf_hold_lock waits for that, and a hold that begins after it
 * sees the flush (the caller read luf_state.pending as 0, which the flush
 * wrote after luf_done) and lets the page go.
 *
 * Return: luf_state.held.
 */
long luf_held_now(void)
{
	unsigned long flags;

	spin_lock_irqsave(&luf_hold_lock, flags);
	spin_unlock_irqrestore(&luf_hold_lock, flags);
	/* Pairs with the release of held in luf_release() */
	return atomic_long_read_acquire(&luf_state.held);
}

/**
 * luf_holding - are pages held, or is a release freeing them?
 *
 * Context: any; lockless: a hold or release that is under way right now
 * may be missed, as an isolation misses a page the core frees right now.
 * Return: true if so.
 */
bool luf_holding(void)
{
	return atomic_long_read(&luf_state.held) ||
	       atomic_read(&luf_releasing[0]) || atomic_read(&luf_releasing[1]);
}

/* What the last luf_kick() for the release work was for (counters only) */
static enum luf_cause luf_kick_cause = LUF_CAUSE_THRESHOLD;

static void luf_release_workfn(struct work_struct *work)
{
	luf_release(READ_ONCE(luf_kick_cause));
}

static void luf_sweep_workfn(struct work_struct *work)
{
	luf_batch_sweep();
}

/**
 * luf_kick_sweep - have the worker sweep what a flush left for later
 *
 * Only the sweep (luf_batch_sweep()): no flush, nothing released.
 *
 * Context: any.
 */
void luf_kick_sweep(void)
{
	queue_work(luf_wq, &luf_sweep_work);
}

static void luf_timer_workfn(struct work_struct *work)
{
	luf_release(LUF_CAUSE_TIMER);
}

/**
 * luf_kick - have the worker release everything soon
 * @cause: LUF_CAUSE_TIMER: in max_defer_ms; any other: now, counted as
 *	released_<cause>
 *
 * Context: any.
 */
void luf_kick(enum luf_cause cause)
{
	if (cause == LUF_CAUSE_TIMER) {
		queue_delayed_work(luf_wq, &luf_timer_work,
				   msecs_to_jiffies(luf_knob(max_defer_ms)));
	} else {
		WRITE_ONCE(luf_kick_cause, cause);
		queue_work(luf_wq, &luf_release_work);
	}
}

/**
 * luf_timer_rearm - bring a queued timer flush within max_defer_ms from now
 *
 * After max_defer_ms was lowered, a flush queued with the old period would
 * let what is deferred wait longer than the new bound.  Raising it leaves
 * the queued flush as it is.
 *
 * Context: process context.
 */
void luf_timer_rearm(void)
{
	unsigned long delay = msecs_to_jiffies(luf_knob(max_defer_ms));

	if (delayed_work_pending(&luf_timer_work) &&
	    time_after(READ_ONCE(luf_timer_work.timer.expires), jiffies + delay))
		mod_delayed_work(luf_wq, &luf_timer_work, delay);
}

static unsigned long luf_shrink_count(struct shrinker *s,
				      struct shrink_control *sc)
{
	return atomic_long_read(&luf_state.held) ?: SHRINK_EMPTY;
}

static unsigned long luf_shrink_scan(struct shrinker *s,
				     struct shrink_control *sc)
{
	if (!luf_can_flush())
		return SHRINK_STOP;
	return luf_release(LUF_CAUSE_SHRINKER);
}

/**
 * luf_hold_init - set up the release worker, its timer and the shrinker
 *
 * Return: 0 or -ENOMEM.
 */
int luf_hold_init(void)
{
	unsigned int order;

	for (order = 0; order < NR_PAGE_ORDERS; order++)
		INIT_LIST_HEAD(&luf_held_list[order]);
	atomic_long_set(&luf_state.held, 0);
	atomic_long_set(&luf_state.held_peak, 0);
	luf_wq = alloc_workqueue("luf", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!luf_wq)
		return -ENOMEM;
	INIT_DELAYED_WORK(&luf_timer_work, luf_timer_workfn);
	INIT_WORK(&luf_release_work, luf_release_workfn);
	INIT_WORK(&luf_sweep_work, luf_sweep_workfn);
	luf_shrinker = shrinker_alloc(0, "luf");
	if (!luf_shrinker) {
		destroy_workqueue(luf_wq);
		return -ENOMEM;
	}
	luf_shrinker->count_objects = luf_shrink_count;
	luf_shrinker->scan_objects = luf_shrink_scan;
	luf_shrinker->seeks = 0;
	shrinker_register(luf_shrinker);
	return 0;
}

/**
 * luf_hold_exit - tear down what luf_hold_init() set up
 *
 * After luf_hooks_unregister(): nothing can be held or deferred now.
 */
void luf_hold_exit(void)
{
	shrinker_free(luf_shrinker);
	cancel_delayed_work_sync(&luf_timer_work);
	cancel_work_sync(&luf_release_work);
	cancel_work_sync(&luf_sweep_work);
	/* The drain settled everything: nothing may be left held. */
	if (WARN_ON_ONCE(atomic_long_read(&luf_state.held)))
		luf_release(LUF_CAUSE_UNLOAD);
	cancel_delayed_work_sync(&luf_timer_work);
	destroy_workqueue(luf_wq);
}
