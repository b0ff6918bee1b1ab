// SPDX-License-Identifier: GPL-2.0
/*
 * The luf_batch table and the per-pfn side table.
 *
 * A deferred unmap folds its read-only batch (x86: the CPUs that may hold
 * the old translations) into the open table entry, and the folio's pfns
 * record the entry's generation, its key: entry = luf_table[gen %
 * LUF_NR_BATCH].  A large folio is one multi-index entry over its whole
 * range, so it costs what an order-0 folio does, and every page of it
 * stays pending if the folio is split after its deferral.
 *
 * Nothing of this lives in struct page: pfns map to generations in an
 * xarray that holds what is pending and what a flush settled but has not
 * swept yet (a settle under a page table lock leaves its sweep to the
 * worker, luf_batch_sweep()), so its size follows max_pending_kb, not the
 * physical address space; two small arrays of per-slot generations in
 * front of it (luf_filter, luf_filter_large) answer most lookups of the
 * free path with one or two loads.  A flush covers every entry between
 * luf_done and the open one, minus the CPUs that flushed on their own
 * since (ugen), and then moves luf_done on: a pfn whose generation is at
 * or before luf_done needs no flush any more.
 */
#include <linux/cpumask.h>
#include <linux/hash.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/rmap.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <asm/tlbflush.h>
#include "luf.h"
#include "trace.h"

struct luf_batch {
	u32 gen;		/* the generation this entry collects */
	unsigned int nr;	/* folios deferred into it, 0 once flushed */
	unsigned long pages;	/* their pages */
	struct arch_tlbflush_unmap_batch arch;
};

static struct luf_batch luf_table[LUF_NR_BATCH];
/*
 * Protects luf_table and advances of luf_state.ugen; never held across a
 * flush
 */
static DEFINE_SPINLOCK(luf_batch_lock);
/* Serialises flushes; held across the IPIs, never with IRQs disabled */
static DEFINE_SPINLOCK(luf_flush_lock);
static struct arch_tlbflush_unmap_batch luf_flush_batch;

/*
 * Which page caches and anon_vma trees have folios with deferred flushes:
 * a small hash of keys (the address_space, or the root anon_vma), each
 * slot with the newest generation deferred for it.  Two keys with pending
 * generations in one slot make it LUF_ANY_KEY, which matches every key
 * until those generations are flushed.
 */
#define LUF_MAP_BITS		8
#define LUF_ANY_KEY		((const void *)-1L)

struct luf_map_slot {
	const void *key;
	u32 gen;
};

static struct luf_map_slot luf_maps[1 << LUF_MAP_BITS];

static u32 luf_done;		/* every generation up to here is flushed */
static DEFINE_XARRAY(luf_pfns);	/* pfn -> xa_mk_value(generation) */

/*
 * A filter in front of luf_pfns for the free_page hook, which looks up
 * every order-0 page freed while anything is pending: slot (pfn mod
 * LUF_FILTER_SLOTS) holds the newest generation deferred for any pfn of
 * the slot, stored in the luf_batch_lock section that reads the
 * generation, so the stores of a slot never go back in time.  A pfn
 * deferred at generation g leaves its slot at g or newer until the slot's
 * next deferral; if the slot's generation is flushed, so is g, and the
 * pfn needs no lookup (a false "pending" only sends it on to the
 * xarray).  Nothing is ever cleared: a flush makes the slots it covers
 * stale, as it does the xarray's entries.  The comparison is wrap-safe
 * because pending generations span at most about LUF_NR_BATCH (a full
 * table refuses deferrals): a slot ahead of its pfn's generation is
 * pending whenever that generation is.  Readers see the slot as they
 * see the entry stored with it: the folio's last reference is dropped
 * after its deferral, and its free follows that.
 */
#define LUF_FILTER_SLOTS	8192U
static u32 luf_filter[LUF_FILTER_SLOTS];
/*
 * The same for large folios, one slot per LUF_MAX_ORDER-aligned block of
 * pfns: a deferred large folio lies inside one such block and writes its
 * slot only.  A pfn is looked up in the xarray if either of its two slots
 * is pending.
 */
static u32 luf_filter_large[LUF_FILTER_SLOTS];

static u32 *luf_filter_slot(unsigned long pfn, unsigned int order)
{
	if (order)
		return &luf_filter_large[(pfn >> LUF_MAX_ORDER) % LUF_FILTER_SLOTS];
	return &luf_filter[pfn % LUF_FILTER_SLOTS];
}

