// SPDX-License-Identifier: GPL-2.0
/*
 * luf.ko: lazy unmap flush (LUF) and migration read copy (MIGRC) provider
 * for the core hook layer (include/linux/luf_hooks.h).
 *
 * Reclaim (with /sys/kernel/mm/luf/enabled) and NUMA migration (MIGRC,
 * with migrc_enabled) defer the TLB flush of a folio (up to a PMD's worth
 * of pages) whose every PTE was read-only and clean into the luf_batch
 * table (batch.c).
 * Consumers keep it safe: a freed page that a deferred translation may
 * reach is held back (hold.c, invariant I1); a write fault or a page-cache
 * change flushes first (I2); munmap, mprotect, madvise and mremap flush
 * per mm in the core (I3).  Observe mode counts what could be deferred
 * (stats.c).  Every decision is policy.c's; this file registers the hooks
 * and carries the decisions out.
 *
 * MIGRC needs no list of its own: the migrated-away source folio
 * is freed as usual and the free_page hook holds it back like any other
 * page a deferred translation may reach, until the flush.  The destination
 * inherits read-only PTEs, so its first write goes through the write_fault
 * hook.
 */
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/page-isolation.h>
#include <linux/rmap.h>
#include <linux/string.h>
#include <linux/vmstat.h>
#define CREATE_TRACE_POINTS
#include "trace.h"
#include "luf.h"

static bool allow_unsafe;
module_param(allow_unsafe, bool, 0444);
MODULE_PARM_DESC(allow_unsafe, "permit debug_break (testing only)");

struct luf_state luf_state = {
	.knob = { [0 ... LUF_NR_KNOBS - 1] = LUF_KNOB_UNSET },
	.ugen = 1,
};

static int luf_debug_break_set(const char *val, const struct kernel_param *kp)
{
	unsigned long v;
	int ret;

	ret = luf_parse_ulong(val, strlen(val), 0, LUF_NR_BREAKS - 1, &v);
	if (ret)
		return ret;
	if (v && !allow_unsafe)
		return -EPERM;
	if (v) {
		pr_warn("luf: debug_break=%lu removes a required TLB flush\n", v);
		add_taint(TAINT_USER, LOCKDEP_STILL_OK);
	}
	WRITE_ONCE(luf_state.debug_break, v);
	return 0;
}

static const struct kernel_param_ops luf_debug_break_ops = {
	.set = luf_debug_break_set,
	.get = param_get_int,
};
module_param_cb(debug_break, &luf_debug_break_ops, &luf_state.debug_break,
		0644);
MODULE_PARM_DESC(debug_break,
		 "testing only, needs allow_unsafe=1: remove one required flush (the modes of include/luf_break_defs.h); 0 none");

static bool luf_hook_defer_ok(enum luf_ctx ctx, int reason)
{
	struct tlbflush_unmap_batch *ro = &current->tlb_ubc_ro;
	bool defer;

	/* inside another TTU_LUF walk of this task: leave @ro alone */
	if (luf_walk_nested(ro))
		return false;
	defer = luf_may_defer(ctx, reason);
	/* arm64: leave the per-page TLBIs out only when deferring */
	luf_arch_set_lazy(ro, defer);
	if (luf_knob(observe))
		defer = luf_observe_defer_ok(ctx, reason);
	if (defer)
		luf_walk_begin(ro, ctx, reason);
	return defer;
}

/*
 * The memcg aging weighs @folio's deferral against (luf_aging_due()): its
 * id, and in @pages its usage, or for the root memcg, which is not
 * charged, the LRU pages of the system (id 0; a memcg being removed has
 * id 0 too).  The folio is locked and
 * isolated: its memcg stays.
 */
static unsigned short luf_aging_memcg(struct folio *folio,
				      unsigned long *pages)
{
	unsigned short id = 0;
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg;

	*pages = 0;
	rcu_read_lock();
	memcg = folio_memcg(folio);
	if (memcg && memcg->memory.parent) {
		id = mem_cgroup_id(memcg);
		*pages = page_counter_read(&memcg->memory);
	}
	rcu_read_unlock();
	if (id)
		return id;
#endif
	*pages = global_node_page_state(NR_INACTIVE_ANON) +
		 global_node_page_state(NR_ACTIVE_ANON) +
		 global_node_page_state(NR_INACTIVE_FILE) +
		 global_node_page_state(NR_ACTIVE_FILE);
	return 0;
}

