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
