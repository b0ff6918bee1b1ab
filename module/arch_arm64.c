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
