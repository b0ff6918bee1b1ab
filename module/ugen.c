// SPDX-License-Identifier: GPL-2.0
/*
 * ugen: generations of deferred flushes.
 *
 * Every deferred unmap joins the open luf_batch entry, whose generation is
 * luf_state.ugen.  Closing the entry (to flush it, or because it is full)
 * moves luf_state.ugen on.  Each CPU records, just before it flushes its
 * whole TLB, the newest generation that flush covers: every entry closed
 * before the flush began, that is luf_state.ugen - 1 read before the
 * flush.  A CPU whose record is at or past an entry's generation needs no
 * IPI for it (luf_ugen_prune(), which also holds the rule for batches
 * without a cpumask).
 *
 * Generations are u32 and compared wrap-safely; 0 is never handed out
 * (luf_gen_next()) and means "no record".  A record older than
 * LUF_GEN_HORIZON is dropped at the next flush (luf_ugen_expire()), so it
 * cannot look recent again when the counter wraps: between two flushes
 * luf_state.ugen moves by at most LUF_NR_BATCH.
 */
#include <linux/cpumask.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include "luf.h"

/* Test hook: start near the wrap to run the suite across it. */
static uint gen_start = 1;
module_param(gen_start, uint, 0444);
MODULE_PARM_DESC(gen_start, "first generation (1-4294967295; testing the u32 wrap)");

static DEFINE_PER_CPU(u32, luf_cpu_flushed_gen);

/* The generation this CPU's flush in progress will cover, 0: none */
static DEFINE_PER_CPU(u32, luf_cpu_flush_gen);

/**
 * luf_ugen_cpu_flush - this CPU flushes its whole TLB
 * @done: false just before the flush, true just after it
 *
 * The generation is read before the flush, so every entry it covers was
 * closed (its PTEs cleared) before the flush began; it is recorded only
 * after the flush, so no CPU skips this one while its TLB may still hold
 * an entry (an NMI in between would otherwise see it).
 *
 * Context: any, including hardirq, with IRQs disabled between the calls.
 */
void luf_ugen_cpu_flush(bool done)
{
	u32 gen;

	if (!done) {
		/*
		 * Acquire orders the PTE clears of the closed entries before
		 * the flush (x86: CR3 writes serialise; arm64: the DSB of
		 * local_flush_tlb_all()).
		 */
		gen = smp_load_acquire(&luf_state.ugen) - 1;
		this_cpu_write(luf_cpu_flush_gen, gen ?: U32_MAX);
		return;
	}
	gen = this_cpu_read(luf_cpu_flush_gen);
	if (!gen)
		return;		/* loaded between the two calls */
	this_cpu_write(luf_cpu_flush_gen, 0);
	/* after the flush: pairs with the reads of luf_ugen_prune() */
	smp_wmb();
	this_cpu_write(luf_cpu_flushed_gen, gen);
}

/* Drop the CPUs in @mask that flushed since @gen was closed; how many */
static unsigned int luf_ugen_prune_mask(struct cpumask *mask, u32 gen)
{
	u32 now = READ_ONCE(luf_state.ugen);
	unsigned int cpu, pruned = 0;

	for_each_cpu(cpu, mask) {
		if (luf_gen_covers(READ_ONCE(per_cpu(luf_cpu_flushed_gen, cpu)),
				   gen, now)) {
			cpumask_clear_cpu(cpu, mask);
			pruned++;
		}
	}
	return pruned;
}

/**
 * luf_ugen_all_flushed - has every CPU flushed its TLB since @gen closed?
 * @gen: a closed generation
 *
 * Return: true if every possible CPU's record covers @gen.  An offline CPU
 * counts only by its record: arm64 and x86 also flush when a CPU comes up,
 * but that is not recorded.
 */
bool luf_ugen_all_flushed(u32 gen)
{
	u32 now = READ_ONCE(luf_state.ugen);
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (!luf_gen_covers(READ_ONCE(per_cpu(luf_cpu_flushed_gen, cpu)),
				    gen, now))
			return false;
	return true;
}

/**
 * luf_ugen_prune - drop from @b what CPU flush records show is gone
 * @b: the batch of a closed table entry, about to be flushed
 * @gen: its generation
 *
 * A batch with a cpumask (x86: the CPUs a flush interrupts) loses every
 * CPU whose record covers @gen.  A batch without one (arm64: broadcast
 * TLBIs by ASID) cannot tell which CPUs cache its entries, but an ASID
 * rollover makes every CPU invalidate its whole local TLB before it next
 * switches mm (cpu_flush hook).  Once every CPU has done so since @gen
 * closed, no TLB holds an entry of @b and it needs no broadcast at all.
 *
 * Return: number of CPUs dropped; for a batch without a cpumask, every
 * possible CPU or none.
 */
unsigned int luf_ugen_prune(struct arch_tlbflush_unmap_batch *b, u32 gen)
{
	struct cpumask *mask = luf_arch_mask(b);

	if (mask)
		return luf_ugen_prune_mask(mask, gen);
	if (luf_arch_empty(b) || !luf_ugen_all_flushed(gen))
		return 0;
	luf_arch_clear(b);
	return num_possible_cpus();
}

/**
 * luf_ugen_expire - drop every CPU record older than LUF_GEN_HORIZON
 *
 * Called on every flush.  A CPU that records a flush meanwhile keeps its
 * new record.
 */
void luf_ugen_expire(void)
{
	u32 now = READ_ONCE(luf_state.ugen);
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		u32 *p = per_cpu_ptr(&luf_cpu_flushed_gen, cpu);
		u32 rec = READ_ONCE(*p);

		if (rec && now - rec >= LUF_GEN_HORIZON)
			cmpxchg(p, rec, 0);
	}
}

/**
 * luf_ugen_reset - forget every CPU's record (module load)
 *
 * Return: the first generation, from the gen_start parameter.
 */
u32 luf_ugen_reset(void)
{
	unsigned int cpu;

	WRITE_ONCE(luf_state.ugen, gen_start ?: 1);
	for_each_possible_cpu(cpu)
		per_cpu(luf_cpu_flushed_gen, cpu) = 0;
	return luf_state.ugen;
}

#ifdef LUF_KUNIT
#include "tests/ugen-kunit.h"
#endif
