// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics of luf.ko: the per-CPU counters behind /sys/kernel/debug/luf/
 * (debugfs.c), their names, and what observe mode counts.
 *
 * Observe mode: what would LUF save here?
 *
 * While /sys/kernel/mm/luf/observe is 1, reclaim and migration unmap with
 * TTU_LUF so the core separates read-only PTEs from the rest.  The counters
 * below record which folios were unmapped with every PTE read-only and
 * clean, and which batched flushes still carried nothing else (rounds, and
 * remote CPUs, a deferring LUF would spare).
 *
 * Counters are per-CPU and summed on read; a sum read while a workload
 * runs may be momentarily ahead of a counter read before it.
 */
#include <linux/bits.h>
#include <linux/percpu.h>
#include <linux/stddef.h>
#include "luf.h"

DEFINE_PER_CPU(struct luf_stats, luf_stats);

/* The names of the lines of /sys/kernel/debug/luf/stat (luf_stat_defs.h) */
const char * const luf_ctx_name[] = { "reclaim", "migrate" };

static_assert(ARRAY_SIZE(luf_ctx_name) == LUF_CTX_NR);

const char * const luf_path_stat_name[] = {
#define LUF_PATH_STAT(id, name)	\
	[LUF_PS_##id] = #name,
#include "luf_stat_defs.h"
};

/*
 * Same spelling as the migrate tracepoints: a copy of mm/debug.c's
 * migrate_reason_names[], which is not exported.
 */
const char * const luf_reason_name[MR_TYPES] = {
	[MR_COMPACTION] = "compaction",
	[MR_MEMORY_FAILURE] = "memory_failure",
	[MR_MEMORY_HOTPLUG] = "memory_hotplug",
	[MR_SYSCALL] = "syscall_or_cpuset",
	[MR_MEMPOLICY_MBIND] = "mempolicy_mbind",
	[MR_NUMA_MISPLACED] = "numa_misplaced",
	[MR_CONTIG_RANGE] = "contig_range",
	[MR_LONGTERM_PIN] = "longterm_pin",
	[MR_DEMOTION] = "demotion",
	[MR_DAMON] = "damon",
};

const char * const luf_reason_stat_name[] = {
#define LUF_REASON_STAT(id, name)	\
	[LUF_RS_##id] = #name,
#include "luf_stat_defs.h"
};

const char * const luf_event_name[] = {
#define LUF_EVENT(id, name)	\
	[LUF_EV_##id] = #name,
#include "luf_stat_defs.h"
};

const char * const luf_cause_name[] = {
#define LUF_CAUSE(id, name)	\
	[LUF_CAUSE_##id] = #name,
#include "luf_stat_defs.h"
};

/**
 * luf_stat_sum - sum one counter over all CPUs
 * @offset: offset of the u64 inside struct luf_stats
 *
 * Return: the sum.
 */
u64 luf_stat_sum(size_t offset)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(u64 *)((char *)per_cpu_ptr(&luf_stats, cpu) + offset);
	return sum;
}

static bool luf_reason_ok(int reason)
{
	return reason >= 0 && reason < MR_TYPES;
}

/*
 * Hooks run with preemption disabled: the per-CPU ops below need no guard.
 */

/**
 * luf_observe_defer_ok - count an unmap that reclaim or migration begins
 * @ctx: reclaim or migration
 * @reason: the migrate_reason of a migration
 *
 * Return: true: observe mode has every such unmap separate its read-only
 * PTEs.
 */
bool luf_observe_defer_ok(enum luf_ctx ctx, int reason)
{
	__this_cpu_inc(luf_stats.path[ctx][LUF_PS_UNMAPS]);
	if (ctx == LUF_CTX_MIGRATE && luf_reason_ok(reason))
		__this_cpu_inc(luf_stats.reason[reason][LUF_RS_UNMAPS]);
	return true;
}

/**
 * luf_observe_unmap_done - count a folio unmapped with every PTE read-only
 * @folio: the folio
 * @ro: its read-only batch
 *
 * Large folios are counted apart too, and pages as well as folios: how
 * much of what could be deferred was large.
 */
void luf_observe_unmap_done(struct folio *folio,
			    const struct tlbflush_unmap_batch *ro)
{
	unsigned int ctx = ro->luf_ctx;

	if (WARN_ON_ONCE(ctx >= LUF_CTX_NR))
		return;
	__this_cpu_inc(luf_stats.path[ctx][LUF_PS_RO_FOLIOS]);
	__this_cpu_add(luf_stats.path[ctx][LUF_PS_RO_PAGES],
		       folio_nr_pages(folio));
	if (folio_test_large(folio))
		__this_cpu_inc(luf_stats.path[ctx][LUF_PS_RO_LARGE]);
	if (ctx == LUF_CTX_MIGRATE && luf_reason_ok(ro->luf_reason))
		__this_cpu_inc(luf_stats.reason[ro->luf_reason][LUF_RS_RO_FOLIOS]);
}

/**
 * luf_observe_flush - count a batched flush that covers read-only entries
 * @ubc: the batch about to be flushed
 */
void luf_observe_flush(const struct tlbflush_unmap_batch *ubc)
{
	unsigned int cpus = 0;
	unsigned int ctx;

	if (!ubc->luf_ro)
		return;
	if (!ubc->luf_other)
		cpus = luf_arch_batch_remote_cpus(ubc);
	for (ctx = 0; ctx < LUF_CTX_NR; ctx++) {
		if (!(ubc->luf_ro & BIT(ctx)))
			continue;
		__this_cpu_inc(luf_stats.path[ctx][LUF_PS_FLUSH_ROUNDS]);
		if (ubc->luf_other)
			continue;
		__this_cpu_inc(luf_stats.path[ctx][LUF_PS_FLUSH_ROUNDS_RO_ONLY]);
		__this_cpu_add(luf_stats.path[ctx][LUF_PS_FLUSH_CPUS], cpus);
	}
}

/**
 * luf_count_deferred - count a folio whose flush was deferred
 * @folio: the folio
 * @ctx: reclaim or migration
 * @reason: the migrate_reason of a migration
 *
 * Deferral counters run whether or not observe is on: folios, pages, and
 * folios by order.
 */
void luf_count_deferred(struct folio *folio, enum luf_ctx ctx, int reason)
{
	unsigned int order = folio_order(folio);

	luf_count(LUF_EV_DEFERRED, 1);
	__this_cpu_inc(luf_stats.path[ctx][LUF_PS_DEFERRED]);
	__this_cpu_add(luf_stats.path[ctx][LUF_PS_DEFERRED_PAGES],
		       folio_nr_pages(folio));
	if (!WARN_ON_ONCE(order >= LUF_NR_ORDERS))
		__this_cpu_inc(luf_stats.order[order]);
	if (ctx == LUF_CTX_MIGRATE && luf_reason_ok(reason))
		__this_cpu_inc(luf_stats.reason[reason][LUF_RS_DEFERRED]);
}
