// SPDX-License-Identifier: GPL-2.0
/*
 * x86 batch helpers: a batch is the cpumask of every mm it unmapped from,
 * and its flush is one shootdown IPI round to the remote CPUs in it.
 */
#include <linux/cpumask.h>
#include <linux/smp.h>
#include "luf.h"

/**
 * luf_arch_batch_remote_cpus - CPUs a flush of @ubc would interrupt
 * @ubc: an unmap batch about to be flushed
 *
 * Context: preemption disabled.
 * Return: the number of CPUs in the batch other than this one.
 */
unsigned int luf_arch_batch_remote_cpus(const struct tlbflush_unmap_batch *ubc)
{
	const struct cpumask *mask = &ubc->arch.cpumask;

	return cpumask_weight(mask) - cpumask_test_cpu(smp_processor_id(), mask);
}

/*
 * The fold and clear of the kernel's x86 batch are out of a module's reach
 * (asm/tlbflush.h keeps them from modules): the same cpumask operations.
 */

/**
 * luf_arch_fold - add the CPUs of @src to @dst
 * @dst: accumulating batch
 * @src: batch to add
 */
void luf_arch_fold(struct arch_tlbflush_unmap_batch *dst,
		   struct arch_tlbflush_unmap_batch *src)
{
	cpumask_or(&dst->cpumask, &dst->cpumask, &src->cpumask);
}

/**
 * luf_arch_clear - empty a batch
 * @b: the batch
 */
void luf_arch_clear(struct arch_tlbflush_unmap_batch *b)
{
	cpumask_clear(&b->cpumask);
}

/* x86 batches are never lazy: their cost is IPIs, which a flush sends */
void luf_arch_set_lazy(struct tlbflush_unmap_batch *ro, bool lazy)
{
}

unsigned int luf_arch_pages_left_out(const struct tlbflush_unmap_batch *ro)
{
	return 0;
}

unsigned int luf_arch_flush_tlbis(const struct arch_tlbflush_unmap_batch *b)
{
	return 0;
}

/**
 * luf_arch_prune - drop the CPUs that fully flushed since @gen closed
 * @b: batch of generation @gen
 * @gen: its generation
 *
 * Return: number of CPUs dropped.
 */
unsigned int luf_arch_prune(struct arch_tlbflush_unmap_batch *b, u32 gen)
{
	return luf_ugen_prune(&b->cpumask, gen);
}

/**
 * luf_arch_may_take - can LUF take over the flush of @ro?
 * @ro: the read-only batch of an unmapped folio
 *
 * Return: always true on x86, where adding to a batch sends nothing.
 */
bool luf_arch_may_take(const struct tlbflush_unmap_batch *ro)
{
	return true;
}

/**
 * luf_arch_empty - does flushing @b do nothing?
 * @b: a batch about to be flushed
 *
 * Return: true if no CPU is left to interrupt.
 */
bool luf_arch_empty(const struct arch_tlbflush_unmap_batch *b)
{
	return cpumask_empty(&b->cpumask);
}

/**
 * luf_arch_mask - the CPUs a flush of @b interrupts
 * @b: the batch
 *
 * Return: the batch's cpumask.
 */
struct cpumask *luf_arch_mask(struct arch_tlbflush_unmap_batch *b)
{
	return &b->cpumask;
}
