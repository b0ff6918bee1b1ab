/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86 batch helpers: a batch is the cpumask of every mm it unmapped from,
 * and its flush is one shootdown IPI round to the remote CPUs in it.
 * Included by luf.h; the defaults there cover the rest (x86 batches are
 * never lazy: their cost is IPIs, which a flush sends).
 */
#ifndef _LUF_ARCH_X86_H
#define _LUF_ARCH_X86_H

#include <linux/cpumask.h>
#include <linux/smp.h>

/**
 * luf_arch_batch_remote_cpus - CPUs a flush of @ubc would interrupt
 * @ubc: an unmap batch about to be flushed
 *
 * Context: preemption disabled.
 * Return: the number of CPUs in the batch other than this one.
 */
static inline unsigned int
luf_arch_batch_remote_cpus(const struct tlbflush_unmap_batch *ubc)
{
	const struct cpumask *mask = &ubc->arch.cpumask;

	return cpumask_weight(mask) - cpumask_test_cpu(smp_processor_id(), mask);
}

#define luf_arch_batch_remote_cpus luf_arch_batch_remote_cpus

/*
 * An empty batch: no CPU.  A bitmap clear, since a memset() on the path
 * where luf_arch_mask() returned NULL makes the compiler warn.
 */
static inline void luf_arch_clear(struct arch_tlbflush_unmap_batch *b)
{
	cpumask_clear(&b->cpumask);
}

#define luf_arch_clear luf_arch_clear

/**
 * luf_arch_empty - does flushing @b do nothing?
 * @b: a batch about to be flushed
 *
 * Return: true if no CPU is left to interrupt.
 */
static inline bool luf_arch_empty(const struct arch_tlbflush_unmap_batch *b)
{
	return cpumask_empty(&b->cpumask);
}

/**
 * luf_arch_mask - the CPUs a flush of @b interrupts
 * @b: the batch
 *
 * Return: the batch's cpumask.
 */
static inline struct cpumask *luf_arch_mask(struct arch_tlbflush_unmap_batch *b)
{
	return &b->cpumask;
}

#define luf_arch_mask luf_arch_mask

#endif /* _LUF_ARCH_X86_H */
