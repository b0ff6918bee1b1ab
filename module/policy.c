// SPDX-License-Identifier: GPL-2.0
/*
 * Every policy decision of luf.ko: which unmaps may defer their flush,
 * which folios may be deferred, which write faults and page-cache changes
 * must flush first and how widely, when a flush may be sent at all, the
 * bounds, and what the knobs allow.  The hooks (main.c), the table
 * (batch.c) and the held pages (hold.c) only carry these decisions out.
 *
 * A policy change is this file, its KUnit cases (tests/policy-kunit.h,
 * included at the end) and the ABI text (Documentation/ABI/testing/).  Why each
 * rule is safe, site by site: Documentation/mm/luf/safety.rst.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/page-isolation.h>
#include <linux/string.h>
#include "luf.h"

/**
 * luf_may_defer - may an unmap of @ctx for @reason defer its flush now?
 * @ctx: reclaim or migration
 * @reason: the migrate_reason of a migration
 *
 * Reclaim defers with enabled; migration (MIGRC) with migrc_enabled, for
 * the reasons that move pages between NUMA nodes.  Compaction, contiguous
 * allocation, hotplug, memory failure and long-term pinning need the
 * source page back at once and never defer; nor does DAMON.
 *
 * Return: true if the flush may be deferred.
 */
bool luf_may_defer(enum luf_ctx ctx, int reason)
{
	if (ctx == LUF_CTX_RECLAIM)
		return luf_knob(enabled);
	if (!luf_knob(migrc_enabled))
		return false;
	switch (reason) {
	case MR_DEMOTION:
	case MR_NUMA_MISPLACED:
	case MR_SYSCALL:
	case MR_MEMPOLICY_MBIND:
		return true;
	default:
		return false;
	}
}

/**
 * luf_order_deferrable - may a folio of @order be deferred at all?
 * @order: folio order
 *
 * Up to a PMD's worth of pages (LUF_MAX_ORDER), as one range of the pfn
 * side table: a large folio is one multi-index entry, which needs
 * CONFIG_XARRAY_MULTI (every kernel with THP or large page-cache folios
 * has it).
 *
 * Return: true if folios of @order may be deferred.
 */
bool luf_order_deferrable(unsigned int order)
{
	if (!order)
		return true;
	return IS_ENABLED(CONFIG_XARRAY_MULTI) && order <= LUF_MAX_ORDER;
}

/**
 * luf_folio_deferrable - may the flush of @folio's unmap be deferred?
 * @folio: a folio whose every PTE was read-only and clean
 *
 * Any size up to a PMD (luf_order_deferrable()).  Excluded: hugetlb,
 * zone-device and KSM folios, CMA and isolated pageblocks, and page-cache
 * folios of a file system that does not call luf_file_change() at every
 * page-cache change (no FS_LUF_HOOKED).  A large folio lies in one
 * pageblock or covers whole ones of one migratetype; its first page's
 * pageblock stands for all of it.
 *
 * Return: true if @folio may be deferred.
 */
bool luf_folio_deferrable(struct folio *folio)
{
	int mt;

	if (!luf_order_deferrable(folio_order(folio)) ||
	    folio_test_hugetlb(folio) || folio_is_zone_device(folio) ||
	    folio_test_ksm(folio))
		return false;
	mt = get_pageblock_migratetype(&folio->page);
	if (is_migrate_cma(mt) || is_migrate_isolate(mt))
		return false;
	if (folio_test_anon(folio))
		return true;
	return folio->mapping &&
	       (folio->mapping->host->i_sb->s_type->fs_flags & FS_LUF_HOOKED);
}

/**
 * luf_unmap_deferrable - may LUF take over the flush of this unmap?
 * @folio: the unmapped folio
 * @ro: its read-only batch, with the context and reason of the unmap
 *
 * Reclaim defers an anonymous folio only if it is in the swap cache: its
 * PTEs became swap entries, and a fault there goes through do_swap_page().
 * One that reclaim discarded instead (lazyfree after MADV_FREE,
 * MAP_DROPPABLE; or a walk that discarded one mapping before another
 * made the folio swap-backed again) left none PTEs, and the next fault
 * there maps a new page through do_anonymous_page(), where no write_fault
 * hook runs; a write fault that passed its entry hook just before the
 * discard gets there too.  Migration leaves migration entries, which
 * remove_migration_pte() replaces.
 *
 * Return: true if the context and reason may defer, the architecture can
 * take the batch over and the folio is deferrable.
 */
