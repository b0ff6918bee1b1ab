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
#include <unistd.h>

#include "libluf.h"

/* ---- knobs ---------------------------------------------------------- */

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

#define min(a, b)	((a) < (b) ? (a) : (b))

const char *luf_knob_name(int i)
{
	int n = 0;

#define LUF_KNOB(knob, ...)	do { if (n++ == i) return #knob; } while (0)
#include "luf_knob_defs.h"
#undef LUF_KNOB
	return NULL;
}

int luf_knob_limits(const char *name, uint64_t *def, uint64_t *lo, uint64_t *hi)
{
	uint64_t ram_kb, page_kb = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	int ret = meminfo_kb("MemTotal", &ram_kb);

	if (ret)
		return ret;
#define LUF_KNOB(knob, d, l, h, desc)		\
	do {					\
		if (!strcmp(name, #knob)) {	\
			*def = (d);		\
			*lo = (l);		\
			*hi = (h);		\
			return 0;		\
		}				\
	} while (0)
#include "luf_knob_defs.h"
#undef LUF_KNOB
	return -ENOENT;
}

/* ---- counters ------------------------------------------------------- */

int luf_stat_read(struct luf_stat *s)
{
	char line[128];
	FILE *f;
	int err = 0;

	s->n = 0;
	f = fopen(LUF_STAT_FILE, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' '), *end;
		long long v;

		if (s->n == LUF_STAT_MAX || !sp || sp == line ||
		    sp - line >= LUF_STAT_NAME) {
			err = -EPROTO;
			break;
		}
		errno = 0;
		v = strtoll(sp + 1, &end, 10);
		if (errno || end == sp + 1 || strcmp(end, "\n")) {
			err = -EPROTO;
			break;
		}
		*sp = '\0';
		strcpy(s->line[s->n].name, line);
		s->line[s->n].val = v;
		s->n++;
	}
	if (!err && ferror(f))
		err = -EIO;
	fclose(f);
	return err;
}

int luf_stat_get(const struct luf_stat *s, const char *name, uint64_t *val)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->line[i].name, name)) {
			*val = (uint64_t)s->line[i].val;
			return 0;
		}
	return -ENOENT;
}

int luf_counter_read(const char *name, uint64_t *val)
{
	struct luf_stat *s = malloc(sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	err = luf_stat_read(s);
	if (!err)
		err = luf_stat_get(s, name, val);
	free(s);
	return err;
}

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

int luf_counters_reason(const struct luf_counters *c, const char *name)
{
	int i;

	for (i = 0; i < c->nr_reasons; i++)
		if (!strcmp(c->reason[i], name))
			return i;
	return -1;
}

int luf_counters_read(struct luf_counters *c)
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

#define LUF_EV(name, field) { name, offsetof(struct luf_ev, field) }
static const struct {
	const char *name;
	size_t off;
} luf_ev_files[] = {
	LUF_EV(CTR(deferred_folios), deferred),
	LUF_EV(CTR(held_pages), held),
	LUF_EV(CTR(held_pages_total), held_total),
	LUF_EV(CTR(released_pages), released),
	LUF_EV(CTR(pending_folios), pending),
	LUF_EV(CTR(flushes), flushes),
	LUF_EV(CTR_FORCED(file_change), fc),
	LUF_EV(CTR_FORCED(write_fault), wf),
	LUF_EV(CTR_FORCED(timer), timer),
	LUF_EV(CTR_FORCED(disable), disable),
	LUF_EV(CTR_FORCED(aging), aging),
	LUF_EV(CTR_RELEASED(zone_low), rel_zone_low),
	LUF_EV(CTR_RELEASED(shrinker), rel_shrinker),
	LUF_EV(CTR_RELEASED(isolate), rel_isolate),
	LUF_EV(CTR(migrc_retained), retained),
	LUF_EV(CTR(tlbi_avoided), tlbi_avoided),
	LUF_EV(CTR_PATH(reclaim, deferred_pages), pages_reclaim),
	LUF_EV(CTR_PATH(migrate, deferred_pages), pages_migrate),
};

int luf_ev_read(struct luf_ev *e)
{
	struct luf_stat *s = malloc(sizeof(*s));
	size_t i;
	int err;

	if (!s)
		return -ENOMEM;
	err = luf_stat_read(s);
	for (i = 0; !err && i < ARRAY_SIZE(luf_ev_files); i++) {
		uint64_t *v = (uint64_t *)((char *)e + luf_ev_files[i].off);

		/* a counter this luf.ko does not have reads as 0 */
		if (luf_stat_get(s, luf_ev_files[i].name, v))
			*v = 0;
	}
	free(s);
	return err;
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

bool luf_counters_equal(const struct luf_counters *a,
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

void luf_counters_log(const char *prefix, const struct luf_counters *c,
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
