/* SPDX-License-Identifier: GPL-2.0 */
/*
 * luf.ko internal interfaces, shared by the files under module/.
 */
#ifndef _LUF_H
#define _LUF_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/mm.h>		/* and linux/luf_hooks.h */
#include <linux/migrate_mode.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/stddef.h>
#include <linux/types.h>

/*
 * Tunables: /sys/kernel/mm/luf/ and module parameters (module/knobs.c,
 * module/sysfs.c), listed in luf_knob_defs.h.  A byte per knob in this
 * struct numbers them in the order of the list: LUF_KNOB_NR(name).
 */
struct luf_knob_nr {
#define LUF_KNOB(name, ...)	u8 name
#include "luf_knob_defs.h"
#undef LUF_KNOB
};

#define LUF_KNOB_NR(name)	offsetof(struct luf_knob_nr, name)
#define LUF_NR_KNOBS		sizeof(struct luf_knob_nr)

/* A knob no module parameter set yet: luf_knobs_init() sets its default */
#define LUF_KNOB_UNSET		ULONG_MAX

/**
 * struct luf_state - what the files of luf.ko share
 * @knob: knob values, read with luf_knob(); written by knobs.c and sysfs.c
 * @debug_break: broken mode for the test suite (enum luf_break, main.c)
 * @ugen: the generation of the open luf_batch entry (ugen.c); advanced
 *	under the batch lock (batch.c), read anywhere
 * @pending: folios deferred and not flushed yet (batch.c)
 * @pending_pages: the pages of those folios (batch.c)
 * @held: pages held back from the allocator now (hold.c)
 * @held_peak: highest @held since load (hold.c)
 *
 * "Deferred" is what a folio's flush is, "pending" what it stays until the
 * flush, "held" what a freed page of a pending folio is until its release.
 */
struct luf_state {
	unsigned long knob[LUF_NR_KNOBS];
	int debug_break;
	u32 ugen;
	atomic_long_t pending;
	atomic_long_t pending_pages;
	atomic_long_t held;
	atomic_long_t held_peak;
};

extern struct luf_state luf_state;

/* The value of knob number @k */
static inline unsigned long luf_knob_val(unsigned int k)
{
	return READ_ONCE(luf_state.knob[k]);
}

/* The value of knob @name (luf_knob_defs.h) */
#define luf_knob(name)		luf_knob_val(LUF_KNOB_NR(name))

int luf_parse_ulong(const char *buf, size_t count, unsigned long min,
		    unsigned long max, unsigned long *val);
int luf_knob_parse(unsigned int k, const char *buf, size_t count,
		   unsigned long *val);
void luf_knobs_init(void);
extern const struct kernel_param_ops luf_knob_param_ops;

int luf_sysfs_init(void);
void luf_sysfs_exit(void);

/* Why deferred work was settled (forced_<cause> counters, tracepoints) */
enum luf_cause {
#define LUF_CAUSE(id, ...)	LUF_CAUSE_##id,
#include "luf_stat_defs.h"
	LUF_NR_CAUSES,
};

/* Broken modes for the test suite (debug_break=, luf_break_defs.h) */
enum luf_break {
	LUF_BREAK_NONE,
#define LUF_BREAK(id, ...)	LUF_BREAK_##id,
#include "luf_break_defs.h"
#undef LUF_BREAK
	LUF_NR_BREAKS,
};

/*
 * Policy (module/policy.c): every decision of when a flush may be
 * deferred and when, and how widely, deferred work must be settled.
 */

/* How widely a write fault must flush (luf_write_fault_scope()) */
enum luf_scope {
	LUF_SCOPE_NONE,		/* the fault cannot expose deferred content */
	LUF_SCOPE_MM,		/* the mm's own pending batched unmaps */
	LUF_SCOPE_ALL,		/* everything deferred, if the VMA has any */
};

/*
 * The largest folio order that may be deferred: a PMD's worth of pages.
 * A naturally aligned folio of at most this order lies in one slot of the
 * free path's large-folio filter (batch.c).  Large folios need multi-index
 * entries in the pfn side table (CONFIG_XARRAY_MULTI, which THP selects).
 */
#define LUF_MAX_ORDER		(PMD_SHIFT - PAGE_SHIFT)
#define LUF_NR_ORDERS		(LUF_MAX_ORDER + 1)

bool luf_may_defer(enum luf_ctx ctx, int reason);
bool luf_order_deferrable(unsigned int order);
bool luf_folio_deferrable(struct folio *folio);
bool luf_walk_nested(const struct tlbflush_unmap_batch *ro);
void luf_walk_begin(struct tlbflush_unmap_batch *ro, enum luf_ctx ctx,
		    int reason);