bool luf_unmap_deferrable(struct folio *folio,
			  const struct tlbflush_unmap_batch *ro)
{
	if (ro->luf_ctx == LUF_CTX_RECLAIM && folio_test_anon(folio) &&
	    !folio_test_swapcache(folio))
		return false;
	return luf_may_defer(ro->luf_ctx, ro->luf_reason) &&
	       luf_arch_may_take(ro) && luf_folio_deferrable(folio);
}

/**
 * luf_walk_nested - is a TTU_LUF walk of this task already under way?
 * @ro: the task's read-only batch
 *
 * An unmap can start inside another one of the same task: a blockable mmu
 * notifier of a migration walk allocates and enters direct reclaim, maybe
 * before the outer walk put its first PTE into @ro.  The inner unmap must
 * not defer: it would rewrite the context, reason and (arm64) lazy mode
 * that the outer folio is judged and counted by, or hand the outer
 * folio's entries over under its own folio.  luf_walk_begin() marks a walk
 * in @ro->luf_ro, which the core clears when the walk ends
 * (luf_unmap_end()); entries or a PTE that was not read-only and clean
 * are only ever in @ro in the middle of a walk.
 *
 * Return: true if the unmap being prepared must not defer.
 */
bool luf_walk_nested(const struct tlbflush_unmap_batch *ro)
{
	return ro->luf_ro || ro->flush_required || ro->luf_other;
}

/**
 * luf_walk_begin - mark a TTU_LUF walk of this task and give it its context
 * @ro: the task's read-only batch, not luf_walk_nested()
 * @ctx: reclaim or migration
 * @reason: the migrate_reason of a migration
 */
void luf_walk_begin(struct tlbflush_unmap_batch *ro, enum luf_ctx ctx,
		    int reason)
{
	ro->luf_ro = 1;
	ro->luf_ctx = ctx;
	ro->luf_reason = reason;
}

/**
 * luf_max_pending_pages - bound on deferred folios plus held pages
 *
 * Return: max_pending_kb in pages.
 */
unsigned long luf_max_pending_pages(void)
{
	return luf_knob(max_pending_kb) >> (PAGE_SHIFT - 10);
}

/**
 * luf_bound_reached - may a folio of @nr pages not be deferred?
 * @pending: pages of the folios deferred and not flushed
 * @held: pages held back
 * @nr: pages of the folio to defer
 * @max_pages: luf_max_pending_pages()
 *
 * Only pages of pending folios are ever held, and a flush takes a folio
 * out of @pending before its held pages are released, so refusing a
 * deferral that would take @pending + @held beyond @max_pages keeps @held
 * within it (the caller checks and counts under one lock).  A refused
 * deferral releases everything (LUF_CAUSE_THRESHOLD).
 *
 * Return: true if the deferral must be refused.
 */
bool luf_bound_reached(long pending, long held, unsigned long nr,
		       unsigned long max_pages)
{
	return pending + held + nr > max_pages;
}

