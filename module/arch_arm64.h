/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 batch helpers.  Stock arm64 broadcasts a TLBI VALE1IS per page as a
 * PTE joins a batch and only waits with a DSB at flush time; no remote CPU
 * is interrupted, the broadcasts are the cost.  When LUF defers, its
 * read-only batch is lazy (kernel-hooks 0004): the per-page TLBIs are left
 * out, the batch records the ASIDs, and the deferred flush sends one TLBI
 * ASIDE1IS per ASID (or one VMALLE1IS) and a DSB.  There is no cpumask
 * (luf.h's defaults: no remote CPUs, no mask, the flush broadcasts).
 */
#ifndef _LUF_ARCH_ARM64_H
#define _LUF_ARCH_ARM64_H

#include <linux/sched.h>
#include <asm/tlbflush.h>

/**
 * luf_arch_set_lazy - have the read-only batch leave per-page TLBIs out
 * @ro: the current task's read-only batch
 * @lazy: true while LUF defers this reclaim or migration
 *
 * A lazy batch that LUF does not take after all is folded into the
 * task's batch, whose flush then invalidates the recorded ASIDs.
 */
static inline void luf_arch_set_lazy(struct tlbflush_unmap_batch *ro, bool lazy)
{
	ro->arch.lazy = lazy;
}

#define luf_arch_set_lazy luf_arch_set_lazy

/**
 * luf_arch_pages_left_out - per-page TLBIs a lazy batch did not send
 * @ro: a read-only batch
 *
 * Return: the number of PTEs added to @ro since it was last cleared.
 */
static inline unsigned int
luf_arch_pages_left_out(const struct tlbflush_unmap_batch *ro)
{
	return ro->arch.nr_pages;
}

#define luf_arch_pages_left_out luf_arch_pages_left_out

/**
 * luf_arch_flush_tlbis - broadcast TLBIs a flush of @b sends
 * @b: a batch about to be flushed
 *
 * Return: one per recorded ASID, or one for everything.
 */
static inline unsigned int
luf_arch_flush_tlbis(const struct arch_tlbflush_unmap_batch *b)
{
	return b->nr_asids > ARM64_TLBBATCH_ASIDS ? 1 : b->nr_asids;
}

#define luf_arch_flush_tlbis luf_arch_flush_tlbis

/**
 * luf_arch_may_take - can LUF take over the flush of @ro?
 * @ro: the read-only batch of an unmapped folio
 *
 * Return: true if @ro is lazy: its per-page TLBIs were left out and its
 * ASIDs recorded.  A batch that was not lazy (the knob changed in
 * between) has TLBIs in flight that only the core's DSB waits for.
 */
static inline bool luf_arch_may_take(const struct tlbflush_unmap_batch *ro)
{
	return ro->arch.lazy;
}

#define luf_arch_may_take luf_arch_may_take

/**
 * luf_arch_empty - does flushing @b do nothing?
 * @b: a batch about to be flushed
 *
 * Return: true if no ASID is recorded (every entry was pruned).
 */
static inline bool luf_arch_empty(const struct arch_tlbflush_unmap_batch *b)
{
	return !b->nr_asids;
}

/*
 * ptep_clear_flush_young() invalidates the page's translation when it
 * clears the accessed bit (__flush_tlb_page_nosync()), so the next access
 * walks and sets it again: aging needs no flush from LUF.  The multi-gen
 * LRU's walks clear the bit without (ptep_test_and_clear_young()).
 */
static inline bool luf_arch_aging_flushes(void)
{
	return !IS_ENABLED(CONFIG_LRU_GEN);
}

#define luf_arch_aging_flushes luf_arch_aging_flushes

#endif /* _LUF_ARCH_ARM64_H */
