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

#include "luf_test.h"

static void assert_no_luf(struct __test_metadata *_metadata)
{
	ASSERT_FALSE(luf_is_loaded()) TH_LOG("luf is loaded");
	ASSERT_FALSE(path_exists(LUF_DEBUGFS_DIR)) TH_LOG("%s exists", LUF_DEBUGFS_DIR);
	ASSERT_FALSE(path_exists(LUF_SYSFS_DIR)) TH_LOG("%s exists", LUF_SYSFS_DIR);
}

/*
 * Run luf_workload @kind with its default options into @w: it did its
 * work, flushed remote TLBs and left no luf interface behind.
 */
#define RUN_WL(kind, w) do {						\
	LUF_WL_RUN(w, true, kind);					\
	luf_assert_remote_flushes(_metadata, w);			\
	assert_no_luf(_metadata);					\
} while (0)

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
	struct luf_wl w;

	RUN_WL("reclaim", &w);
}

TEST_F_TIMEOUT(control, reclaim_memcg, 240)
{
	struct luf_wl w;

	RUN_WL("memcg", &w);
	ASSERT_LT(0, luf_wl_get(&w, "vmstat_pgsteal")) TH_LOG("vmstat pgsteal did not move");
}

TEST_F_TIMEOUT(control, migrate_move_pages, 480)
{
	struct luf_wl w;

	RUN_WL("migrate", &w);
	ASSERT_GE(luf_wl_get(&w, "vmstat_pgmigrate_success"), luf_wl_get(&w, "pages_migrated"))
		TH_LOG("pgmigrate_success did not count every page moved");
}

TEST_F_TIMEOUT(control, demotion, 240)
{
	struct luf_wl w;

	RUN_WL("demote", &w);
	ASSERT_LT(0, luf_wl_get(&w, "vmstat_pgmigrate_success"));
}

LUF_MAIN(0)
