// SPDX-License-Identifier: GPL-2.0
/*
 * luf_stress: load and unload luf.ko 100 times (LUF_STRESS_CYCLES) from
 * CPU 0 while a reclaim workload (MADV_PAGEOUT) and a migration workload
 * (move_pages node 0 <-> 1) run in child processes on CPUs 1-3, so the
 * hooks are switched on and off under live unmaps and batched flushes.
 *
 * Each cycle enables LUF and MIGRC with max_defer_ms=1, so that pages are
 * parked while the worker releases them and the unload drains whatever is
 * held at that moment (a page left parked would leak and warn at rmmod).
 *
 * Asserts: every load and unload succeeds; the module counted something
 * while loaded and deferred something over the run (the hooks really were
 * live during the workloads); the
 * workloads complete, make progress and never read a wrong word; the
 * module is gone afterwards; and MemFree (plus the per-CPU free lists),
 * measured after drop_caches with the workloads stopped and their files
 * removed, is within 1% of the level before the first load.
 *
 * Tuning (environment): LUF_STRESS_CYCLES (100), LUF_STRESS_DEADLINE_S
 * (540: stop cycling and fail after this long), LUF_STRESS_SIZE_MB (8),
 * LUF_STRESS_ROUND_PAUSE_MS (2000), LUF_STRESS_READER_PAUSE_US (2000).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "luf_test.h"

#define NR_WL 2

FIXTURE(stress) {
	struct luf_wl wl[NR_WL];
	int nr;
};

/* Stop the workloads; @status[i]: luf_wl_wait() of workload i */
static void stop_workloads(FIXTURE_DATA(stress) *self, int *status)
{
	int i, st;

	for (i = 0; i < self->nr; i++)
		luf_wl_stop(&self->wl[i]);
	/* each ends after its current round, within a few seconds (60 s) */
	for (i = 0; i < self->nr; i++) {
		st = luf_wl_wait(&self->wl[i], 60);
		if (status)
			status[i] = st;
	}
}

FIXTURE_SETUP(stress)
{
	self->nr = 0;
	if (nr_cpus() < 2)
		SKIP(return, "needs CPU 0 for the loader and another for the workloads");
	if (!path_exists(LUF_EXT4_DIR))
		SKIP(return, "%s does not exist", LUF_EXT4_DIR);
	ASSERT_EQ(0, luf_ensure_unloaded());
}

FIXTURE_TEARDOWN(stress)
{
	stop_workloads(self, NULL);
	luf_ensure_unloaded();
}

/* Pages on the per-CPU free lists (sum of "count:" in /proc/zoneinfo) */
static int zoneinfo_pcp_pages(uint64_t *pages)
{
	unsigned long long v;
	char line[256];
	FILE *f;

	f = fopen("/proc/zoneinfo", "re");
	if (!f)
		return -errno;
	*pages = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %llu", &v) == 1)
			*pages += v;
	fclose(f);
	return 0;
}