/*
 * Pages reclaim deferred since the last flush, per memcg, for page aging
 * (luf_aging_due()): the first LUF_AGING_MEMCGS memcgs to defer between
 * two flushes get a slot each, in order; later ones share the last slot,
 * which never asks for an aging flush (their deferrals wait for the
 * others', the timer or the bound: a shared count would flush a small
 * memcg at every deferral).  Under luf_batch_lock; a flush that settles
 * anything empties it.
 */
struct luf_aging_slot {
	unsigned short memcg_id;
	long nr;
};

static struct luf_aging_slot luf_aging[LUF_AGING_MEMCGS + 1];

/**
 * luf_batch_init - empty the table and start the generations (module load)
 *
 * Return: 0.
 */
int luf_batch_init(void)
{
	memset(luf_table, 0, sizeof(luf_table));
	memset(luf_maps, 0, sizeof(luf_maps));
	memset(luf_filter, 0, sizeof(luf_filter));
	memset(luf_filter_large, 0, sizeof(luf_filter_large));
	memset(luf_aging, 0, sizeof(luf_aging));
	luf_done = luf_ugen_reset() - 1;
	atomic_long_set(&luf_state.pending, 0);
	atomic_long_set(&luf_state.pending_pages, 0);
	return 0;
}

/**
 * luf_batch_exit - free the pfn side table (module unload, after the drain)
 */
void luf_batch_exit(void)
{
	xa_destroy(&luf_pfns);
}

/* A flush left its sweep of luf_pfns to luf_batch_sweep() */
static bool luf_sweep_due;

/* Entries a sweep looks at before it lets a deferral take the lock */
#define LUF_SWEEP_BATCH		256

/*
 * Erase every pfn that no deferred translation reaches any more.  Called
 * without luf_flush_lock: a pfn deferred meanwhile has a generation after
 * @done (and maybe after the @now read here, which counts as pending), and
 * a sweep with an older @done only erases less.
 */
static void luf_pfns_sweep(u32 done)
{
	XA_STATE(xas, &luf_pfns, 0);
	u32 now = READ_ONCE(luf_state.ugen);
	unsigned int n = 0;
	void *entry;

	xas_lock(&xas);
	xas_for_each(&xas, entry, ULONG_MAX) {
		if (!luf_gen_pending(xa_to_value(entry), done, now))
			xas_store(&xas, NULL);
		if (++n % LUF_SWEEP_BATCH)
			continue;
		/* luf_batch_defer() waits for this lock under luf_batch_lock */
		xas_pause(&xas);
		xas_unlock(&xas);
		xas_lock(&xas);
	}
	xas_unlock(&xas);
}

/**
 * luf_pfn_pending - may a deferred translation still reach @pfn?
 * @pfn: page frame number
 *
 * Return: true if @pfn was deferred and its generation is not flushed.
 */
bool luf_pfn_pending(unsigned long pfn)
{
	/* Pairs with smp_store_release() in luf_batch_flush() */
	u32 done = smp_load_acquire(&luf_done);
	u32 now = READ_ONCE(luf_state.ugen);
	void *entry;

	if (!luf_gen_pending(READ_ONCE(*luf_filter_slot(pfn, 0)), done, now) &&
	    !luf_gen_pending(READ_ONCE(*luf_filter_slot(pfn, 1)), done, now))
		return false;
	entry = xa_load(&luf_pfns, pfn);
	return xa_is_value(entry) &&
	       luf_gen_pending(xa_to_value(entry), done, now);
}

/**
 * luf_range_pending - may a deferred translation reach a page of a block?
 * @pfn: first page frame number of a naturally aligned block
 * @order: its order
 *
 * A block freed at any order is looked up as a whole: every entry of the
 * side table that meets it counts, whether it is a deferred large folio
 * around the block (a piece of a folio split after its deferral) or a
 * deferral inside it.
 *
 * A block of order 1 to LUF_MAX_ORDER that a pending deferral reaches
 * lies inside that deferral's folio: its pages were that folio's, or a
 * piece of it, from the deferral until now (a pending page is never
 * free, and folios do not merge).  So the folio was large and wrote the
 * large-folio filter slot of the block, which one load checks first.
 *
 * Return: true if a pfn of the block was deferred and is not flushed.
 */
