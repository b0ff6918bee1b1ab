/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lines of /sys/kernel/debug/luf/stat, in their order in the file,
 * included where a list of them is made (no include guard).  A user
 * defines the macros it needs; the others expand to nothing.
 *
 *   LUF_PATH_STAT(ID, name)	<path>_<name>, for reclaim, then migrate
 *   LUF_REASON_STAT(ID, name)	migrate_<reason>_<name>, per migrate reason
 *   LUF_EVENT(ID, name)	<name>; deferred_order<N> follow the events
 *   LUF_CAUSE(ID, name)	forced_<name> for each, then released_<name>
 *   LUF_GAUGE(name, field)	<name>: luf_state.<field> now, not a count
 *
 * ID makes the enum constant: LUF_PS_ID, LUF_RS_ID, LUF_EV_ID,
 * LUF_CAUSE_ID (include/luf.h).  Documentation/ABI/testing/debugfs-luf
 * describes every line; scripts/style.sh checks it against this list.
 */
#ifndef LUF_PATH_STAT
#define LUF_PATH_STAT(...)
#endif
#ifndef LUF_REASON_STAT
#define LUF_REASON_STAT(...)
#endif
#ifndef LUF_EVENT
#define LUF_EVENT(...)
#endif
#ifndef LUF_CAUSE
#define LUF_CAUSE(...)
#endif
#ifndef LUF_GAUGE
#define LUF_GAUGE(...)
#endif

LUF_PATH_STAT(UNMAPS, unmaps)
LUF_PATH_STAT(RO_FOLIOS, ro_folios)
LUF_PATH_STAT(FLUSH_ROUNDS, flush_rounds)
LUF_PATH_STAT(FLUSH_ROUNDS_RO_ONLY, flush_rounds_ro_only)
LUF_PATH_STAT(FLUSH_CPUS, flush_cpus)
LUF_PATH_STAT(DEFERRED, deferred)
LUF_PATH_STAT(RO_LARGE, ro_large_folios)
LUF_PATH_STAT(RO_PAGES, ro_pages)
LUF_PATH_STAT(DEFERRED_PAGES, deferred_pages)

LUF_REASON_STAT(UNMAPS, unmaps)
LUF_REASON_STAT(RO_FOLIOS, ro_folios)
LUF_REASON_STAT(DEFERRED, deferred)

/* folios whose flush was deferred */
LUF_EVENT(DEFERRED, deferred_folios)
/* pages held back at free time */
LUF_EVENT(HELD, held_pages_total)
/* held pages given back */
LUF_EVENT(RELEASED, released_pages)
/* deferred flushes sent, and the CPUs they targeted */
LUF_EVENT(FLUSHES, flushes)
LUF_EVENT(FLUSH_CPUS, flush_cpus)
/* flushes every CPU had made unnecessary, and CPUs dropped as flushed */
LUF_EVENT(FLUSHES_SKIPPED, flushes_skipped)
LUF_EVENT(CPUS_PRUNED, cpus_pruned)
/* arm64: per-page broadcast TLBIs left out, ASID-wide or full ones sent */
LUF_EVENT(TLBI_AVOIDED, tlbi_avoided)
LUF_EVENT(TLBI_ISSUED, tlbi_issued)
/* migrated-away sources with deferred flushes */
LUF_EVENT(MIGRC_RETAINED, migrc_retained)
/* one mm's pending unmaps flushed at a fault */
LUF_EVENT(MM_FLUSHES, mm_flushes)
/* read-only unmaps with an mm flush pending */
LUF_EVENT(DECLINED_PENDING, declined_pending)
/* pages held in an isolated pageblock */
LUF_EVENT(HELD_ISOLATED, held_isolated)

/* why deferred work was settled */
LUF_CAUSE(WRITE_FAULT, write_fault)
LUF_CAUSE(FILE_CHANGE, file_change)
LUF_CAUSE(ZONE_LOW, zone_low)
LUF_CAUSE(SHRINKER, shrinker)
LUF_CAUSE(TIMER, timer)
LUF_CAUSE(THRESHOLD, threshold)
LUF_CAUSE(DISABLE, disable)
LUF_CAUSE(UNLOAD, unload)
LUF_CAUSE(ISOLATE, isolate)
LUF_CAUSE(AGING, aging)

LUF_GAUGE(held_pages, held)
LUF_GAUGE(held_pages_peak, held_peak)
LUF_GAUGE(pending_folios, pending)
LUF_GAUGE(pending_pages, pending_pages)

#undef LUF_PATH_STAT
#undef LUF_REASON_STAT
#undef LUF_EVENT
#undef LUF_CAUSE
#undef LUF_GAUGE