bool luf_unmap_deferrable(struct folio *folio,
			  const struct tlbflush_unmap_batch *ro);
unsigned long luf_max_pending_pages(void);
bool luf_bound_reached(long pending, long held, unsigned long nr,
		       unsigned long max_pages);
enum luf_scope luf_write_fault_scope(unsigned long vm_flags,
				     unsigned int fault_flags, bool prot_write);
bool luf_aging_wanted(enum luf_ctx ctx);
bool luf_aging_due(long pending, unsigned long pages);
bool luf_can_flush(void);
bool luf_may_flush_alloc(gfp_t gfp);
unsigned long luf_knob_default(unsigned int k);
void luf_knob_range(unsigned int k, unsigned long *min, unsigned long *max);
int luf_knob_allowed(unsigned int k, unsigned long val);
bool luf_knob_settles(unsigned int k, unsigned long val);

/* Per-path observation counters and LUF events (module/stats.c) */
enum luf_path_stat {
#define LUF_PATH_STAT(id, ...)	LUF_PS_##id,
#include "luf_stat_defs.h"
	LUF_PS_NR,
};

enum luf_reason_stat {
#define LUF_REASON_STAT(id, ...)	LUF_RS_##id,
#include "luf_stat_defs.h"
	LUF_RS_NR,
};

enum luf_event {
#define LUF_EVENT(id, ...)	LUF_EV_##id,
#include "luf_stat_defs.h"
	LUF_EV_FORCED_BASE,	/* flushes by cause */
	LUF_EV_RELEASED_BASE = LUF_EV_FORCED_BASE + LUF_NR_CAUSES,
	LUF_EV_NR = LUF_EV_RELEASED_BASE + LUF_NR_CAUSES, /* releases by cause */
};

struct luf_stats {
	u64 path[LUF_CTX_NR][LUF_PS_NR];
	u64 reason[MR_TYPES][LUF_RS_NR];
	u64 ev[LUF_EV_NR];
	u64 order[LUF_NR_ORDERS];	/* folios deferred, by order */
};

DECLARE_PER_CPU(struct luf_stats, luf_stats);

static inline void luf_count(enum luf_event ev, unsigned long n)
{
	this_cpu_add(luf_stats.ev[ev], n);
}

extern const char * const luf_ctx_name[];
extern const char * const luf_path_stat_name[];
extern const char * const luf_reason_name[MR_TYPES];
extern const char * const luf_reason_stat_name[];
extern const char * const luf_event_name[];
extern const char * const luf_cause_name[];

static inline const char *luf_reason_str(int reason)
{
	return reason >= 0 && reason < MR_TYPES ? luf_reason_name[reason] : "?";
}

u64 luf_stat_sum(size_t offset);

bool luf_observe_defer_ok(enum luf_ctx ctx, int reason);
void luf_observe_unmap_done(struct folio *folio,
			    const struct tlbflush_unmap_batch *ro);
void luf_observe_flush(const struct tlbflush_unmap_batch *ubc);
void luf_count_deferred(struct folio *folio, enum luf_ctx ctx, int reason);

int luf_debugfs_init(void);
void luf_debugfs_exit(void);

/*
 * Generations (module/ugen.c).  u32, compared wrap-safely; a record older
 * than LUF_GEN_HORIZON counts as no record at all.
 */
#define LUF_GEN_HORIZON		BIT(30)

static inline bool luf_gen_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/*
 * Does a full flush recorded at @rec cover generation @gen?
 * @now: luf_state.ugen.  Record 0: none.
 */
static inline bool luf_gen_covers(u32 rec, u32 gen, u32 now)
{
	return rec && !luf_gen_after(gen, rec) && now - rec < LUF_GEN_HORIZON;
}

/*
 * Is generation @gen still waiting for its flush, with @done flushed?
 * @now: luf_state.ugen, read without ordering against @gen, so it may be
 * older than @gen: a generation ahead of @now is pending, never "too old".
 */
static inline bool luf_gen_pending(u32 gen, u32 done, u32 now)
{
	return luf_gen_after(gen, done) &&
	       (s32)(now - gen) < (s32)LUF_GEN_HORIZON;
}

/*
 * The generation after @gen.  0 means "no record" in the pfn side table
 * and the key slots, so it is never handed out: the sequence wraps from
 * U32_MAX to 1.
 */
static inline u32 luf_gen_next(u32 gen)
{
	return gen + 1 ?: 1;
}

void luf_ugen_cpu_flush(bool done);
unsigned int luf_ugen_prune(struct arch_tlbflush_unmap_batch *b, u32 gen);
bool luf_ugen_all_flushed(u32 gen);
void luf_ugen_expire(void);
u32 luf_ugen_reset(void);