/* Should reclaim's deferral of @folio have the deferred flushes done now? */
static bool luf_aging_flush_due(struct folio *folio, enum luf_ctx ctx)
{
	unsigned long pages;
	unsigned short id;

	if (!luf_aging_wanted(ctx))
		return false;
	id = luf_aging_memcg(folio, &pages);
	return luf_aging_due(luf_batch_aging_note(id, folio_nr_pages(folio)),
			     pages);
}

/* Flush what is deferred before something could make old content wrong */
static void luf_settle(enum luf_cause cause)
{
	if (!atomic_long_read(&luf_state.pending))
		return;
	/* not here (no consumer calls from such a context today): soon */
	if (!luf_can_flush()) {
		luf_kick(cause);
		return;
	}
	/*
	 * Hooks call this under a page table lock with preemption off: the
	 * invalidation completes here, before the PTE can become writable;
	 * the sweep of the side table (up to max_pending_kb of pfns) waits
	 * for the worker.
	 */
	luf_batch_flush(cause, false);
	if (atomic_long_read(&luf_state.held))
		luf_kick(cause);
	else if (luf_batch_sweep_due())
		luf_kick_sweep();
}

static bool luf_hook_unmap_done(struct folio *folio,
				struct tlbflush_unmap_batch *ro)
{
	unsigned long max_pages;
	unsigned int left_out;

	if (luf_knob(observe))
		luf_observe_unmap_done(folio, ro);
	/*
	 * The core marks @ro writable when a flush of one of its mms was
	 * pending: another walk (MADV_FREE, uffd-wp, NUMA hinting,
	 * mprotect) cleaned or write-protected a PTE and has not flushed
	 * yet, so a CPU may still store through a dirty, writable entry.
	 * Only the flush the core sends now makes the folio's content
	 * final (a migration copies it next).
	 */
	if (ro->writable &&
	    READ_ONCE(luf_state.debug_break) != LUF_BREAK_PENDING) {
		luf_count(LUF_EV_DECLINED_PENDING, 1);
		return false;
	}
	if (!luf_unmap_deferrable(folio, ro))
		return false;
	/* read before the batch moves into the table */
	left_out = luf_arch_pages_left_out(ro);
	max_pages = luf_max_pending_pages();
	if (!luf_batch_defer(folio, ro, max_pages)) {
		/*
		 * Releasing everything makes room, unless the folio alone is
		 * beyond the bound: then it would only flush what others
		 * deferred, at every such unmap.
		 */
		if (folio_nr_pages(folio) <= max_pages)
			luf_kick(LUF_CAUSE_THRESHOLD);
		return false;
	}
	luf_count_deferred(folio, ro->luf_ctx, ro->luf_reason);
	luf_count(LUF_EV_TLBI_AVOIDED, left_out);
	/*
	 * An isolated pageblock (alloc_contig_range(), offlining) must not
	 * get held pages after its pages_wanted hook released them all, or
	 * test_pages_isolated() fails with -EBUSY.  luf_folio_deferrable()
	 * refused the folio if its pageblock was isolated then; if the
	 * isolation came between that check and the deferral, settle now
	 * what the hook may not have seen.  Pairs with smp_mb() in
	 * luf_hook_pages_wanted(): either it sees this deferral pending or
	 * this sees the isolation.
	 */
	smp_mb();
	if (is_migrate_isolate_page(&folio->page) &&
	    READ_ONCE(luf_state.debug_break) != LUF_BREAK_ISOLATE) {
		luf_settle(LUF_CAUSE_ISOLATE);
		return true;
	}
	if (luf_aging_flush_due(folio, ro->luf_ctx))
		luf_kick(LUF_CAUSE_AGING);
	else
		luf_kick(LUF_CAUSE_TIMER);
	return true;
}

/*
 * A source whose unmap was deferred is not kept here with a reference:
 * the core frees it as usual and the free_page hook holds the page back
 * like every page a deferred translation may reach (one holding
 * mechanism, one bound, one set of release triggers for LUF and MIGRC).
 * Holding it here instead would keep it charged to its memcg, since
 * __folio_put() uncharges before the page reaches free_pages_prepare(),
 * so a memcg at its limit could fail where stock 6.12 succeeds; the page
 * held at free time is uncharged.  Here the source is only counted.
 */
