// SPDX-License-Identifier: GPL-2.0
/* libluf: luf.ko's knobs (/sys/kernel/mm/luf) and counters (/sys/kernel/debug/luf/stat) */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libluf.h"

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

int luf_knob_limits(const char *name, uint64_t *def, uint64_t *lo, uint64_t *hi)
{
	uint64_t ram_kb, page_kb = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	int ret = meminfo_kb("MemTotal", &ram_kb);

	if (ret)
		return ret;
#define min(a, b)	((a) < (b) ? (a) : (b))
#define LUF_KNOB(knob, d, l, h, desc)	\
	do { if (!strcmp(name, #knob)) { *def = (d); *lo = (l); *hi = (h); return 0; } } while (0)
#include "luf_knob_defs.h"
#undef LUF_KNOB
	return -ENOENT;
}

int luf_stat_read(struct luf_stat *s)
{
	char line[128];
	FILE *f = fopen(LUF_STAT_FILE, "re");
	int err = 0;

	s->n = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' '), *end;
		long long v;

		err = -EPROTO;
		if (s->n == LUF_STAT_MAX || !sp || sp == line || sp - line >= LUF_STAT_NAME)
			break;
		errno = 0;
		v = strtoll(sp + 1, &end, 10);
		if (errno || end == sp + 1 || strcmp(end, "\n"))
			break;
		err = 0;
		*sp = '\0';
		strcpy(s->line[s->n].name, line);
		s->line[s->n++].val = v;
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
	int err = s ? luf_stat_read(s) : -ENOMEM;

	if (!err)
		err = luf_stat_get(s, name, val);
	free(s);
	return err;
}

#define LUF_EV(name, field) { name, offsetof(struct luf_ev, field) }
static const struct { const char *name; size_t off; } luf_ev_files[] = {
	LUF_EV(CTR(deferred_folios), deferred), LUF_EV(CTR(held_pages), held),
	LUF_EV(CTR(held_pages_total), held_total), LUF_EV(CTR(released_pages), released),
	LUF_EV(CTR(pending_folios), pending), LUF_EV(CTR(flushes), flushes),
	LUF_EV(CTR_FORCED(file_change), fc), LUF_EV(CTR_FORCED(write_fault), wf),
	LUF_EV(CTR_FORCED(timer), timer), LUF_EV(CTR_FORCED(disable), disable),
	LUF_EV(CTR_FORCED(aging), aging),
	LUF_EV(CTR_RELEASED(zone_low), rel_zone_low), LUF_EV(CTR_RELEASED(shrinker), rel_shrinker),
	LUF_EV(CTR_RELEASED(isolate), rel_isolate),
	LUF_EV(CTR(migrc_retained), retained), LUF_EV(CTR(tlbi_avoided), tlbi_avoided),
	LUF_EV(CTR_PATH(reclaim, deferred_pages), pages_reclaim),
	LUF_EV(CTR_PATH(migrate, deferred_pages), pages_migrate),
};

int luf_ev_read(struct luf_ev *e)
{
	struct luf_stat *s = malloc(sizeof(*s));
	int err = s ? luf_stat_read(s) : -ENOMEM;
	size_t i;

	for (i = 0; !err && i < ARRAY_SIZE(luf_ev_files); i++) {
		uint64_t *v = (uint64_t *)((char *)e + luf_ev_files[i].off);

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
