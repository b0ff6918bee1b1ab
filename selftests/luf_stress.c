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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "luf_test.h"

#define NR_WL 2

struct shared {
	atomic_int stop;
	int ret[NR_WL];
	struct luf_run_res res[NR_WL];
};

FIXTURE(stress) {
	struct shared *sh;
	pid_t pid[NR_WL];
	enum luf_wl kind[NR_WL];
	int nr;
};

static void stop_workloads(FIXTURE_DATA(stress) *self, int *status)
{
	double t0 = luf_now();
	int i, st = -1;

	if (!self->sh)
		return;
	atomic_store(&self->sh->stop, 1);
	for (i = 0; i < self->nr; i++) {
		if (self->pid[i] <= 0)
			continue;
		st = -1;
		/* a round takes a few seconds at most; then give up */
		while (waitpid(self->pid[i], &st, WNOHANG) == 0) {
			if (luf_now() - t0 > 60) {
				kill(self->pid[i], SIGKILL);
				waitpid(self->pid[i], &st, 0);
				break;
			}
			luf_msleep(20);
		}
		if (status)
			status[i] = st;
		self->pid[i] = 0;
	}
}

FIXTURE_SETUP(stress)
{
	self->sh = NULL;
	self->nr = 0;
	if (nr_cpus() < 2)
		SKIP(return, "needs CPU 0 for the loader and another for the workloads");
	if (!path_exists(LUF_EXT4_DIR))
		SKIP(return, "%s does not exist", LUF_EXT4_DIR);
	ASSERT_EQ(0, luf_ensure_unloaded());
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
}

FIXTURE_TEARDOWN(stress)
{
	stop_workloads(self, NULL);
	luf_ensure_unloaded();
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

/* Start workload @kind in a child: initiator on @init_cpu, readers on @rd. */
static pid_t spawn(FIXTURE_DATA(stress) *self, enum luf_wl kind, int init_cpu,
		   const int *rd, int nrd)
{
	int idx = self->nr, i;
	struct luf_run_opts o;
	pid_t pid;

	luf_run_opts_default(&o, kind);
	o.size = (size_t)luf_env()->stress_size_mb << 20;
	o.initiator_cpu = init_cpu;
	o.nr_readers = nrd;
	for (i = 0; i < nrd; i++)
		o.reader_cpus[i] = rd[i];
	o.seconds = 1e9;
	o.min_rounds = 1;
	o.stop = &self->sh->stop;
	/*
	 * Duty-cycle the workloads (busy about a third of the time): with every
	 * vCPU busy, the text patching IPIs and RCU grace periods of a load
	 * or unload wait for the host to schedule busy vCPU threads, about
	 * 4 s per cycle instead of 0.3 s on a 2-core TCG host, so 100 cycles
	 * would not fit in 5 minutes; this gives about 1.5 s per cycle.
	 * Readers that sleep stay in the mm's cpumask, so reclaim and
	 * migration still batch their flushes.
	 */
	o.round_pause_ms = luf_env()->stress_round_pause_ms;
	o.reader_pause_us = luf_env()->stress_reader_pause_us;

	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		self->sh->ret[idx] = luf_run(kind, &o, &self->sh->res[idx]);
		_exit(self->sh->ret[idx] ? 1 : 0);
	}
	if (pid > 0) {
		self->pid[idx] = pid;
		self->kind[idx] = kind;
		self->nr++;
	}
	return pid;
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
	ASSERT_LT(0, spawn(self, LUF_WL_PAGEOUT, wc[0], wc + 1, nwc - 1));
	/* migration: initiator on the last, readers on the others */
	if (migrate) {
		for (i = 0; i < nwc - 1; i++)
			rd[i] = wc[i];
		ASSERT_LT(0, spawn(self, LUF_WL_MIGRATE, wc[nwc - 1], rd, nwc - 1));
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
	for (i = 0; i < self->nr; i++) {
		struct luf_run_res *r = &self->sh->res[i];
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "%s: ", luf_wl_name(self->kind[i]));
		luf_run_log(prefix, r);
		ASSERT_TRUE(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0)
			TH_LOG("%s workload failed (status 0x%x): %s",
			       luf_wl_name(self->kind[i]), status[i], r->err);
		ASSERT_EQ((uint64_t)0, r->bad_words);
		ASSERT_GT(r->pages_read, (uint64_t)0);
		if (self->kind[i] == LUF_WL_PAGEOUT) {
			ASSERT_GT(r->pages_evicted, (uint64_t)0);
		} else {
			ASSERT_GT(r->pages_migrated, (uint64_t)0);
		}
	}
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