bool luf_range_pending(unsigned long pfn, unsigned int order)
{
	unsigned long index = pfn, last = pfn + (1UL << order) - 1;
	u32 done, now;
	void *entry;

	if (!order)
		return luf_pfn_pending(pfn);
	/* Pairs with smp_store_release() in luf_batch_flush() */
	done = smp_load_acquire(&luf_done);
	now = READ_ONCE(luf_state.ugen);
	if (order <= LUF_MAX_ORDER &&
	    !luf_gen_pending(READ_ONCE(*luf_filter_slot(pfn, order)), done, now))
		return false;
	xa_for_each_range(&luf_pfns, index, entry, pfn, last)
		if (xa_is_value(entry) &&
		    luf_gen_pending(xa_to_value(entry), done, now))
			return true;
	return false;
}

/**
 * luf_pfn_forget - drop the entry of @pfn if it is no longer pending
 * @pfn: page frame number
 *
 * The entry may be a large folio's, wider than @pfn's page, and a newer
 * deferral of a neighbour may have replaced it since the caller looked
 * (storing into one index of a multi-index entry stores to all of them):
 * it goes only if it is settled, checked under the xarray's lock.
 */
void luf_pfn_forget(unsigned long pfn)
{
	XA_STATE(xas, &luf_pfns, pfn);
	u32 done, now;
	void *entry;

	xas_lock(&xas);
	/* Pairs with smp_store_release() in luf_batch_flush() */
	done = smp_load_acquire(&luf_done);
	now = READ_ONCE(luf_state.ugen);
	entry = xas_load(&xas);
	if (xa_is_value(entry) &&
	    !luf_gen_pending(xa_to_value(entry), done, now))
		xas_store(&xas, NULL);
	xas_unlock(&xas);
}

/*
 * Record @order pages from @pfn at @gen: one entry, multi-index for a
 * large folio (luf_order_deferrable() made sure the xarray has them).
 * It replaces whatever the range held: older generations, which are
 * pending no longer than @gen.  A settled entry wider than the range
 * goes first: storing into it would make all of it pending again, pages
 * that no deferral counts.
 */
static int luf_pfns_store(unsigned long pfn, unsigned int order, u32 gen)
{
	XA_STATE_ORDER(xas, &luf_pfns, pfn, order);

	luf_pfn_forget(pfn);
	do {
		xas_lock(&xas);
		xas_store(&xas, xa_mk_value(gen));
		xas_unlock(&xas);
	} while (xas_nomem(&xas, GFP_ATOMIC | __GFP_NOWARN));
	return xas_error(&xas);
}

/* Called with luf_batch_lock held */
static void luf_map_note(const void *key, u32 gen)
{
	struct luf_map_slot *s = &luf_maps[hash_ptr(key, LUF_MAP_BITS)];

	if (s->key != key && luf_gen_pending(s->gen, luf_done, luf_state.ugen))
		key = LUF_ANY_KEY;
	WRITE_ONCE(s->key, key);
	WRITE_ONCE(s->gen, gen);
}

/**
 * luf_key_pending - may a deferred translation show old data of @key?
 * @key: an address_space, or a root anon_vma (luf_folio_key())
 *
 * Return: true if a folio of @key (or of a key sharing its hash slot) was
 * deferred and is not flushed yet.
 */
bool luf_key_pending(const void *key)
{
	struct luf_map_slot *s = &luf_maps[hash_ptr(key, LUF_MAP_BITS)];
	const void *k = READ_ONCE(s->key);

	if (!key || (k != key && k != LUF_ANY_KEY))
		return false;
	/* Pairs with smp_store_release() in luf_batch_flush() */
	return luf_gen_pending(READ_ONCE(s->gen), smp_load_acquire(&luf_done),
			       READ_ONCE(luf_state.ugen));
}

/*
 * The key of a folio's deferral: its page cache, or the root of its
 * anon_vma tree, which the anon_vma of every VMA that can map the folio
 * shares.  Only compared, never dereferenced later; the anon_vma slab is
 * SLAB_TYPESAFE_BY_RCU and the caller runs with preemption disabled.
 */
static const void *luf_folio_key(struct folio *folio)
{
	struct anon_vma *av;

	if (!folio_test_anon(folio))
		return folio->mapping;
	av = (void *)((unsigned long)folio->mapping & ~PAGE_MAPPING_FLAGS);
	return READ_ONCE(av->root);
}