/**
 * luf_write_fault_scope - must a fault (or PTE install) in a VMA flush?
 * @vm_flags: the VMA's flags
 * @fault_flags: FAULT_FLAG_*, or 0 where a page is installed without a
 *	fault
 * @prot_write: a PTE built from the VMA's vm_page_prot is writable
 *
 * A PTE may become writable, or a page be mapped where it can be written
 * without another fault (see the write_fault sites in
 * include/linux/luf_hooks.h and Documentation/mm/luf/safety.rst).
 *
 * A private mapping counts on a write fault and, with VM_WRITE, on any
 * fault: an exclusive swap-in maps writable on a read fault.  Without
 * VM_WRITE no fault or install maps a PTE writable (maybe_mkwrite(), the
 * swap-in, NUMA hinting's rebuild and UFFDIO_COPY all need VM_WRITE), so
 * a read fault there installs what a stale read-only entry shows too: the
 * deferral can stay, and read-only private mappings (program text, the
 * readers of a swapped-out buffer) keep it across their refaults.  What
 * writes there still comes here as a write: a forced write (ptrace,
 * /proc/pid/mem) through follow_page_pte() or as a FOLL_FORCE write
 * fault, and mprotect() adding VM_WRITE.  follow_huge_pmd() lets a forced
 * write into an exclusive anonymous PMD folio through a read-only PMD with
 * no hook, but no such folio holds data deferred in the mm: LUF defers
 * PTE unmaps only, which leave swap or migration entries, so the PMD was
 * empty (its page table zapped and flushed) or came from a PMD migration,
 * which flushes as it goes.  The writes of a private mapping
 * are seen by its own mm only, and every deferred unmap of the mm counts
 * in mm->tlb_flush_batched: flushing that mm's pending batched unmaps, as
 * munmap() does, is enough (and costs nothing once they are flushed).
 *
 * A write to a shared mapping changes the page cache that any mm may still
 * see through a stale entry: if that page cache has deferred folios,
 * everything deferred is flushed.  A write fault always counts; any other
 * fault or install only with VM_WRITE and without write notification
 * (@prot_write, e.g. shmem), where a NUMA hinting fault or mprotect()
 * rebuilds PTEs writable from vm_page_prot.  With write notification
 * (ext4, xfs: page_mkwrite) the kernel makes a PTE writable without a
 * write fault only if it is dirty (can_change_pte_writable()), and a PTE
 * of a copy of a deferred folio (made after the deferral) that is
 * installed writable or dirty passes this hook as a write; a clean
 * read-only one becomes writable only by a write fault (do_wp_page()).
 * A shared mapping without VM_WRITE gets writable PTEs only through
 * mprotect(), which calls this hook whenever the new flags have VM_WRITE.
 *
 * Return: LUF_SCOPE_NONE, LUF_SCOPE_MM for a private mapping,
 * LUF_SCOPE_ALL for a shared one.
 */
enum luf_scope luf_write_fault_scope(unsigned long vm_flags,
				     unsigned int fault_flags, bool prot_write)
{
	if (!(vm_flags & VM_SHARED))
		return (fault_flags & FAULT_FLAG_WRITE) || (vm_flags & VM_WRITE) ?
		       LUF_SCOPE_MM : LUF_SCOPE_NONE;
	if (fault_flags & FAULT_FLAG_WRITE)
		return LUF_SCOPE_ALL;
	return (vm_flags & VM_WRITE) && prot_write ?
	       LUF_SCOPE_ALL : LUF_SCOPE_NONE;
}

/**
 * luf_aging_wanted - may aging ask for the deferred flushes now?
 * @ctx: who deferred the last folio
 *
 * Reclaim judges a mapped page by its PTE accessed bit.  x86 clears the bit
 * without a TLB flush (ptep_clear_flush_young()): a CPU that keeps the
 * translation cached does not set it again until something flushes, and
 * the flushes reclaim sends are the ones LUF defers, so hot pages would
 * look cold and be reclaimed.  Aging needs flushes only for reclaim (no
 * aging in migration), not where the architecture flushes as it clears the
 * bit (luf_arch_aging_flushes(): arm64), and never with aging_pct at 0.
 * The cheap half of the test: the caller counts the folio for its memcg
 * and weighs the memcg (luf_aging_due()) only when this says yes.
 *
 * Return: true if luf_aging_due() is to be asked.
 */
bool luf_aging_wanted(enum luf_ctx ctx)
{
	return ctx == LUF_CTX_RECLAIM && luf_knob(aging_pct) &&
	       !luf_arch_aging_flushes();
}

/**
 * luf_aging_due - are the deferred flushes due for aging?
 * @pending: pages reclaim deferred from one memcg since the last flush
 * @pages: pages of that memcg (of the LRU lists for the root memcg)
 *
 * Once the pages deferred from a memcg since the last flush reach
 * aging_pct percent of it, and at least LUF_AGING_MIN_PAGES, the CPUs are
 * flushed, so that every pass of aging over the memcg sees a few flushes.
 * What other memcgs deferred does not count: a small memcg would flush at
 * every deferral while a large one waits.  Only after luf_aging_wanted().
 *
 * Return: true if the deferred flushes are due now.
 */
bool luf_aging_due(long pending, unsigned long pages)
{
	return pending >= (long)LUF_AGING_MIN_PAGES &&
	       (unsigned long)pending >= mult_frac(pages,
						   luf_knob(aging_pct),
						   100);
}

