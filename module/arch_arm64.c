// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 batch helpers.  Stock arm64 broadcasts a TLBI VALE1IS per page as a
 * PTE joins a batch and only waits with a DSB at flush time; no remote CPU
 * is interrupted, the broadcasts are the cost.  When LUF defers, its
 * read-only batch is lazy (kernel-hooks 0004): the per-page TLBIs are left
 * out, the batch records the ASIDs, and the deferred flush sends one TLBI
 * ASIDE1IS per ASID (or one VMALLE1IS) and a DSB.
 */
#include <linux/sched.h>
#include <asm/tlbflush.h>
#include "luf.h"

/**
 * luf_arch_batch_remote_cpus - CPUs a flush of @ubc would interrupt
 * @ubc: an unmap batch about to be flushed
 *
 * Return: always 0 on arm64, which sends no flush IPIs.
 */
unsigned int luf_arch_batch_remote_cpus(const struct tlbflush_unmap_batch *ubc)
{
	return 0;
}

/**
 * luf_arch_set_lazy - have the read-only batch leave per-page TLBIs out
 * @ro: the current task's read-only batch
 * @lazy: true while LUF defers this reclaim or migration
 *
 * A lazy batch that LUF does not take after all is folded into the
 * task's batch, whose flush then invalidates the recorded ASIDs.
 */
void luf_arch_set_lazy(struct tlbflush_unmap_batch *ro, bool lazy)
{
	ro->arch.lazy = lazy;
}

/**
 * luf_arch_pages_left_out - per-page TLBIs a lazy batch did not send
 * @ro: a read-only batch
 *
 * Return: the number of PTEs added to @ro since it was last cleared.
 */
unsigned int luf_arch_pages_left_out(const struct tlbflush_unmap_batch *ro)
{
	return ro->arch.nr_pages;
}

/**
 * luf_arch_flush_tlbis - broadcast TLBIs a flush of @b sends
 * @b: a batch about to be flushed
 *
 * Return: one per recorded ASID, or one for everything.
 */
unsigned int luf_arch_flush_tlbis(const struct arch_tlbflush_unmap_batch *b)
{
	return b->nr_asids > ARM64_TLBBATCH_ASIDS ? 1 : b->nr_asids;
}

/**
 * luf_arch_fold - add the ASIDs (and left-out pages) of @src to @dst
 * @dst: accumulating batch
 * @src: batch to add
 */
void luf_arch_fold(struct arch_tlbflush_unmap_batch *dst,
		   struct arch_tlbflush_unmap_batch *src)
{
	arch_tlbbatch_fold(dst, src);
}

/**
 * luf_arch_clear - empty a batch
 * @b: the batch
 */
void luf_arch_clear(struct arch_tlbflush_unmap_batch *b)
{
	arch_tlbbatch_clear(b);
}

/**
 * luf_arch_may_take - can LUF take over the flush of @ro?
 * @ro: the read-only batch of an unmapped folio
 *
 * Return: true if @ro is lazy: its per-page TLBIs were left out and its
 * ASIDs recorded.  A batch that was not lazy (the knob changed in
 * between) has TLBIs in flight that only the core's DSB waits for.
 */
bool luf_arch_may_take(const struct tlbflush_unmap_batch *ro)
{
	return ro->arch.lazy;
}

/**
 * luf_arch_prune - drop what is provably gone from @b
 * @b: a closed table entry about to be flushed
 * @gen: its generation
 *
 * Nothing tells which CPUs cache an ASID, but an ASID rollover makes every
 * CPU invalidate its whole local TLB before it next switches mm (cpu_flush
 * hook).  Once every CPU has done so since @gen closed, no TLB holds an
 * entry of @b and it needs no broadcast at all.
 *
 * Return: number of CPUs that made the broadcast unnecessary, or 0.
 */
unsigned int luf_arch_prune(struct arch_tlbflush_unmap_batch *b, u32 gen)
{
	if (!b->nr_asids || !luf_ugen_all_flushed(gen))
		return 0;
	arch_tlbbatch_clear(b);
	return num_possible_cpus();
}

/**
 * luf_arch_empty - does flushing @b do nothing?
 * @b: a batch about to be flushed
 *
 * Return: true if no ASID is recorded (every entry was pruned).
 */
bool luf_arch_empty(const struct arch_tlbflush_unmap_batch *b)
{
	return !b->nr_asids;
}

/* No cpumask: the batch flush broadcasts. */
struct cpumask *luf_arch_mask(struct arch_tlbflush_unmap_batch *b)
{
	return NULL;
}
