// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 batch helpers.  arm64 broadcasts a TLBI per page when it adds a
 * PTE to a batch and only waits with a DSB at flush time, so a flush
 * interrupts no remote CPU.
 */
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

/* arm64 batches carry no state: the TLBIs went out at unmap time. */
void luf_arch_fold(struct arch_tlbflush_unmap_batch *dst,
		   const struct arch_tlbflush_unmap_batch *src)
{
}

void luf_arch_clear(struct arch_tlbflush_unmap_batch *b)
{
}

unsigned int luf_arch_prune(struct arch_tlbflush_unmap_batch *b, u32 gen)
{
	return 0;
}

struct cpumask *luf_arch_mask(struct arch_tlbflush_unmap_batch *b)
{
	return NULL;
}
