// SPDX-License-Identifier: GPL-2.0
/*
 * luf_counters: the debugfs counters of the observing luf.ko move under
 * reclaim and migration of read-only mapped file pages, and only then.
 *
 * Every workload runs pinned: the initiator on CPU 0, readers on CPUs 1..3
 * spinning over a PROT_READ MAP_SHARED file mapping (so the mm is live on
 * the remote CPUs and batched flushes target them).  After each run:
 * the counters that must move did, the documented invariants hold both
 * since load and over the run, the readers never saw a wrong word, and
 * (reclaim) /proc/vmstat nr_tlb_remote_flush moved.
 *
 *  reset_on_load     counters are zero right after a reload
 *  reclaim_pageout   MADV_PAGEOUT rounds over a 16 MiB ext4 file
 *  reclaim_memcg     the process in a memcg with memory.max below the file
 *  migrate_move_pages move_pages(MPOL_MF_MOVE_ALL) node 0 <-> node 1
 *  demotion          memory.reclaim on a memcg with demotion to node 1
 *  observe_off       observe=0: nothing moves; observe=1 again: it does
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "luf_harness.h"

struct measured {
	struct luf_run_res r;
	struct luf_counters before, after, d;
};

/* Run @kind with @o and take counter snapshots around it. */
static void measure(struct __test_metadata *_metadata, int ncpus,
		    enum luf_wl kind, const struct luf_run_opts *o,
		    struct measured *m)
{
	char why[256], prefix[32];

	ASSERT_EQ(0, luf_counters_read_stable(&m->before));
	luf_run_ok(_metadata, kind, o, &m->r);
	ASSERT_EQ(0, luf_counters_read_stable(&m->after));
	luf_counters_delta(&m->after, &m->before, &m->d);
	snprintf(prefix, sizeof(prefix), "%s: delta ", luf_wl_name(kind));
	luf_counters_log(prefix, &m->d, true);

	ASSERT_TRUE(luf_counters_check(&m->after, ncpus, why, sizeof(why)))
		TH_LOG("invariant broken since load: %s", why);
	ASSERT_TRUE(luf_counters_check(&m->d, ncpus, why, sizeof(why)))
		TH_LOG("invariant broken over the run: %s", why);
}

FIXTURE(counters) {
	int ncpus;
};

FIXTURE_SETUP(counters)
{
	uint64_t v;
	int ret;

	self->ncpus = nr_cpus();
	if (self->ncpus < 2)
		SKIP(return, "needs a CPU for the initiator and one for a reader");
	ret = luf_fresh_load();
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	ASSERT_EQ(0, luf_knob_read("observe", &v));
	ASSERT_EQ((uint64_t)1, v) TH_LOG("observe is not on by default");
}

FIXTURE_TEARDOWN(counters)
{
	luf_ensure_unloaded();
}

TEST_F_TIMEOUT(counters, reset_on_load, 180)
{
	struct luf_counters c, zero;
	struct luf_run_opts o;
	struct measured m;

	REQUIRE_DIR(LUF_EXT4_DIR);
	luf_run_opts_default(&o, LUF_WL_PAGEOUT);
	o.seconds = 0;
	o.min_rounds = 1;
	o.max_rounds = 2;
	measure(_metadata, self->ncpus, LUF_WL_PAGEOUT, &o, &m);
	ASSERT_GT(m.after.reclaim.unmaps, (uint64_t)0)
		TH_LOG("nothing counted, so a reset would prove nothing");

	ASSERT_EQ(0, luf_unload());
	ASSERT_EQ(0, luf_load(""));
	ASSERT_EQ(0, luf_counters_read(&c));
	memset(&zero, 0, sizeof(zero));
	if (!luf_counters_equal(&c, &zero))
		luf_counters_log("after reload: ", &c, true);
	ASSERT_TRUE(luf_counters_equal(&c, &zero))
		TH_LOG("a freshly loaded module has nonzero counters");
}

static void assert_reclaim_moved(struct __test_metadata *_metadata,
				 const struct measured *m)
{
	const struct luf_side *d = &m->d.reclaim;

	ASSERT_GT(d->unmaps, (uint64_t)0);
	ASSERT_GT(d->ro_folios, (uint64_t)0);
	ASSERT_GT(d->flush_rounds, (uint64_t)0);
	ASSERT_GT(d->flush_rounds_ro_only, (uint64_t)0);
	if (LUF_FLUSH_IPIS)
		ASSERT_GT(d->flush_cpus, (uint64_t)0);
	luf_assert_remote_flushes(_metadata, &m->r);
}

TEST_F_TIMEOUT(counters, reclaim_pageout, 240)
{
	struct luf_run_opts o;
	struct measured m;

	LUF_WL_DEFAULTS(LUF_WL_PAGEOUT, &o);
	measure(_metadata, self->ncpus, LUF_WL_PAGEOUT, &o, &m);
	ASSERT_GT(m.r.pages_evicted, (uint64_t)0) TH_LOG("MADV_PAGEOUT evicted nothing");
	assert_reclaim_moved(_metadata, &m);
	/*
	 * Every page MADV_PAGEOUT evicted was mapped only by our read-only
	 * PTEs, so it was unmapped as a read-only folio: allow 10% for
	 * unmaps the kernel did not batch.
	 */
	ASSERT_GE(m.d.reclaim.ro_folios * 10, m.r.pages_evicted * 9)
		TH_LOG("reclaim_ro_folios +%" PRIu64 " for %" PRIu64 " evicted pages",
		       m.d.reclaim.ro_folios, m.r.pages_evicted);
}