/**
 * luf_batch_defer - take over the flush of a read-only unmap
 * @folio: the unmapped folio, luf_folio_deferrable()
 * @ro: its read-only batch
 * @max_pages: bound on deferred pages plus held pages
 *
 * Only pages of pending folios are ever held, and a flush that settles a
 * folio takes its pages out of luf_state.pending_pages before its held
 * pages are released; so refusing a deferral that would take
 * luf_state.pending_pages + luf_state.held beyond @max_pages
 * (luf_bound_reached()), checked and counted under luf_batch_lock, keeps
 * luf_state.held <= @max_pages.
 *
 * Context: preemption disabled, IRQs enabled.
 * Return: true if @ro is now recorded in the table; false if the table is
 * full, the bound is reached or the pfn cannot be recorded (the caller
 * flushes as usual).
 */
bool luf_batch_defer(struct folio *folio, struct tlbflush_unmap_batch *ro,
		     unsigned long max_pages)
{
	unsigned long pfn = folio_pfn(folio), nr = folio_nr_pages(folio);
	unsigned int order = folio_order(folio);
	int brk = READ_ONCE(luf_state.debug_break);
	struct luf_batch *b;
	u32 gen;

	/* broken on purpose: only the first page of a large folio counts */
	if (brk == LUF_BREAK_TAIL)
		order = 0;
	spin_lock(&luf_batch_lock);
	if (luf_bound_reached(atomic_long_read(&luf_state.pending_pages),
			      atomic_long_read(&luf_state.held), nr, max_pages)) {
		spin_unlock(&luf_batch_lock);
		return false;
	}
	gen = luf_state.ugen;
	b = &luf_table[luf_batch_key(gen)];
	if (b->gen != gen) {
		if (b->nr) {
			/* The oldest entry still waits: the table is full. */
			spin_unlock(&luf_batch_lock);
			return false;
		}
		b->gen = gen;
		b->pages = 0;
		luf_arch_clear(&b->arch);
	}
	/* In this lock section with the read of gen: see luf_filter */
	if (brk != LUF_BREAK_FILTER)
		WRITE_ONCE(*luf_filter_slot(pfn, order), gen);
	if (luf_pfns_store(pfn, order, gen)) {
		spin_unlock(&luf_batch_lock);
		return false;
	}
	arch_tlbbatch_move(&b->arch, &ro->arch);
	luf_map_note(luf_folio_key(folio), gen);
	b->pages += nr;
	if (++b->nr >= LUF_BATCH_FOLIOS) {
		/* Closed: pairs with smp_load_acquire() in luf_ugen_cpu_flush() */
		smp_store_release(&luf_state.ugen, luf_gen_next(gen));
	}
	atomic_long_inc(&luf_state.pending);
	atomic_long_add(nr, &luf_state.pending_pages);
	spin_unlock(&luf_batch_lock);
	trace_luf_defer(pfn, gen);
	return true;
}

/**
 * luf_batch_aging_note - count a folio reclaim deferred from a memcg
 * @memcg_id: mem_cgroup_id() of the folio's memcg, 0 for the root
 * @nr: the folio's pages
 *
 * Context: preemption disabled, IRQs enabled.
 * Return: pages deferred from that memcg since the last flush, this
 * folio's included; 0 if it has no slot of its own.
 */
long luf_batch_aging_note(unsigned short memcg_id, long nr)
{
	struct luf_aging_slot *s = luf_aging;

	spin_lock(&luf_batch_lock);
	while (s < &luf_aging[LUF_AGING_MEMCGS] && s->nr &&
	       s->memcg_id != memcg_id)
		s++;
	s->memcg_id = memcg_id;
	s->nr += nr;
	nr = s->nr;
	spin_unlock(&luf_batch_lock);
	return s < &luf_aging[LUF_AGING_MEMCGS] ? nr : 0;
}

/**
 * luf_batch_flush - perform every deferred flush
 * @cause: why, for the counters
 * @sweep: also erase the settled pfns from the side table now; false
 *	leaves that to luf_batch_sweep() (a consumer hook under a page table
 *	lock: only the invalidation must be complete before it returns)
 *
 * Closes the open entry, sends one flush to the CPUs of every waiting
 * entry that have not flushed since it closed, and marks all of them done.
 * A settled pfn left in the table is not pending (luf_pfn_pending()
 * compares its generation with the flushed one); the sweep only keeps the
 * table small.
 *
 * Context: task context with IRQs enabled (luf_can_flush()).
 * Return: number of entries settled.
 */
