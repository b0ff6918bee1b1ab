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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "luf_test.h"

/*
 * The counters per path, <side>_<field>: a field for every line of the
 * module's list (luf_stat_defs.h); and migrate_<reason>_<field>.
 */
struct luf_side {
#define LUF_PATH_STAT(id, name)	uint64_t name;
#include "luf_stat_defs.h"
};

#define LUF_MAX_REASONS		16

struct luf_counters {
	struct luf_side reclaim;
	struct luf_side migrate;
	/* the migrate reasons the module names, in its order */
	int nr_reasons;
	char reason[LUF_MAX_REASONS][LUF_STAT_NAME];
	uint64_t reason_unmaps[LUF_MAX_REASONS];
	uint64_t reason_ro_folios[LUF_MAX_REASONS];
};

/* The fields of struct luf_side: the module's lines per path, in its order */
static const struct {
	const char *name;
	size_t off;
} side_fields[] = {
#define LUF_PATH_STAT(id, name)	{ #name, offsetof(struct luf_side, name) },
#include "luf_stat_defs.h"
};

#define NR_SIDE_FIELDS	((int)ARRAY_SIZE(side_fields))

static uint64_t *side_slot(struct luf_side *s, int i)
{
	return (uint64_t *)((char *)s + side_fields[i].off);
}

/* "migrate_<reason>_<field>" with a non-empty <reason>: copy it to @r */
static bool reason_of(const char *name, const char *field, char *r)
{
	size_t n = strlen(name), f = strlen(field), p = strlen("migrate_");

	if (n <= p + f + 1 || strncmp(name, "migrate_", p) ||
	    strcmp(name + n - f, field) || name[n - f - 1] != '_' ||
	    n - f - 1 - p >= LUF_STAT_NAME)
		return false;
	memcpy(r, name + p, n - f - 1 - p);
	r[n - f - 1 - p] = '\0';
	return true;
}

static int luf_counters_reason(const struct luf_counters *c, const char *name)
{
	int i;

	for (i = 0; i < c->nr_reasons; i++)
		if (!strcmp(c->reason[i], name))
			return i;
	return -1;
}

static int luf_counters_read(struct luf_counters *c)
{
	struct luf_stat *s = malloc(sizeof(*s));
	char name[LUF_STAT_NAME + 16], r[LUF_STAT_NAME];
	int i, k, err;

	if (!s)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	err = luf_stat_read(s);
	for (i = 0; !err && i < NR_SIDE_FIELDS; i++) {
		snprintf(name, sizeof(name), "reclaim_%s", side_fields[i].name);
		err = luf_stat_get(s, name, side_slot(&c->reclaim, i));
		snprintf(name, sizeof(name), "migrate_%s", side_fields[i].name);
		if (!err)
			err = luf_stat_get(s, name, side_slot(&c->migrate, i));
	}
	for (i = 0; !err && i < s->n; i++) {
		bool ro = reason_of(s->line[i].name, "ro_folios", r);

		if (!ro && !reason_of(s->line[i].name, "unmaps", r))
			continue;
		k = luf_counters_reason(c, r);
		if (k < 0) {
			if (c->nr_reasons == LUF_MAX_REASONS) {
				err = -E2BIG;
				break;
			}
			k = c->nr_reasons++;
			strcpy(c->reason[k], r);
		}
		if (ro)
			c->reason_ro_folios[k] = s->line[i].val;
		else
			c->reason_unmaps[k] = s->line[i].val;
	}
	free(s);
	return err;
}

static void luf_counters_delta(const struct luf_counters *after,
			       const struct luf_counters *before,
			       struct luf_counters *delta)
{
	struct luf_counters a = *after, b = *before;
	int i;

	*delta = a;
	for (i = 0; i < NR_SIDE_FIELDS; i++) {
		*side_slot(&delta->reclaim, i) -= *side_slot(&b.reclaim, i);
		*side_slot(&delta->migrate, i) -= *side_slot(&b.migrate, i);
	}
	for (i = 0; i < a.nr_reasons && i < b.nr_reasons; i++) {
		delta->reason_unmaps[i] -= b.reason_unmaps[i];
		delta->reason_ro_folios[i] -= b.reason_ro_folios[i];
	}
}