TEST_F_TIMEOUT(counters, reclaim_memcg, 240)
{
	struct luf_run_opts o;
	struct measured m;

	LUF_WL_DEFAULTS(LUF_WL_MEMCG, &o);
	measure(_metadata, self->ncpus, LUF_WL_MEMCG, &o, &m);
	ASSERT_GT(m.r.memcg_pgsteal, (uint64_t)0) TH_LOG("the memcg reclaimed nothing");
	assert_reclaim_moved(_metadata, &m);
}

TEST_F_TIMEOUT(counters, migrate_move_pages, 240)
{
	struct luf_run_opts o;
	struct measured m;

	LUF_WL_DEFAULTS(LUF_WL_MIGRATE, &o);
	measure(_metadata, self->ncpus, LUF_WL_MIGRATE, &o, &m);
	ASSERT_GT(m.r.pages_migrated, (uint64_t)0) TH_LOG("move_pages moved nothing");
	ASSERT_GT(m.d.migrate.unmaps, (uint64_t)0);
	ASSERT_GT(m.d.migrate.ro_folios, (uint64_t)0);
	ASSERT_GT(m.d.reason_unmaps[LUF_R_SYSCALL], (uint64_t)0);
	ASSERT_GT(m.d.reason_ro_folios[LUF_R_SYSCALL], (uint64_t)0);
	ASSERT_GT(m.d.migrate.flush_rounds, (uint64_t)0);
	ASSERT_GT(m.d.migrate.flush_rounds_ro_only, (uint64_t)0);
	if (LUF_FLUSH_IPIS)
		ASSERT_GT(m.d.migrate.flush_cpus, (uint64_t)0);
	/* sums over reasons == totals is part of luf_counters_check() */
}

TEST_F_TIMEOUT(counters, demotion, 240)
{
	struct luf_run_opts o;
	struct measured m;

	LUF_WL_DEFAULTS(LUF_WL_DEMOTE, &o);
	measure(_metadata, self->ncpus, LUF_WL_DEMOTE, &o, &m);
	ASSERT_GT(m.r.sys.pgdemote, (uint64_t)0)
		TH_LOG("memory.reclaim demoted nothing (pgdemote_* unchanged)");
	ASSERT_GT(m.d.reason_unmaps[LUF_R_DEMOTION], (uint64_t)0);
	ASSERT_GT(m.d.reason_ro_folios[LUF_R_DEMOTION], (uint64_t)0);
}

TEST_F_TIMEOUT(counters, observe_off, 240)
{
	struct luf_counters before, after;
	struct luf_run_opts o;
	struct luf_run_res r;
	struct measured m;
	uint64_t v;
	int ret;

	REQUIRE_DIR(LUF_EXT4_DIR);
	ASSERT_EQ(0, luf_knob_write("observe", "0"));
	ASSERT_EQ(0, luf_knob_read("observe", &v));
	ASSERT_EQ((uint64_t)0, v);

	ASSERT_EQ(0, luf_counters_read_stable(&before));
	luf_run_opts_default(&o, LUF_WL_PAGEOUT);
	o.seconds = 0;
	o.max_rounds = 3;
	ret = luf_run(LUF_WL_PAGEOUT, &o, &r);
	luf_run_log("pageout, observe=0: ", &r);
	ASSERT_EQ(0, ret) TH_LOG("%s", r.err);
	ASSERT_GT(r.pages_evicted, (uint64_t)0) TH_LOG("MADV_PAGEOUT evicted nothing");
	luf_assert_remote_flushes(_metadata, &r);

	if (path_exists(LUF_TMP_DIR) && numa_node_has_memory(1)) {
		luf_run_opts_default(&o, LUF_WL_MIGRATE);
		o.seconds = 0;
		o.min_rounds = 4;
		o.max_rounds = 4;
		ret = luf_run(LUF_WL_MIGRATE, &o, &r);
		luf_run_log("migrate, observe=0: ", &r);
		ASSERT_EQ(0, ret) TH_LOG("%s", r.err);
		ASSERT_GT(r.pages_migrated, (uint64_t)0) TH_LOG("move_pages moved nothing");
	}

	ASSERT_EQ(0, luf_counters_read_stable(&after));
	if (!luf_counters_equal(&before, &after)) {
		struct luf_counters d;

		luf_counters_delta(&after, &before, &d);
		luf_counters_log("observe=0 delta: ", &d, true);
	}
	ASSERT_TRUE(luf_counters_equal(&before, &after))
		TH_LOG("counters moved while observe=0");

	/* and the switch works the other way */
	ASSERT_EQ(0, luf_knob_write("observe", "1\n"));
	luf_run_opts_default(&o, LUF_WL_PAGEOUT);
	o.seconds = 0;
	o.max_rounds = 2;
	o.min_rounds = 1;
	measure(_metadata, self->ncpus, LUF_WL_PAGEOUT, &o, &m);
	ASSERT_GT(m.d.reclaim.unmaps, (uint64_t)0) TH_LOG("observe=1 again counts nothing");
	ASSERT_GT(m.d.reclaim.ro_folios, (uint64_t)0);
}

LUF_TEST_MAIN(true)
