// SPDX-License-Identifier: GPL-2.0
/*
 * luf_control: the control run.  The same workloads as luf_counters (the
 * libluf drivers) on the patched kernel WITHOUT luf.ko: they complete,
 * the stock counters in /proc/vmstat move (nr_tlb_remote_flush, and
 * pgsteal / pgmigrate_success / pgdemote for the workload in question),
 * the readers never see a wrong word, and no luf interface appears.
 *
 * Needs root, not luf.ko.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "luf_harness.h"

static void assert_no_luf(struct __test_metadata *_metadata)
{
	ASSERT_FALSE(luf_is_loaded()) TH_LOG("luf is loaded");
	ASSERT_FALSE(path_exists(LUF_DEBUGFS_DIR)) TH_LOG("%s exists", LUF_DEBUGFS_DIR);
	ASSERT_FALSE(path_exists(LUF_SYSFS_DIR)) TH_LOG("%s exists", LUF_SYSFS_DIR);
}

static void run(struct __test_metadata *_metadata, enum luf_wl kind,
		const struct luf_run_opts *o, struct luf_run_res *r)
{
	luf_run_ok(_metadata, kind, o, r);
	luf_assert_remote_flushes(_metadata, r);
	assert_no_luf(_metadata);
}

FIXTURE(control) {
	int unused;
};

FIXTURE_SETUP(control)
{
	if (nr_cpus() < 2)
		SKIP(return, "needs a CPU for the initiator and one for a reader");
	ASSERT_EQ(0, luf_ensure_unloaded());
	assert_no_luf(_metadata);
}

FIXTURE_TEARDOWN(control)
{
}

TEST_F(control, no_luf_interfaces)
{
	/* debugfs is mounted (main() checks), so absence means something */
	ASSERT_TRUE(path_exists("/sys/kernel/debug"));
	ASSERT_TRUE(path_exists("/sys/kernel/mm"));
	assert_no_luf(_metadata);
}

TEST_F_TIMEOUT(control, reclaim_pageout, 240)
{
	struct luf_run_opts o;
	struct luf_run_res r;

	LUF_WL_DEFAULTS(LUF_WL_PAGEOUT, &o);
	run(_metadata, LUF_WL_PAGEOUT, &o, &r);
	ASSERT_GT(r.pages_evicted, (uint64_t)0) TH_LOG("MADV_PAGEOUT evicted nothing");
}

TEST_F_TIMEOUT(control, reclaim_memcg, 240)
{
	struct luf_run_opts o;
	struct luf_run_res r;

	LUF_WL_DEFAULTS(LUF_WL_MEMCG, &o);
	run(_metadata, LUF_WL_MEMCG, &o, &r);
	ASSERT_GT(r.sys.pgsteal, (uint64_t)0) TH_LOG("vmstat pgsteal did not move");
	ASSERT_GT(r.memcg_pgsteal, (uint64_t)0) TH_LOG("memcg pgsteal is 0");
}

TEST_F_TIMEOUT(control, migrate_move_pages, 240)
{
	struct luf_run_opts o;
	struct luf_run_res r;

	LUF_WL_DEFAULTS(LUF_WL_MIGRATE, &o);
	run(_metadata, LUF_WL_MIGRATE, &o, &r);
	ASSERT_GT(r.pages_migrated, (uint64_t)0) TH_LOG("move_pages moved nothing");
	ASSERT_GE(r.sys.pgmigrate_success, r.pages_migrated)
		TH_LOG("pgmigrate_success +%" PRIu64 " for %" PRIu64 " pages moved",
		       r.sys.pgmigrate_success, r.pages_migrated);
}

TEST_F_TIMEOUT(control, demotion, 240)
{
	struct luf_run_opts o;
	struct luf_run_res r;

	LUF_WL_DEFAULTS(LUF_WL_DEMOTE, &o);
	run(_metadata, LUF_WL_DEMOTE, &o, &r);
	ASSERT_GT(r.sys.pgdemote, (uint64_t)0) TH_LOG("pgdemote_* did not move");
	ASSERT_GT(r.sys.pgmigrate_success, (uint64_t)0);
}

LUF_TEST_MAIN(false)