/* The luf_batch table (module/batch.c) */
#define LUF_NR_BATCH		64	/* entries; a power of two */
#define LUF_BATCH_FOLIOS	512	/* folios an entry takes before closing */

static inline unsigned int luf_batch_key(u32 gen)
{
	return gen & (LUF_NR_BATCH - 1);
}

int luf_batch_init(void);
void luf_batch_exit(void);
bool luf_pfn_pending(unsigned long pfn);
bool luf_range_pending(unsigned long pfn, unsigned int order);
bool luf_key_pending(const void *key);
void luf_pfn_forget(unsigned long pfn);
bool luf_batch_defer(struct folio *folio, struct tlbflush_unmap_batch *ro,
		     unsigned long max_pages);
long luf_batch_aging_note(unsigned short memcg_id, long nr);
unsigned int luf_batch_flush(enum luf_cause cause, bool sweep);
void luf_batch_sweep(void);
bool luf_batch_sweep_due(void);

/* Held pages (module/hold.c) */
int luf_hold_init(void);
void luf_hold_exit(void);
bool luf_hold_page(struct page *page, unsigned int order);
unsigned long luf_release(enum luf_cause cause);
void luf_release_all(enum luf_cause cause);
long luf_held_now(void);
bool luf_holding(void);
void luf_kick(enum luf_cause cause);
void luf_timer_rearm(void);
void luf_kick_sweep(void);

/*
 * Architecture batch helpers: static inlines in module/arch_<arch>.h.
 * Each architecture defines luf_arch_empty(), and whatever of the rest
 * differs from the defaults
 * below (#define NAME NAME after its definition).  They never call into
 * the rest of the module.
 */
#if defined(CONFIG_X86)
#include "arch_x86.h"
#elif defined(CONFIG_ARM64)
#include "arch_arm64.h"
#endif

/* Batches move with the core's arch_tlbbatch_move(), which empties the source */
#ifndef luf_arch_clear
/* An empty batch is all zeroes */
static inline void luf_arch_clear(struct arch_tlbflush_unmap_batch *b)
{
	memset(b, 0, sizeof(*b));
}
#endif

#ifndef luf_arch_batch_remote_cpus
/* CPUs a flush of @ubc would interrupt: none without flush IPIs */
static inline unsigned int
luf_arch_batch_remote_cpus(const struct tlbflush_unmap_batch *ubc)
{
	return 0;
}
#endif

#ifndef luf_arch_set_lazy
/* Batches that cost nothing until flushed are never lazy */
static inline void luf_arch_set_lazy(struct tlbflush_unmap_batch *ro, bool lazy)
{
}
#endif

#ifndef luf_arch_pages_left_out
/* Per-page invalidations a lazy batch did not send */
static inline unsigned int
luf_arch_pages_left_out(const struct tlbflush_unmap_batch *ro)
{
	return 0;
}
#endif

#ifndef luf_arch_flush_tlbis
/* Broadcast TLBIs a flush of @b sends */
static inline unsigned int
luf_arch_flush_tlbis(const struct arch_tlbflush_unmap_batch *b)
{
	return 0;
}
#endif

#ifndef luf_arch_may_take
/* Can LUF take over the flush of @ro?  Yes where adding sends nothing. */
static inline bool luf_arch_may_take(const struct tlbflush_unmap_batch *ro)
{
	return true;
}
#endif

#ifndef luf_arch_mask
/* The CPUs a flush of @b interrupts; NULL: the flush broadcasts */
static inline struct cpumask *luf_arch_mask(struct arch_tlbflush_unmap_batch *b)
{
	return NULL;
}
#endif

#ifndef luf_arch_aging_flushes
/*
 * Does clearing a PTE's accessed bit invalidate the translation (so that
 * the next access sets it again)?  Not on x86 (ptep_clear_flush_young()).
 */
static inline bool luf_arch_aging_flushes(void)
{
	return false;
}
#endif

/* Deferred pages of a memcg below which aging never asks for a flush */
#define LUF_AGING_MIN_PAGES	64UL
/* memcgs whose deferrals aging counts apart between two flushes */
#define LUF_AGING_MEMCGS	16

#ifdef LUF_KUNIT
/*
 * luf_kunit.ko (module/tests/luf_kunit.c): a suite named @_name of the
 * KUnit cases that follow, for the tests/<file>-kunit.h files.
 */
#define LUF_KUNIT_SUITE(_name, ...)					\
	static struct kunit_case _name##_cases[] = { __VA_ARGS__, {} };	\
	static struct kunit_suite _name##_suite = {			\
		.name = #_name,						\
		.test_cases = _name##_cases,				\
	};								\
	kunit_test_suite(_name##_suite)
#endif

#endif /* _LUF_H */