unsigned int luf_batch_flush(enum luf_cause cause, bool sweep)
{
	unsigned int nr_entries = 0, pruned = 0, cpus = 0;
	unsigned long folios = 0, pages = 0;
	struct cpumask *mask;
	u64 t0 = ktime_get_ns(), t1;
	u32 gen, done;

	if (WARN_ON_ONCE(!luf_can_flush()))
		return 0;
	spin_lock(&luf_flush_lock);
	spin_lock(&luf_batch_lock);
	done = luf_done;
	gen = luf_state.ugen;
	luf_arch_clear(&luf_flush_batch);
	mask = luf_arch_mask(&luf_flush_batch);
	for (; luf_gen_after(gen, done); done++) {
		struct luf_batch *b = &luf_table[luf_batch_key(done + 1)];

		if (b->gen != done + 1 || !b->nr)
			continue;
		nr_entries++;
		folios += b->nr;
		pages += b->pages;
		pruned += luf_ugen_prune(&b->arch, b->gen);
		arch_tlbbatch_move(&luf_flush_batch, &b->arch);
	}
	if (nr_entries) {
		/* Pairs with smp_load_acquire() in luf_ugen_cpu_flush() */
		smp_store_release(&luf_state.ugen, luf_gen_next(gen));
		memset(luf_aging, 0, sizeof(luf_aging));
	}
	spin_unlock(&luf_batch_lock);

	if (!nr_entries) {
		spin_unlock(&luf_flush_lock);
		return 0;
	}
	if (luf_arch_empty(&luf_flush_batch)) {
		luf_count(LUF_EV_FLUSHES_SKIPPED, 1);
	} else {
		/* x86: IPIs to the CPUs in mask; arm64 (no mask): TLBIs */
		cpus = mask ? cpumask_weight(mask) : 0;
		luf_count(LUF_EV_TLBI_ISSUED, luf_arch_flush_tlbis(&luf_flush_batch));
		if (luf_state.debug_break != LUF_BREAK_REUSE)
			arch_tlbbatch_flush(&luf_flush_batch);
		luf_count(LUF_EV_FLUSHES, 1);
		luf_count(LUF_EV_FLUSH_CPUS, cpus);
	}
	luf_count(LUF_EV_CPUS_PRUNED, pruned);
	luf_count(LUF_EV_FORCED_BASE + cause, 1);

	spin_lock(&luf_batch_lock);
	for (done = luf_done; luf_gen_after(gen, done); done++) {
		struct luf_batch *b = &luf_table[luf_batch_key(done + 1)];

		if (b->gen == done + 1)
			b->nr = 0;
	}
	/* Pairs with smp_load_acquire() in luf_pfn_pending() */
	smp_store_release(&luf_done, gen);
	spin_unlock(&luf_batch_lock);
	/* After luf_done: a reader of pending == 0 sees it (luf_held_now()) */
	atomic_long_sub(pages, &luf_state.pending_pages);
	atomic_long_sub_return_release(folios, &luf_state.pending);
	luf_ugen_expire();
	spin_unlock(&luf_flush_lock);
	t1 = ktime_get_ns();
	if (sweep) {
		WRITE_ONCE(luf_sweep_due, false);
		luf_pfns_sweep(gen);
	} else {
		WRITE_ONCE(luf_sweep_due, true);
	}
	trace_luf_flush(gen, nr_entries, cpus, pruned, cause, t1 - t0,
			sweep ? ktime_get_ns() - t1 : 0);
	return nr_entries;
}

/**
 * luf_batch_sweep - the sweep of luf_pfns that a flush left for later
 *
 * Context: task context with IRQs enabled.
 */
void luf_batch_sweep(void)
{
	u64 t0;

	if (!xchg(&luf_sweep_due, false))
		return;
	t0 = ktime_get_ns();
	/* Pairs with smp_store_release() in luf_batch_flush() */
	luf_pfns_sweep(smp_load_acquire(&luf_done));
	trace_luf_sweep(ktime_get_ns() - t0);
}

/**
 * luf_batch_sweep_due - has a flush left its sweep for later?
 *
 * Return: true if luf_batch_sweep() has work.
 */
bool luf_batch_sweep_due(void)
{
	return READ_ONCE(luf_sweep_due);
}

#ifdef LUF_KUNIT
#include "tests/batch-kunit.h"
#endif