/**
 * luf_can_flush - may a flush be sent from here?
 *
 * Flushes send IPIs and wait for them: only from task context with
 * interrupts enabled (invariant I4).
 *
 * Return: true if this context may flush.
 */
bool luf_can_flush(void)
{
	return in_task() && !irqs_disabled();
}

/**
 * luf_may_flush_alloc - may an allocation that found a zone low flush?
 * @gfp: its GFP flags
 *
 * Flushing sends IPIs and waits for them: only where the allocation may
 * block, so never under a spinlock or in an atomic section whose holder
 * another CPU may spin on with interrupts off.  Elsewhere the worker
 * releases soon and the allocation falls back as stock 6.12 would.
 *
 * Return: true if the allocation may flush and release held pages itself.
 */
bool luf_may_flush_alloc(gfp_t gfp)
{
	return gfpflags_allow_blocking(gfp) && luf_can_flush();
}

/* Total RAM in kB: the largest max_pending_kb */
static unsigned long luf_total_kb(void)
{
	return totalram_pages() << (PAGE_SHIFT - 10);
}

struct luf_knob_def {
	unsigned long dflt, min, max;
};

/* Knob number @k's line of luf_knob_defs.h, evaluated on this machine */
static struct luf_knob_def luf_knob_def(unsigned int k)
{
	const unsigned long ram_kb = luf_total_kb(), page_kb = PAGE_SIZE >> 10;
	struct luf_knob_def def[LUF_NR_KNOBS];

#define LUF_KNOB(name, d, lo, hi, ...)					\
	(def[LUF_KNOB_NR(name)] = (struct luf_knob_def){ (d), (lo), (hi) })
#include "luf_knob_defs.h"
#undef LUF_KNOB
	return def[k];
}

/**
 * luf_knob_default - the value of a knob at load, unless a module
 * parameter sets it
 * @k: the knob's number
 *
 * LUF and MIGRC start off, observe mode on.  Nothing but memory depends
 * on how long a flush waits: held pages are bounded by max_pending_kb and
 * given back under pressure, and every change of content flushes first.
 * Each expiry costs one round of IPIs, so the bound is seconds, not
 * milliseconds.
 *
 * Return: the default (luf_knob_defs.h).
 */
unsigned long luf_knob_default(unsigned int k)
{
	return luf_knob_def(k).dflt;
}

/*
 * init_on_free, page poisoning and debug_pagealloc change or unmap a page
 * as it is freed; LUF keeps pages until their flush but refuses to rely on
 * that where the kernel is configured to check freed pages.
 */
static bool luf_freed_pages_change(void)
{
	return want_init_on_free() || page_poisoning_enabled() ||
	       debug_pagealloc_enabled();
}

/**
 * luf_knob_range - the values a knob accepts (luf_knob_defs.h)
 * @k: the knob's number
 * @min: smallest accepted value
 * @max: largest accepted value
 *
 * max_pending_kb never goes below a page: less would hold nothing and
 * leave LUF silently off.
 */
void luf_knob_range(unsigned int k, unsigned long *min, unsigned long *max)
{
	struct luf_knob_def def = luf_knob_def(k);

	*min = def.min;
	*max = def.max;
}

/**
 * luf_knob_allowed - may knob @k take @val, which is in its range?
 * @k: the knob's number
 * @val: the new value
 *
 * Return: 0, or -EOPNOTSUPP for turning LUF or MIGRC on in a kernel that
 * changes or checks freed pages.
 */
int luf_knob_allowed(unsigned int k, unsigned long val)
{
	if ((k == LUF_KNOB_NR(enabled) || k == LUF_KNOB_NR(migrc_enabled)) && val &&
	    luf_freed_pages_change())
		return -EOPNOTSUPP;
	return 0;
}

/**
 * luf_knob_settles - must setting @k to @val settle everything deferred?
 * @k: the knob's number
 * @val: the value just set
 *
 * Disabling LUF or MIGRC flushes everything deferred (by either) and
 * releases every held page before the write returns.
 *
 * Return: true if the writer must release everything now.
 */
bool luf_knob_settles(unsigned int k, unsigned long val)
{
	return (k == LUF_KNOB_NR(enabled) || k == LUF_KNOB_NR(migrc_enabled)) && !val;
}

#ifdef LUF_KUNIT
#include "tests/policy-kunit.h"
#endif