/* Where memory sits besides MemFree, for a MemFree mismatch. */
static void log_memory(const char *when)
{
	static const char *const fields[] = {
		"MemFree", "Cached", "Slab", "Percpu", "PageTables",
		"KernelStack", "VmallocUsed",
	};
	uint64_t v, pcp = 0;
	char buf[512];
	size_t i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (!meminfo_kb(fields[i], &v))
			n += snprintf(buf + n, sizeof(buf) - n, " %s=%" PRIu64,
				      fields[i], v);
	zoneinfo_pcp_pages(&pcp);
	fprintf(stderr, "# %s (kB):%s pcp_lists=%" PRIu64 "\n", when, buf,
		pcp * (uint64_t)sysconf(_SC_PAGESIZE) / 1024);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Free memory after drop_caches, median of three samples: MemFree plus the
 * pages sitting on the per-CPU free lists, which MemFree does not count and
 * which alone move it by up to ~0.6% between samples here.
 */
static uint64_t memfree_settled(struct __test_metadata *_metadata)
{
	uint64_t v[3], pcp;
	int i;

	ASSERT_EQ(0, drop_caches());
	for (i = 0; i < 3; i++) {
		luf_msleep(300);
		ASSERT_EQ(0, meminfo_kb("MemFree", &v[i]));
		ASSERT_EQ(0, zoneinfo_pcp_pages(&pcp));
		v[i] += pcp * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	}
	qsort(v, 3, sizeof(v[0]), cmp_u64);
	return v[1];
}

/*
 * Start luf_workload @kind: initiator on @init_cpu, readers on @rd.
 * Duty-cycled (busy about a third of the time): with every vCPU busy,
 * the text patching IPIs and RCU grace periods of a load or unload wait
 * for the host to schedule busy vCPU threads, about 4 s per cycle
 * instead of 0.3 s on a 2-core TCG host, so 100 cycles would not fit in
 * 5 minutes; this gives about 1.5 s per cycle.  Readers that sleep stay
 * in the mm's cpumask, so reclaim and migration still batch their
 * flushes.  It runs until stop_workloads(), or at most 20 minutes.
 */
static int spawn(FIXTURE_DATA(stress) *self, const char *kind, int init_cpu,
		 const int *rd, int nrd)
{
	char size[16], cpu[16], cpus[64] = "", rpause[16], dpause[16];
	const char *const args[] = {
		kind, "--size-mb", size, "--cpu", cpu, "--reader-cpus", cpus,
		"--seconds", "1200", "--max-seconds", "1200",
		"--round-pause-ms", rpause, "--reader-pause-us", dpause, NULL,
	};
	const struct luf_env *e = luf_env();
	int i, n = 0, ret;

	snprintf(size, sizeof(size), "%u", e->stress_size_mb);
	snprintf(cpu, sizeof(cpu), "%d", init_cpu);
	for (i = 0; i < nrd; i++)
		n += snprintf(cpus + n, sizeof(cpus) - n, "%s%d", i ? "," : "", rd[i]);
	snprintf(rpause, sizeof(rpause), "%u", e->stress_round_pause_ms);
	snprintf(dpause, sizeof(dpause), "%u", e->stress_reader_pause_us);
	ret = luf_wl_start(&self->wl[self->nr], args);
	if (!ret)
		self->nr++;
	return ret;
}

TEST_F_TIMEOUT(stress, load_unload_under_load, 570)
{
	int cycles, i, ret, ncpu = nr_cpus(), nwc, status[NR_WL] = { 0 };
	uint64_t free_before, free_after, diff, seen_reclaim = 0, seen_migrate = 0;
	uint64_t seen_deferred = 0, deferred, v;
	int wc[3], rd[3];
	bool migrate;
	double t0, t_load = 0, t_unload = 0;
	unsigned int deadline;

	cycles = luf_env()->stress_cycles;
	deadline = luf_env()->stress_deadline_s;
	migrate = path_exists(LUF_TMP_DIR) && numa_node_has_memory(0) &&
		  numa_node_has_memory(1);
	if (!migrate)
		TH_LOG("no NUMA node 1 or %s: reclaim workload only", LUF_TMP_DIR);

	ASSERT_EQ(0, pin_to_cpu(0));
	free_before = memfree_settled(_metadata);
	log_memory("before");

	/* workload CPUs: 1..3 (fewer on a smaller machine) */
	nwc = ncpu - 1 < 3 ? ncpu - 1 : 3;
	for (i = 0; i < nwc; i++)
		wc[i] = i + 1;
	/* reclaim: initiator on the first, readers on the others */
	ASSERT_EQ(0, spawn(self, "reclaim", wc[0], wc + 1, nwc - 1));
	/* migration: initiator on the last, readers on the others */
	if (migrate) {
		for (i = 0; i < nwc - 1; i++)
			rd[i] = wc[i];
		ASSERT_EQ(0, spawn(self, "migrate", wc[nwc - 1], rd, nwc - 1));
	}
	luf_msleep(1000);	/* let the workloads get going */

	t0 = luf_now();
	for (i = 0; i < cycles; i++) {
		double t1 = luf_now(), t2;

		/* leave time to stop the workloads and measure MemFree */
		if (t1 - t0 > deadline)
			break;

		ret = luf_load("");
		t2 = luf_now();
		t_load += t2 - t1;
		ASSERT_EQ(0, ret) TH_LOG("cycle %d: load: %s", i, strerror(-ret));
		ASSERT_TRUE(path_exists(LUF_STAT_FILE))
			TH_LOG("cycle %d: no counters", i);
		/*
		 * Defer for real, and release on a 1 ms timer: pages are
		 * parked while the worker releases, and the unload drains
		 * whatever is held at that moment.
		 */
		ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "1"));
		ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
		ASSERT_EQ(0, luf_knob_write(KNOB(migrc_enabled), "1"));
		/* every fourth cycle also flips observe off and on */
		if (i % 4 == 3) {
			ASSERT_EQ(0, luf_knob_write(KNOB(observe), "0"));
			luf_msleep(5);
			ASSERT_EQ(0, luf_knob_write(KNOB(observe), "1"));
		}
		luf_msleep(20);
		ASSERT_EQ(0, luf_counter_read(CTR_PATH(reclaim, unmaps), &v));
		seen_reclaim += v;
		ASSERT_EQ(0, luf_counter_read(CTR_PATH(migrate, unmaps), &v));
		seen_migrate += v;
		if (!luf_counter_read(CTR(deferred_folios), &deferred))
			seen_deferred += deferred;
		t1 = luf_now();
		ret = luf_unload();
		t_unload += luf_now() - t1;
		ASSERT_EQ(0, ret) TH_LOG("cycle %d: unload: %s", i, strerror(-ret));
		ASSERT_FALSE(path_exists(LUF_SYSFS_DIR)) TH_LOG("cycle %d", i);
		ASSERT_FALSE(path_exists(LUF_DEBUGFS_DIR)) TH_LOG("cycle %d", i);
		if ((i + 1) % 10 == 0)
			TH_LOG("%d cycles, %.1f s: load %.0f ms, unload %.0f ms per cycle",
			       i + 1, luf_now() - t0, t_load * 1000 / (i + 1),
			       t_unload * 1000 / (i + 1));
	}
	TH_LOG("%d load/unload cycles in %.1f s; unmaps seen while loaded: reclaim %" PRIu64
	       ", migrate %" PRIu64 ", deferred %" PRIu64, i, luf_now() - t0,
	       seen_reclaim, seen_migrate, seen_deferred);
	ASSERT_GT(seen_deferred, (uint64_t)0)
		TH_LOG("nothing was deferred: no park/release to race");
	ASSERT_EQ(cycles, i)
		TH_LOG("only %d of %d cycles in %u s: load/unload is too slow under load",
		       i, cycles, deadline);

	stop_workloads(self, status);
	for (i = 0; i < self->nr; i++)
		luf_wl_check(_metadata, &self->wl[i], status[i], true);
	ASSERT_GT(seen_reclaim + seen_migrate, (uint64_t)0)
		TH_LOG("the module never saw an unmap: the stress exercised nothing");

	ASSERT_FALSE(luf_is_loaded());
	ASSERT_FALSE(path_exists(LUF_SYSFS_DIR));
	ASSERT_FALSE(path_exists(LUF_DEBUGFS_DIR));

	free_after = memfree_settled(_metadata);
	log_memory("after");
	diff = free_after > free_before ? free_after - free_before : free_before - free_after;
	TH_LOG("MemFree + pcp lists before %" PRIu64 " kB, after %" PRIu64 " kB",
	       free_before, free_after);
	ASSERT_LE(diff * 100, free_before)
		TH_LOG("free memory moved by %" PRIu64 " kB (more than 1%%)", diff);
}

LUF_MAIN(LUF_NEED_MODULE)