static bool luf_counters_equal(const struct luf_counters *a,
			       const struct luf_counters *b)
{
	int i;

	if (memcmp(&a->reclaim, &b->reclaim, sizeof(a->reclaim)) ||
	    memcmp(&a->migrate, &b->migrate, sizeof(a->migrate)) ||
	    a->nr_reasons != b->nr_reasons)
		return false;
	for (i = 0; i < a->nr_reasons; i++)
		if (a->reason_unmaps[i] != b->reason_unmaps[i] ||
		    a->reason_ro_folios[i] != b->reason_ro_folios[i])
			return false;
	return true;
}

/* Re-read until two consecutive snapshots agree (quiescent system). */
static int luf_counters_read_stable(struct luf_counters *c)
{
	struct luf_counters again;
	int i, err;

	err = luf_counters_read(c);
	for (i = 0; !err && i < 50; i++) {
		err = luf_counters_read(&again);
		if (err)
			break;
		if (luf_counters_equal(c, &again))
			return 0;
		*c = again;
		luf_msleep(20);
	}
	return err ? err : -EAGAIN;
}

static bool side_check(const char *side, const struct luf_side *s, int ncpus,
		       char *why, size_t len)
{
	if (s->ro_folios > s->unmaps) {
		snprintf(why, len, "%s_ro_folios %" PRIu64 " > %s_unmaps %" PRIu64,
			 side, s->ro_folios, side, s->unmaps);
		return false;
	}
	if (s->flush_rounds_ro_only > s->flush_rounds) {
		snprintf(why, len,
			 "%s_flush_rounds_ro_only %" PRIu64 " > %s_flush_rounds %" PRIu64,
			 side, s->flush_rounds_ro_only, side, s->flush_rounds);
		return false;
	}
	if (s->flush_cpus > s->flush_rounds_ro_only * (uint64_t)(ncpus - 1)) {
		snprintf(why, len,
			 "%s_flush_cpus %" PRIu64 " > %s_flush_rounds_ro_only %" PRIu64
			 " * (%d - 1)", side, s->flush_cpus, side,
			 s->flush_rounds_ro_only, ncpus);
		return false;
	}
	return true;
}

/*
 * The documented invariants: ro_folios <= unmaps, ro_only <= rounds,
 * flush_cpus <= ro_only * (ncpus - 1) for both sides; per reason ro <=
 * unmaps; sums over reasons equal the migrate totals.  True if all hold;
 * otherwise @why describes the first violation.
 */
static bool luf_counters_check(const struct luf_counters *c, int ncpus,
			       char *why, size_t len)
{
	uint64_t su = 0, sr = 0;
	int i;

	if (!side_check("reclaim", &c->reclaim, ncpus, why, len) ||
	    !side_check("migrate", &c->migrate, ncpus, why, len))
		return false;
	for (i = 0; i < c->nr_reasons; i++) {
		if (c->reason_ro_folios[i] > c->reason_unmaps[i]) {
			snprintf(why, len,
				 "migrate_%s_ro_folios %" PRIu64 " > migrate_%s_unmaps %" PRIu64,
				 c->reason[i], c->reason_ro_folios[i],
				 c->reason[i], c->reason_unmaps[i]);
			return false;
		}
		su += c->reason_unmaps[i];
		sr += c->reason_ro_folios[i];
	}
	if (su != c->migrate.unmaps) {
		snprintf(why, len, "sum of migrate_<reason>_unmaps %" PRIu64
			 " != migrate_unmaps %" PRIu64, su, c->migrate.unmaps);
		return false;
	}
	if (sr != c->migrate.ro_folios) {
		snprintf(why, len, "sum of migrate_<reason>_ro_folios %" PRIu64
			 " != migrate_ro_folios %" PRIu64, sr, c->migrate.ro_folios);
		return false;
	}
	if (len)
		why[0] = '\0';
	return true;
}