static void luf_hook_migrate_src_done(struct folio *src, struct folio *dst,
				      int reason)
{
	if (luf_range_pending(folio_pfn(src), folio_order(src))) {
		luf_count(LUF_EV_MIGRC_RETAINED, 1);
		trace_luf_migrc_retain(folio_pfn(src), folio_pfn(dst), reason);
	}
}

static bool luf_hook_free_page(struct page *page, unsigned int order)
{
	if (!atomic_long_read(&luf_state.pending))
		return false;
	return luf_hold_page(page, order);
}

/*
 * May a deferred translation in @vma show data that a write through it
 * would change?  Only if a folio of its page cache, or of its anon_vma
 * tree, is deferred and not flushed yet.
 */
static bool luf_vma_pending(struct vm_area_struct *vma)
{
	if (vma->vm_file && luf_key_pending(vma->vm_file->f_mapping))
		return true;
	return vma->anon_vma && luf_key_pending(READ_ONCE(vma->anon_vma->root));
}

/*
 * A PTE of @vma may become writable, or a page be mapped into it where it
 * can be written without another fault: luf_write_fault_scope() (policy.c)
 * says whether that must flush and how widely, given whether a PTE built
 * from vm_page_prot is writable (no write notification).  vm_page_prot
 * changes only with the mmap lock held for writing, which the faults
 * exclude.  mprotect() (@flags 0) calls the hook right after storing the
 * new one, while a migration that deferred may be about to read it in
 * remove_migration_pte() (no mmap lock there): a full barrier between
 * that store and the pending check below, against the migration's between
 * recording its deferral and reading vm_page_prot (folio_ref_freeze() in
 * __folio_migrate_mapping(), a fully ordered cmpxchg, for the page-cache
 * folios that matter), means that one of the two sees the other (a
 * writable destination PTE calls this hook).  Other callers with @flags 0
 * (a fault without FAULT_FLAG_* set) only pay for a barrier they do not need.
 */
static void luf_hook_write_fault(struct vm_area_struct *vma,
				 unsigned long addr, unsigned int flags)
{
	enum luf_scope scope;
	bool prot_write;

	if (!flags) {
		/* mprotect()'s vm_page_prot store before the check: see above */
		smp_mb();
	}
	prot_write = pte_write(pfn_pte(0, READ_ONCE(vma->vm_page_prot)));
	scope = luf_write_fault_scope(vma->vm_flags, flags, prot_write);
	if (scope == LUF_SCOPE_NONE)
		return;
	if (READ_ONCE(luf_state.debug_break) == LUF_BREAK_FAULT)
		return;
	if (scope == LUF_SCOPE_MM) {
		/*
		 * Whatever VMA of the mm the deferred page was in (UFFDIO_MOVE
		 * moves swap entries between two of them): the mm's own count
		 * of batched unmaps decides, as for munmap().
		 */
		if (atomic_long_read(&luf_state.pending)) {
			luf_count(LUF_EV_MM_FLUSHES, 1);
			flush_tlb_batched_pending(vma->vm_mm);
		}
		return;
	}
	if (luf_vma_pending(vma))
		luf_settle(LUF_CAUSE_WRITE_FAULT);
}

/*
 * The page cache of @mapping changes (before the change; after a
 * truncation or a direct write, right after it).  A stale read-only
 * translation shows the content as it was when the folio was unmapped;
 * writes, truncation (hole punching too) and invalidation after the
 * backing store changed make that wrong.  So does remove_mapping(): besides
 * eviction it is how splice(SPLICE_F_MOVE) steals a page-cache page for
 * another file (FUSE), which then writes it in place without freeing it.
 * Only page caches with deferred folios matter; then everything deferred
 * is flushed.
 */
static void luf_hook_file_change(struct address_space *mapping)
{
	if (!luf_key_pending(mapping))
		return;
	if (READ_ONCE(luf_state.debug_break) != LUF_BREAK_WRITE)
		luf_settle(LUF_CAUSE_FILE_CHANGE);
}

