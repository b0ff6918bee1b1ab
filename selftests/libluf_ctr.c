// SPDX-License-Identifier: GPL-2.0
/*
 * libluf: luf.ko's knobs (/sys/kernel/mm/luf) and counters
 * (/sys/kernel/debug/luf), see libluf.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libluf.h"

/* ---- knobs ---------------------------------------------------------- */

const char *const luf_knob_names[LUF_NR_KNOBS] = {
	"enabled", "migrc_enabled", "observe", "max_pending_kb", "max_defer_ms",
	"aging_pct",
};

void luf_knob_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", LUF_SYSFS_DIR, name);
}

int luf_knob_read(const char *name, uint64_t *val)
{
	char path[256];

	luf_knob_path(name, path, sizeof(path));
	return read_u64_strict(path, val);
}

int luf_knob_write(const char *name, const char *s)
{
	char path[256];

	luf_knob_path(name, path, sizeof(path));
	return write_file_str(path, s);
}

/* ---- counters ------------------------------------------------------- */

const char *const luf_reason_names[LUF_NR_REASONS] = {
	"compaction", "memory_failure", "memory_hotplug", "syscall_or_cpuset",
	"mempolicy_mbind", "numa_misplaced", "contig_range", "longterm_pin",
	"demotion", "damon",
};

static const char *const side_fields[5] = {
	"unmaps", "ro_folios", "flush_rounds", "flush_rounds_ro_only",
	"flush_cpus",
};

void luf_counter_file_name(int i, char *buf, size_t len)
{
	if (i < 5)
		snprintf(buf, len, "reclaim_%s", side_fields[i]);
	else if (i < 10)
		snprintf(buf, len, "migrate_%s", side_fields[i - 5]);
	else
		snprintf(buf, len, "migrate_%s_%s", luf_reason_names[(i - 10) / 2],
			 (i - 10) % 2 ? "ro_folios" : "unmaps");
}

static uint64_t *side_slot(struct luf_side *s, int i)
{
	switch (i) {
	case 0: return &s->unmaps;
	case 1: return &s->ro_folios;
	case 2: return &s->flush_rounds;
	case 3: return &s->flush_rounds_ro_only;
	default: return &s->flush_cpus;
	}
}

static uint64_t *counter_slot(struct luf_counters *c, int i)
{
	if (i < 5)
		return side_slot(&c->reclaim, i);
	if (i < 10)
		return side_slot(&c->migrate, i - 5);
	if ((i - 10) % 2)
		return &c->reason_ro_folios[(i - 10) / 2];
	return &c->reason_unmaps[(i - 10) / 2];
}

int luf_counter_read(const char *name, uint64_t *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", LUF_DEBUGFS_DIR, name);
	return read_u64_strict(path, val);
}

int luf_counter_read_list(const char *const *names, uint64_t *const *vals,
			  size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = luf_counter_read(names[i], vals[i]);
		if (err)
			return err;
	}
	return 0;
}

#define LUF_EV(name, field) { name, offsetof(struct luf_ev, field) }
static const struct {
	const char *name;
	size_t off;
} luf_ev_files[] = {
	LUF_EV("deferred_folios", deferred),
	LUF_EV("held_pages", held),
	LUF_EV("held_pages_total", held_total),
	LUF_EV("released_pages", released),
	LUF_EV("pending_folios", pending),
	LUF_EV("flushes", flushes),
	LUF_EV("forced_file_change", fc),
	LUF_EV("forced_write_fault", wf),
	LUF_EV("forced_timer", timer),
	LUF_EV("forced_disable", disable),
	LUF_EV("forced_aging", aging),
	LUF_EV("released_zone_low", rel_zone_low),
	LUF_EV("released_shrinker", rel_shrinker),
	LUF_EV("released_isolate", rel_isolate),
	LUF_EV("migrc_retained", retained),
	LUF_EV("tlbi_avoided", tlbi_avoided),
};

int luf_ev_read(struct luf_ev *e)
{
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(luf_ev_files); i++) {
		uint64_t *v = (uint64_t *)((char *)e + luf_ev_files[i].off);

		err = luf_counter_read(luf_ev_files[i].name, v);
		if (err == -ENOENT)
			*v = 0;
		else if (err)
			return err;
	}
	return 0;
}

void luf_ev_log(const char *what, const struct luf_ev *e)
{
	size_t i;

	fprintf(stderr, "# %s:", what);
	for (i = 0; i < ARRAY_SIZE(luf_ev_files); i++)
		fprintf(stderr, " %s=%" PRIu64, luf_ev_files[i].name,
			*(const uint64_t *)((const char *)e + luf_ev_files[i].off));
	fprintf(stderr, "\n");
}

int luf_counters_read(struct luf_counters *c)
{
	char name[96];
	int i, err;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < LUF_NR_COUNTER_FILES; i++) {
		luf_counter_file_name(i, name, sizeof(name));
		err = luf_counter_read(name, counter_slot(c, i));
		if (err)
			return err;
	}
	return 0;
}

int luf_counters_read_stable(struct luf_counters *c)
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

void luf_counters_delta(const struct luf_counters *after,
			const struct luf_counters *before,
			struct luf_counters *delta)
{
	struct luf_counters a = *after, b = *before;
	int i;

	for (i = 0; i < LUF_NR_COUNTER_FILES; i++)
		*counter_slot(delta, i) = *counter_slot(&a, i) - *counter_slot(&b, i);
}

bool luf_counters_equal(const struct luf_counters *a,
			const struct luf_counters *b)
{
	struct luf_counters x = *a, y = *b;
	int i;

	for (i = 0; i < LUF_NR_COUNTER_FILES; i++)
		if (*counter_slot(&x, i) != *counter_slot(&y, i))
			return false;
	return true;
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

bool luf_counters_check(const struct luf_counters *c, int ncpus,
			char *why, size_t len)
{
	uint64_t su = 0, sr = 0;
	int i;

	if (!side_check("reclaim", &c->reclaim, ncpus, why, len) ||
	    !side_check("migrate", &c->migrate, ncpus, why, len))
		return false;
	for (i = 0; i < LUF_NR_REASONS; i++) {
		if (c->reason_ro_folios[i] > c->reason_unmaps[i]) {
			snprintf(why, len,
				 "migrate_%s_ro_folios %" PRIu64 " > migrate_%s_unmaps %" PRIu64,
				 luf_reason_names[i], c->reason_ro_folios[i],
				 luf_reason_names[i], c->reason_unmaps[i]);
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

void luf_counters_log(const char *prefix, const struct luf_counters *c,
		      bool nonzero)
{
	struct luf_counters x = *c;
	char name[96];
	uint64_t v;
	int i;

	for (i = 0; i < LUF_NR_COUNTER_FILES; i++) {
		v = *counter_slot(&x, i);
		if (nonzero && !v)
			continue;
		luf_counter_file_name(i, name, sizeof(name));
		fprintf(stderr, "# %s%s=%" PRIu64 "\n", prefix, name, v);
	}
}