/* Every counter as "# <prefix>name=value" (nonzero ones only if @nonzero) */
static void luf_counters_log(const char *prefix, const struct luf_counters *c,
			     bool nonzero)
{
	struct luf_counters x = *c;
	const char *side;
	uint64_t v;
	int i, j;

	for (j = 0; j < 2; j++) {
		side = j ? "migrate" : "reclaim";
		for (i = 0; i < NR_SIDE_FIELDS; i++) {
			v = *side_slot(j ? &x.migrate : &x.reclaim, i);
			if (!nonzero || v)
				fprintf(stderr, "# %s%s_%s=%" PRIu64 "\n", prefix,
					side, side_fields[i].name, v);
		}
	}
	for (i = 0; i < x.nr_reasons; i++) {
		if (!nonzero || x.reason_unmaps[i])
			fprintf(stderr, "# %smigrate_%s_unmaps=%" PRIu64 "\n",
				prefix, x.reason[i], x.reason_unmaps[i]);
		if (!nonzero || x.reason_ro_folios[i])
			fprintf(stderr, "# %smigrate_%s_ro_folios=%" PRIu64 "\n",
				prefix, x.reason[i], x.reason_ro_folios[i]);
	}
}

struct measured {
	struct luf_wl w;
	struct luf_counters before, after, d;
};

/*
 * The end of a measured run (m->before was read, m->w run): the snapshot
 * after it, the delta, and the invariants.
 */
static void measure_end(struct __test_metadata *_metadata, int ncpus,
			struct measured *m)
{
	char why[256];

	ASSERT_EQ(0, luf_counters_read_stable(&m->after));
	luf_counters_delta(&m->after, &m->before, &m->d);
	luf_counters_log("delta ", &m->d, true);

	ASSERT_TRUE(luf_counters_check(&m->after, ncpus, why, sizeof(why)))
		TH_LOG("invariant broken since load: %s", why);
	ASSERT_TRUE(luf_counters_check(&m->d, ncpus, why, sizeof(why)))
		TH_LOG("invariant broken over the run: %s", why);
}

/*
 * Run luf_workload with the arguments after @worked (LUF_WL_RUN()) and
 * take counter snapshots around it into @m.
 */
#define MEASURE(m, worked, ...) do {					\
	struct measured *m_ = (m);					\
									\
	ASSERT_EQ(0, luf_counters_read_stable(&m_->before));		\
	LUF_WL_RUN(&m_->w, worked, __VA_ARGS__);			\
	measure_end(_metadata, self->ncpus, m_);			\
} while (0)

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
	ret = luf_module_fresh("");
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	ASSERT_EQ(0, luf_knob_read(KNOB(observe), &v));
	ASSERT_NE((uint64_t)0, v) TH_LOG("observe is off: the counters below stay 0");
}

FIXTURE_TEARDOWN(counters)
{
	luf_ensure_unloaded();
}

TEST_F_TIMEOUT(counters, reset_on_load, 180)
{
	struct luf_counters c, zero;
	struct measured m;

	REQUIRE_DIR(LUF_EXT4_DIR);
	MEASURE(&m, false, "reclaim", "--rounds", "1");
	ASSERT_GT(m.after.reclaim.unmaps, (uint64_t)0)
		TH_LOG("nothing counted, so a reset would prove nothing");

	ASSERT_EQ(0, luf_unload());
	ASSERT_EQ(0, luf_load(""));
	ASSERT_EQ(0, luf_counters_read(&c));
	/* the same counters, all 0 */
	memset(&zero, 0, sizeof(zero));
	zero.nr_reasons = c.nr_reasons;
	memcpy(zero.reason, c.reason, sizeof(zero.reason));
	if (!luf_counters_equal(&c, &zero))
		luf_counters_log("after reload: ", &c, true);
	ASSERT_TRUE(luf_counters_equal(&c, &zero))
		TH_LOG("a freshly loaded module has nonzero counters");
}

/* Side @d (delta) counted unmaps and flushed read-only-only rounds */
static void assert_side_moved(struct __test_metadata *_metadata,
			      const struct luf_side *d)
{
	ASSERT_GT(d->unmaps, (uint64_t)0);
	ASSERT_GT(d->ro_folios, (uint64_t)0);
	ASSERT_GT(d->flush_rounds, (uint64_t)0);
	ASSERT_GT(d->flush_rounds_ro_only, (uint64_t)0);
	if (LUF_FLUSH_IPIS)
		ASSERT_GT(d->flush_cpus, (uint64_t)0);
}