/* Release held pages if the allocation may flush (luf_may_flush_alloc()) */
static bool luf_hook_zone_low(gfp_t gfp)
{
	if (!atomic_long_read(&luf_state.held))
		return false;
	if (!luf_may_flush_alloc(gfp)) {
		luf_kick(LUF_CAUSE_ZONE_LOW);
		return false;
	}
	return luf_release(LUF_CAUSE_ZONE_LOW) > 0;
}

/*
 * A held page is neither free nor in use: the isolation of a range (or
 * memory failure handling) would wait forever for it.
 */
static void luf_hook_pages_wanted(void)
{
	/* Pairs with smp_mb() in luf_hook_unmap_done() */
	smp_mb();
	if (!atomic_long_read(&luf_state.pending) && !luf_held_now())
		return;
	if (READ_ONCE(luf_state.debug_break) == LUF_BREAK_ISOLATE)
		return;
	/* every caller runs in task context with IRQs on: not taken */
	if (!luf_can_flush()) {
		luf_kick(LUF_CAUSE_ISOLATE);
		return;
	}
	luf_release_all(LUF_CAUSE_ISOLATE);
}

/*
 * has_unmovable_pages() found a compound page neither on the LRU nor
 * movable.  With no reference it is held here, being freed, or frozen for
 * a split or a migration: none of them stays, and the pages_wanted call
 * that ends the isolation releases what is held, whether it was held
 * before the isolation began or while it scanned.  Answered only while
 * something is deferred, held or being released, so that without LUF the
 * core decides alone; a wrong "may be held" only leaves the verdict to
 * test_pages_isolated(), as has_unmovable_pages() allows.
 */
static bool luf_hook_page_held(struct page *page)
{
	if (READ_ONCE(luf_state.debug_break) == LUF_BREAK_ISOLATE ||
	    page_ref_count(compound_head(page)))
		return false;
	return atomic_long_read(&luf_state.pending) || luf_holding();
}

static void luf_hook_batch_flush(void)
{
	/* try_to_unmap_flush() resets luf_ro and luf_other after the flush */
	if (luf_knob(observe))
		luf_observe_flush(&current->tlb_ubc);
}

static void luf_hook_cpu_flush(bool done)
{
	luf_ugen_cpu_flush(done);
}

/* Nothing defers any more; a release under way may still put pages back */
static void luf_hook_drain(void)
{
	luf_release_all(LUF_CAUSE_UNLOAD);
}

/* Every hook of linux/luf_hook_defs.h is luf_hook_<name>; set before use */
static struct luf_hook_ops luf_ops __ro_after_init = {
	.drain = luf_hook_drain,
};

/* Set up in this order, torn down in the reverse one */
static const struct {
	int (*init)(void);
	void (*exit)(void);
} luf_parts[] = {
	{ luf_batch_init, luf_batch_exit },
	{ luf_hold_init, luf_hold_exit },
	{ luf_sysfs_init, luf_sysfs_exit },
	{ luf_debugfs_init, luf_debugfs_exit },
};

static void luf_parts_exit(int n)
{
	while (n--)
		luf_parts[n].exit();
}

static int __init luf_init(void)
{
	int i, ret;

	luf_knobs_init();
#define LUF_HOOK(name, ...)	(luf_ops.on_##name = luf_hook_##name)
#include <linux/luf_hook_defs.h>
	for (i = 0; i < ARRAY_SIZE(luf_parts); i++) {
		ret = luf_parts[i].init();
		if (ret)
			goto err;
	}
	ret = luf_hooks_register(&luf_ops);
	if (ret)
		goto err;
	pr_info("luf: registered\n");
	return 0;
err:
	luf_parts_exit(i);
	return ret;
}

/*
 * luf_hooks_unregister() drains: nothing is deferred or held after it, and
 * nothing can be any more.
 */
static void __exit luf_exit(void)
{
	luf_hooks_unregister(&luf_ops);
	luf_parts_exit(ARRAY_SIZE(luf_parts));
	pr_info("luf: unregistered\n");
}

module_init(luf_init);
module_exit(luf_exit);
MODULE_DESCRIPTION("Lazy unmap flush (LUF) and migration read copy (MIGRC)");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(LUF);