static void assert_reclaim_moved(struct __test_metadata *_metadata,
				 const struct measured *m)
{
	assert_side_moved(_metadata, &m->d.reclaim);
	luf_assert_remote_flushes(_metadata, &m->w);
}

/* Migrations for reason @why were counted (delta) */
static void assert_reason_moved(struct __test_metadata *_metadata,
				const struct measured *m, const char *why)
{
	int r = luf_counters_reason(&m->d, why);

	ASSERT_LE(0, r) TH_LOG("no migrate_%s_* counters in %s", why, LUF_STAT_FILE);
	ASSERT_GT(m->d.reason_unmaps[r], (uint64_t)0) TH_LOG("%s", why);
	ASSERT_GT(m->d.reason_ro_folios[r], (uint64_t)0) TH_LOG("%s", why);
}

TEST_F_TIMEOUT(counters, reclaim_pageout, 240)
{
	struct measured m;

	MEASURE(&m, true, "reclaim");
	assert_reclaim_moved(_metadata, &m);
	/*
	 * Every page MADV_PAGEOUT evicted was mapped only by our read-only
	 * PTEs, so it was unmapped as a read-only folio: allow 10% for
	 * unmaps the kernel did not batch.
	 */
	ASSERT_GE((int64_t)m.d.reclaim.ro_folios * 10, luf_wl_get(&m.w, "pageouts") * 9)
		TH_LOG("reclaim_ro_folios +%" PRIu64 " for %" PRId64 " evicted pages",
		       m.d.reclaim.ro_folios, luf_wl_get(&m.w, "pageouts"));
}

TEST_F_TIMEOUT(counters, reclaim_memcg, 240)
{
	struct measured m;

	MEASURE(&m, true, "memcg");
	assert_reclaim_moved(_metadata, &m);
}

TEST_F_TIMEOUT(counters, migrate_move_pages, 480)
{
	struct measured m;

	MEASURE(&m, true, "migrate");
	assert_side_moved(_metadata, &m.d.migrate);
	assert_reason_moved(_metadata, &m, "syscall_or_cpuset");
	/* sums over reasons == totals is part of luf_counters_check() */
}

TEST_F_TIMEOUT(counters, demotion, 240)
{
	struct measured m;

	MEASURE(&m, true, "demote");
	assert_reason_moved(_metadata, &m, "demotion");
}

TEST_F_TIMEOUT(counters, observe_off, 240)
{
	struct luf_counters before, after;
	struct measured m;
	struct luf_wl w;
	uint64_t v;

	REQUIRE_DIR(LUF_EXT4_DIR);
	ASSERT_EQ(0, luf_knob_write(KNOB(observe), "0"));
	ASSERT_EQ(0, luf_knob_read(KNOB(observe), &v));
	ASSERT_EQ((uint64_t)0, v);

	ASSERT_EQ(0, luf_counters_read_stable(&before));
	LUF_WL_RUN(&w, true, "reclaim", "--rounds", "3");
	luf_assert_remote_flushes(_metadata, &w);

	if (path_exists(LUF_TMP_DIR) && numa_node_has_memory(1))
		LUF_WL_RUN(&w, true, "migrate", "--rounds", "4");

	ASSERT_EQ(0, luf_counters_read_stable(&after));
	if (!luf_counters_equal(&before, &after)) {
		struct luf_counters d;

		luf_counters_delta(&after, &before, &d);
		luf_counters_log("observe=0 delta: ", &d, true);
	}
	ASSERT_TRUE(luf_counters_equal(&before, &after))
		TH_LOG("counters moved while observe=0");

	/* and the switch works the other way */
	ASSERT_EQ(0, luf_knob_write(KNOB(observe), "1\n"));
	MEASURE(&m, false, "reclaim", "--rounds", "1");
	ASSERT_GT(m.d.reclaim.unmaps, (uint64_t)0) TH_LOG("observe=1 again counts nothing");
	ASSERT_GT(m.d.reclaim.ro_folios, (uint64_t)0);
}

LUF_MAIN(LUF_NEED_MODULE)
