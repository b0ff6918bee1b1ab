// SPDX-License-Identifier: GPL-2.0
/*
 * libluf: shared helpers for the luf selftests and workload (see libluf.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "libluf.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define LUF_MPOL_MF_MOVE_ALL (1 << 2)

/* ---- time ----------------------------------------------------------- */

double luf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void luf_msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

/* ---- generic file helpers ------------------------------------------- */

bool path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int write_file(const char *path, const void *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

int write_file_str(const char *path, const char *s)
{
	return write_file(path, s, strlen(s));
}

ssize_t read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		total += n;
	}
	buf[total] = '\0';
	close(fd);
	return total;
}

static int parse_u64_strict(const char *s, uint64_t *val)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (p[0] != '\n' || p[1] != '\0')
		return -EINVAL;
	*val = v;
	return 0;
}

int read_u64_strict(const char *path, uint64_t *val)
{
	char buf[64];
	ssize_t n;

	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	return parse_u64_strict(buf, val);
}

int file_mode(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	return st.st_mode & 07777;
}

/* ---- module --------------------------------------------------------- */

const char *luf_ko_path(void)
{
	const char *p = getenv("LUF_KO");

	return p && *p ? p : LUF_DEFAULT_KO;
}

bool luf_ko_present(void)
{
	return access(luf_ko_path(), R_OK) == 0;
}

bool luf_is_loaded(void)
{
	char line[512];
	bool found = false;
	FILE *f;

	f = fopen("/proc/modules", "re");
	if (!f)
		return path_exists(LUF_MODULE_DIR);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, LUF_MODNAME " ", strlen(LUF_MODNAME) + 1)) {
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

int luf_load(const char *params)
{
	long ret;
	int fd, err;

	fd = open(luf_ko_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
	err = errno;
	close(fd);
	return ret ? -err : 0;
}

int module_unload(const char *name)
{
	int i, err = 0;

	for (i = 0; i < 200; i++) {
		if (!syscall(SYS_delete_module, name, O_NONBLOCK))
			return 0;
		err = errno;
		if (err != EAGAIN && err != EBUSY)
			return -err;
		luf_msleep(50);
	}
	return -err;
}

int luf_unload(void)
{
	return module_unload(LUF_MODNAME);
}

int luf_ensure_unloaded(void)
{
	int err;

	if (!luf_is_loaded())
		return 0;
	err = luf_unload();
	if (err && err != -ENOENT)
		return err;
	return luf_is_loaded() ? -EBUSY : 0;
}

int luf_fresh_load(void)
{
	int err = luf_ensure_unloaded();

	if (err)
		return err;
	return luf_load("");
}

static bool debugfs_mounted(void)
{
	char line[512], dev[128], dir[256], type[64];
	bool found = false;
	FILE *f;

	f = fopen("/proc/mounts", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%127s %255s %63s", dev, dir, type) == 3 &&
			!strcmp(type, "debugfs") && !strcmp(dir, "/sys/kernel/debug");
	fclose(f);
	return found;
}

const char *luf_skip_reason(bool need_module)
{
	static char why[512];

	if (geteuid() != 0)
		return "must be run as root";
	if (!debugfs_mounted())
		return "debugfs is not mounted at /sys/kernel/debug";
	if (need_module && !luf_ko_present()) {
		snprintf(why, sizeof(why), "module file %s not found (set LUF_KO)",
			 luf_ko_path());
		return why;
	}
	return NULL;
}

/* ---- knobs ---------------------------------------------------------- */

const char *const luf_knob_names[LUF_NR_KNOBS] = {
	"enabled", "migrc_enabled", "observe", "max_pending_kb", "max_defer_ms",
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

/* ---- system statistics ---------------------------------------------- */

int nr_cpus(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	long onln = sysconf(_SC_NPROCESSORS_ONLN);

	return (int)(conf > onln ? conf : onln);
}

/* Read the "name value" lines of @path into @vals for @names. */
static int read_keyed(const char *path, const char *const *names, int n,
		      uint64_t *vals, bool *found, const char *sep)
{
	char line[256], key[128];
	unsigned long long v;
	int i, hits = 0;
	char fmt[32];
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	snprintf(fmt, sizeof(fmt), "%%127[^%s]%s %%llu", sep, sep);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, fmt, key, &v) != 2)
			continue;
		for (i = 0; i < n; i++) {
			if (!found[i] && !strcmp(key, names[i])) {
				vals[i] = v;
				found[i] = true;
				hits++;
			}
		}
	}
	fclose(f);
	return hits;
}

int vmstat_read(const char *name, uint64_t *val)
{
	bool found = false;
	int ret;

	ret = read_keyed("/proc/vmstat", &name, 1, val, &found, " ");
	if (ret < 0)
		return ret;
	return found ? 0 : -ENOENT;
}

int meminfo_kb(const char *name, uint64_t *kb)
{
	bool found = false;
	int ret;

	ret = read_keyed("/proc/meminfo", &name, 1, kb, &found, ":");
	if (ret < 0)
		return ret;
	return found ? 0 : -ENOENT;
}

int zoneinfo_pcp_pages(uint64_t *pages)
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

int interrupts_tlb(uint64_t *val)
{
	char *line = NULL, *p, *end;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		p = line;
		while (*p == ' ')
			p++;
		if (strncmp(p, "TLB:", 4))
			continue;
		p += 4;
		*val = 0;
		for (;;) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			*val += v;
			p = end;
		}
		err = 0;
		break;
	}
	free(line);
	fclose(f);
	return err;
}

int drop_caches(void)
{
	sync();
	return write_file_str("/proc/sys/vm/drop_caches", "3");
}

void luf_sys_read(struct luf_sys *s)
{
	enum { TLB, TLB_RECV, STEAL_ANON, STEAL_FILE, MIGRATE_OK,
	       DEMOTE_KSWAPD, DEMOTE_DIRECT, DEMOTE_KHUGEPAGED, NR };
	static const char *const names[NR] = {
		[TLB] = "nr_tlb_remote_flush",
		[TLB_RECV] = "nr_tlb_remote_flush_received",
		/* pgsteal_{kswapd,direct} skip memcg reclaim; these do not */
		[STEAL_ANON] = "pgsteal_anon",
		[STEAL_FILE] = "pgsteal_file",
		[MIGRATE_OK] = "pgmigrate_success",
		[DEMOTE_KSWAPD] = "pgdemote_kswapd",
		[DEMOTE_DIRECT] = "pgdemote_direct",
		[DEMOTE_KHUGEPAGED] = "pgdemote_khugepaged",
	};
	uint64_t v[NR] = { 0 };
	bool found[NR] = { false };

	memset(s, 0, sizeof(*s));
	read_keyed("/proc/vmstat", names, NR, v, found, " ");
	s->tlb_remote_flush = v[TLB];
	s->tlb_remote_received = v[TLB_RECV];
	s->has_tlb_vmstat = found[TLB];
	s->pgsteal = v[STEAL_ANON] + v[STEAL_FILE];
	s->pgmigrate_success = v[MIGRATE_OK];
	s->pgdemote = v[DEMOTE_KSWAPD] + v[DEMOTE_DIRECT] + v[DEMOTE_KHUGEPAGED];
	if (interrupts_tlb(&s->tlb_irqs))
		s->tlb_irqs = 0;
}

void luf_sys_delta(const struct luf_sys *a, const struct luf_sys *b,
		   struct luf_sys *d)
{
	d->tlb_remote_flush = a->tlb_remote_flush - b->tlb_remote_flush;
	d->tlb_remote_received = a->tlb_remote_received - b->tlb_remote_received;
	d->tlb_irqs = a->tlb_irqs - b->tlb_irqs;
	d->pgsteal = a->pgsteal - b->pgsteal;
	d->pgmigrate_success = a->pgmigrate_success - b->pgmigrate_success;
	d->pgdemote = a->pgdemote - b->pgdemote;
	d->has_tlb_vmstat = a->has_tlb_vmstat && b->has_tlb_vmstat;
}

/* ---- CPUs, NUMA ------------------------------------------------------ */

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Is @nid in a kernel list like "0-1,3"? */
static bool in_list(const char *list, int nid)
{
	const char *p = list;
	char *end;
	long a, b;

	while (*p) {
		a = strtol(p, &end, 10);
		if (end == p)
			return false;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		if (nid >= a && nid <= b)
			return true;
		if (*p != ',')
			break;
		p++;
	}
	return false;
}

bool numa_node_has_memory(int nid)
{
	char buf[256];

	if (read_file("/sys/devices/system/node/has_memory", buf, sizeof(buf)) <= 0)
		return false;
	return in_list(buf, nid);
}

/* Memory tier id holding @nid, or -1. */
static int memory_tier_of(int nid)
{
	const char *dir = "/sys/bus/memory_tiering/devices";
	char path[512], buf[256];
	struct dirent *de;
	int tier = -1;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		int id;

		if (sscanf(de->d_name, "memory_tier%d", &id) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/nodelist", dir, de->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0 && in_list(buf, nid)) {
			tier = id;
			break;
		}
	}
	closedir(d);
	return tier;
}

bool numa_demotion_possible(char *why, size_t len)
{
	int t0, t1;

	if (!path_exists(LUF_DEMOTION_KNOB)) {
		snprintf(why, len, "%s is missing", LUF_DEMOTION_KNOB);
		return false;
	}
	if (!numa_node_has_memory(0) || !numa_node_has_memory(1)) {
		snprintf(why, len, "NUMA node 0 or 1 has no memory");
		return false;
	}
	t0 = memory_tier_of(0);
	t1 = memory_tier_of(1);
	if (t0 < 0 || t1 < 0) {
		snprintf(why, len, "no memory tier for node 0 or 1");
		return false;
	}
	if (t1 <= t0) {
		snprintf(why, len,
			 "node 1 (memory_tier%d) is not a lower tier than node 0 (memory_tier%d)",
			 t1, t0);
		return false;
	}
	return true;
}

/* ---- memcg ----------------------------------------------------------- */

bool memcg_available(void)
{
	char buf[512];

	if (read_file(LUF_CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "memory"))
		return false;
	if (read_file(LUF_CGROUP_ROOT "/cgroup.subtree_control", buf, sizeof(buf)) >= 0 &&
	    strstr(buf, "memory"))
		return true;
	return write_file_str(LUF_CGROUP_ROOT "/cgroup.subtree_control", "+memory") == 0;
}

int memcg_create(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", LUF_CGROUP_ROOT, name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int memcg_write(const char *cg, const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_file_str(path, val);
}

int memcg_stat(const char *cg, const char *key, uint64_t *val)
{
	char path[512];
	bool found = false;
	int ret;

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	ret = read_keyed(path, &key, 1, val, &found, " ");
	if (ret < 0)
		return ret;
	return found ? 0 : -ENOENT;
}

int memcg_enter(const char *cg)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	return memcg_write(cg, "cgroup.procs", pid);
}

int memcg_leave(void)
{
	return memcg_enter(LUF_CGROUP_ROOT);
}

int memcg_destroy(const char *cg)
{
	int i;

	memcg_leave();
	for (i = 0; i < 100; i++) {
		if (!rmdir(cg) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		luf_msleep(50);
	}
	return -EBUSY;
}

/* ---- test file ------------------------------------------------------- */

int luf_file_create(struct luf_file *f, const char *dir, const char *tag,
		    size_t size)
{
	const size_t chunk = 64 * 1024;
	size_t ps = page_size(), off, i;
	uint64_t *buf;
	ssize_t n;
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	size = (size + ps - 1) / ps * ps;
	if (!size)
		return -EINVAL;
	snprintf(f->path, sizeof(f->path), "%s/luf-%s-%d", dir, tag, getpid());
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0)
		return -errno;
	f->size = size;
	f->npages = size / ps;
	buf = malloc(chunk);
	if (!buf) {
		err = -ENOMEM;
		goto fail;
	}
	for (off = 0; off < size; off += chunk) {
		size_t len = size - off < chunk ? size - off : chunk;

		for (i = 0; i < len / 8; i++)
			buf[i] = luf_pattern(off + i * 8);
		n = pwrite(f->fd, buf, len, off);
		if (n < 0 || (size_t)n != len) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
	}
	free(buf);
	if (!err && fsync(f->fd))
		err = -errno;
	if (!err)
		return 0;
fail:
	close(f->fd);
	unlink(f->path);
	f->fd = -1;
	return err;
}

int luf_file_evict(struct luf_file *f)
{
	int err;

	if (fdatasync(f->fd))
		return -errno;
	err = posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
	return err ? -err : 0;
}

int luf_file_map(struct luf_file *f)
{
	void *p;

	p = mmap(NULL, f->size, PROT_READ, MAP_SHARED, f->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	/* order-0 folios only: the counters count folios */
	madvise(p, f->size, MADV_NOHUGEPAGE);
	f->map = p;
	return 0;
}

int luf_file_pfns(struct luf_file *f, uint64_t *pfns)
{
	size_t ps = page_size(), len = f->npages * sizeof(uint64_t), i;
	off_t off = (off_t)((uintptr_t)f->map / ps * sizeof(uint64_t));
	ssize_t n;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, pfns, len, off);
	close(fd);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	for (i = 0; i < f->npages; i++)
		pfns[i] = pfns[i] >> 63 ? pfns[i] & ((1ULL << 55) - 1) : 0;
	return 0;
}

uint64_t luf_file_touch(struct luf_file *f)
{
	size_t ps = page_size(), i;
	uint64_t bad = 0;

	for (i = 0; i < f->npages; i++) {
		uint64_t off = (uint64_t)i * ps;

		if (*(const volatile uint64_t *)(f->map + off) != luf_pattern(off))
			bad++;
	}
	return bad;
}

void luf_file_destroy(struct luf_file *f)
{
	if (f->map)
		munmap((void *)f->map, f->size);
	f->map = NULL;
	if (f->fd >= 0) {
		close(f->fd);
		unlink(f->path);
	}
	f->fd = -1;
}

/* ---- readers --------------------------------------------------------- */

static void *reader_fn(void *arg)
{
	struct luf_reader_slot *ra = arg;
	struct luf_readers *r = ra->set;
	size_t ps = page_size(), words = ps / 8, i;
	uint64_t pass = 0, bad = 0;
	int err;

	err = pin_to_cpu(r->cpus[ra->idx]);
	if (err) {
		int zero = 0;

		atomic_compare_exchange_strong(&r->err, &zero, err);
		atomic_fetch_add(&r->ready, 1);
		return NULL;
	}
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		size_t w = (pass * 7 + ra->idx) % words;

		for (i = 0; i < r->npages; i++) {
			uint64_t off = (uint64_t)i * ps + w * 8;

			if (*(const volatile uint64_t *)(r->base + off) != luf_pattern(off))
				bad++;
			if ((i & 63) == 63 &&
			    atomic_load_explicit(&r->stop, memory_order_relaxed))
				break;
		}
		atomic_fetch_add_explicit(&r->pages_read, i, memory_order_relaxed);
		if (bad) {
			atomic_fetch_add(&r->bad_words, bad);
			bad = 0;
		}
		if (i == r->npages) {
			atomic_fetch_add_explicit(&r->passes, 1, memory_order_relaxed);
			if (!pass)
				atomic_fetch_add(&r->ready, 1);
			pass++;
			if (r->pause_us)
				usleep(r->pause_us);
		}
	}
	if (!pass)
		atomic_fetch_add(&r->ready, 1);
	return NULL;
}

int luf_readers_start(struct luf_readers *r, const char *base, size_t npages,
		      const int *cpus, int n, unsigned int pause_us)
{
	int i, err;

	if (n < 0 || n > LUF_MAX_READERS)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->pause_us = pause_us;
	r->base = base;
	r->npages = npages;
	r->n = 0;
	for (i = 0; i < n; i++) {
		struct luf_reader_slot *ra = &r->slot[i];

		ra->set = r;
		ra->idx = i;
		r->cpus[i] = cpus[i];
		err = pthread_create(&r->th[i], NULL, reader_fn, ra);
		if (err) {
			luf_readers_stop(r);
			return -err;
		}
		r->n++;
	}
	while (atomic_load(&r->ready) < n)
		luf_msleep(1);
	err = atomic_load(&r->err);
	if (err) {
		luf_readers_stop(r);
		return err;
	}
	return 0;
}

void luf_readers_stop(struct luf_readers *r)
{
	int i;

	atomic_store(&r->stop, 1);
	for (i = 0; i < r->n; i++)
		pthread_join(r->th[i], NULL);
	r->n = 0;
}

/* ---- workload drivers ------------------------------------------------ */

const char *luf_wl_name(enum luf_wl kind)
{
	switch (kind) {
	case LUF_WL_PAGEOUT: return "pageout";
	case LUF_WL_MEMCG: return "memcg";
	case LUF_WL_MIGRATE: return "migrate";
	case LUF_WL_DEMOTE: return "demote";
	}
	return "?";
}

void luf_run_opts_default(struct luf_run_opts *o, enum luf_wl kind)
{
	int ncpu = nr_cpus(), i;

	memset(o, 0, sizeof(*o));
	o->dir = kind == LUF_WL_MIGRATE ? LUF_TMP_DIR : LUF_EXT4_DIR;
	o->size = (kind == LUF_WL_PAGEOUT || kind == LUF_WL_DEMOTE ? 16 : 8) << 20;
	o->initiator_cpu = 0;
	o->nr_readers = ncpu - 1 < 3 ? ncpu - 1 : 3;
	if (o->nr_readers < 0)
		o->nr_readers = 0;
	for (i = 0; i < o->nr_readers; i++)
		o->reader_cpus[i] = i + 1;
	/*
	 * Migration and demotion: readers spin over a few pages, so they
	 * rarely block on a migration entry and stay live in the mm when
	 * the batch is flushed (and, for demotion, most pages stay cold).
	 */
	o->hot_pages = kind == LUF_WL_DEMOTE || kind == LUF_WL_MIGRATE ? 64 : 0;
	o->seconds = 3;
	switch (kind) {
	case LUF_WL_PAGEOUT: o->min_rounds = 4; break;
	case LUF_WL_MEMCG: o->min_rounds = 1; break;
	case LUF_WL_MIGRATE: o->min_rounds = 6; break;
	case LUF_WL_DEMOTE: o->min_rounds = 3; break;
	}
	o->memcg_max = o->size / 2;
	o->reclaim_bytes = o->size / 2;
	o->node_a = 0;
	o->node_b = 1;
	o->tag = luf_wl_name(kind);
}

struct wl_state {
	struct luf_file f;
	char *anon;			/* anon_size bytes at f.map + f.size */
	size_t anon_size;
	size_t npages;			/* file and anonymous pages */
	struct luf_readers rd;
	bool readers_on;
	uint64_t *pfn1, *pfn2;
	void **pages;
	int *nodes, *status;
	char cg[256];
	bool in_cg;
	char demotion_saved[32];
	bool demotion_changed;
	cpu_set_t saved_affinity;
	bool affinity_saved;
};

long luf_move_pages(unsigned long count, void **pages, const int *nodes,
		    int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status,
		       LUF_MPOL_MF_MOVE_ALL);
}

/*
 * Move every page of the mapping to @node, at most @chunk pages (0: all)
 * per move_pages(2) call; retry transient failures.  Returns the number of
 * pages that moved; *failed gets the pages that are still elsewhere.
 * @calls is bumped per move_pages(2) call.
 */
static long migrate_all(struct wl_state *s, int node, size_t chunk,
			uint64_t *failed, uint64_t *calls)
{
	size_t n = s->npages, i, todo;
	long moved = 0;
	int attempt;

	for (i = 0; i < n; i++)
		s->pages[i] = (void *)(s->f.map + i * page_size());
	if (luf_move_pages(n, s->pages, NULL, s->status))
		return -errno;
	todo = 0;
	for (i = 0; i < n; i++)
		if (s->status[i] != node)
			s->pages[todo++] = (void *)(s->f.map + i * page_size());
	if (!chunk)
		chunk = n;
	for (attempt = 0; todo && attempt < 4; attempt++) {
		size_t left = 0, c;

		for (i = 0; i < todo; i++)
			s->nodes[i] = node;
		for (i = 0; i < todo; i += c) {
			c = todo - i < chunk ? todo - i : chunk;
			(*calls)++;
			if (luf_move_pages(c, s->pages + i, s->nodes + i,
					   s->status + i) < 0 &&
			    errno != EBUSY && errno != EAGAIN && errno != ENOMEM)
				return -errno;
		}
		for (i = 0; i < todo; i++) {
			if (s->status[i] == node) {
				moved++;
				continue;
			}
			/* -EBUSY, -EAGAIN, -ENOMEM: worth another try */
			s->pages[left++] = s->pages[i];
		}
		todo = left;
		if (todo)
			luf_msleep(5);
	}
	*failed += todo;
	return moved;
}

/*
 * Read-only, clean anonymous memory right after the file mapping, filled
 * with the pattern of its offset from the file's start so that the readers
 * check both as one range: written, made PROT_READ, paged out to swap and
 * read back, which maps each page read-only and clean.
 */
static int wl_anon_setup(struct wl_state *s, size_t size)
{
	size_t ps = page_size(), i;
	uint64_t *w;
	char line[256];
	int n = 0;
	FILE *f;
	char *p;

	/* the first line of /proc/swaps is a header */
	f = fopen("/proc/swaps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	if (n < 2)
		return -ENODEV;
	/* one reserved range: the file mapping moves to its start */
	p = mmap(NULL, s->f.size + size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (mmap(p, s->f.size, PROT_READ, MAP_SHARED | MAP_FIXED, s->f.fd, 0) == MAP_FAILED) {
		munmap(p, s->f.size + size);
		return -errno;
	}
	munmap((void *)s->f.map, s->f.size);
	s->f.map = p;
	madvise(p, s->f.size, MADV_NOHUGEPAGE);
	s->anon = p + s->f.size;
	s->anon_size = size;
	p = mmap(s->anon, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	madvise(p, size, MADV_NOHUGEPAGE);
	for (w = (uint64_t *)p, i = 0; i < size / 8; i++)
		w[i] = luf_pattern(s->f.size + i * 8);
	if (mprotect(p, size, PROT_READ) || madvise(p, size, MADV_PAGEOUT))
		return -errno;
	for (i = 0; i < size; i += ps)
		(void)*(volatile char *)(p + i);
	return 0;
}

static bool wl_done(const struct luf_run_opts *o, const struct luf_run_res *r,
		    double t0)
{
	double el = luf_now() - t0;

	if (o->stop && atomic_load(o->stop))
		return true;
	if (o->max_rounds && r->rounds >= (uint64_t)o->max_rounds)
		return true;
	if (o->max_seconds > 0 && el >= o->max_seconds)
		return true;
	return el >= o->seconds && r->rounds >= (uint64_t)o->min_rounds;
}

static void wl_cleanup(struct wl_state *s)
{
	if (s->readers_on)
		luf_readers_stop(&s->rd);
	s->readers_on = false;
	if (s->anon)
		munmap(s->anon, s->anon_size);
	s->anon = NULL;
	luf_file_destroy(&s->f);
	if (s->cg[0]) {
		memcg_destroy(s->cg);
		s->cg[0] = '\0';
	}
	if (s->demotion_changed)
		write_file_str(LUF_DEMOTION_KNOB, s->demotion_saved);
	if (s->affinity_saved)
		sched_setaffinity(0, sizeof(s->saved_affinity), &s->saved_affinity);
	free(s->pfn1);
	free(s->pfn2);
	free(s->pages);
	free(s->nodes);
	free(s->status);
}

#define WL_FAIL(err_, ...) do {						\
	snprintf(r->err, sizeof(r->err), __VA_ARGS__);			\
	ret = (err_);							\
	goto out;							\
} while (0)

const char *luf_wl_missing(enum luf_wl kind, const struct luf_run_opts *o,
			   char *why, size_t len)
{
	char d[160];

	if (!o->dir || !path_exists(o->dir))
		snprintf(why, len, "directory %s does not exist",
			 o->dir ? o->dir : "(null)");
	else if (kind == LUF_WL_MIGRATE && (!numa_node_has_memory(o->node_a) ||
					    !numa_node_has_memory(o->node_b)))
		snprintf(why, len, "NUMA node %d or %d has no memory",
			 o->node_a, o->node_b);
	else if (kind == LUF_WL_DEMOTE && !numa_demotion_possible(d, sizeof(d)))
		snprintf(why, len, "no demotion: %s", d);
	else if ((kind == LUF_WL_MEMCG || kind == LUF_WL_DEMOTE) && !memcg_available())
		snprintf(why, len, "no memory controller under %s", LUF_CGROUP_ROOT);
	else
		return NULL;
	return why;
}

int luf_run(enum luf_wl kind, const struct luf_run_opts *o,
	    struct luf_run_res *r)
{
	struct luf_sys before, after;
	struct wl_state s;
	size_t npages, i, hot;
	char buf[64];
	double t0;
	int ret = 0;
	long moved;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	s.f.fd = -1;

	if (luf_wl_missing(kind, o, r->err, sizeof(r->err))) {
		ret = -ENODEV;
		goto out;
	}
	if (!sched_getaffinity(0, sizeof(s.saved_affinity), &s.saved_affinity))
		s.affinity_saved = true;
	if (o->initiator_cpu >= 0 && (ret = pin_to_cpu(o->initiator_cpu)))
		WL_FAIL(ret, "cannot pin to CPU %d: %s", o->initiator_cpu, strerror(-ret));

	if (kind == LUF_WL_DEMOTE) {
		if (read_file(LUF_DEMOTION_KNOB, s.demotion_saved,
			      sizeof(s.demotion_saved)) <= 0)
			WL_FAIL(-EIO, "cannot read %s", LUF_DEMOTION_KNOB);
		s.demotion_saved[strcspn(s.demotion_saved, "\n")] = '\0';
		if ((ret = write_file_str(LUF_DEMOTION_KNOB, "1")))
			WL_FAIL(ret, "cannot enable demotion: %s", strerror(-ret));
		s.demotion_changed = true;
	}
	if (kind == LUF_WL_MEMCG || kind == LUF_WL_DEMOTE) {
		char name[64];

		if (o->memcg)
			snprintf(name, sizeof(name), "%s", o->memcg);
		else
			snprintf(name, sizeof(name), "luf-%s-%d", luf_wl_name(kind), getpid());
		if ((ret = memcg_create(name, s.cg, sizeof(s.cg)))) {
			s.cg[0] = '\0';
			WL_FAIL(ret, "cannot create memcg %s: %s", name, strerror(-ret));
		}
		if (kind == LUF_WL_MEMCG) {
			snprintf(buf, sizeof(buf), "%" PRIu64, o->memcg_max);
			if ((ret = memcg_write(s.cg, "memory.max", buf)))
				WL_FAIL(ret, "memory.max=%s: %s", buf, strerror(-ret));
		}
	}

	if ((ret = luf_file_create(&s.f, o->dir, o->tag ? o->tag : luf_wl_name(kind),
				   o->size)))
		WL_FAIL(ret, "cannot create a %zu byte file in %s: %s", o->size,
			o->dir, strerror(-ret));
	npages = s.npages = s.f.npages;
	if (s.cg[0]) {
		/* the pages must be charged to the memcg: fault them in there */
		if ((ret = luf_file_evict(&s.f)))
			WL_FAIL(ret, "cannot drop the page cache of %s: %s", s.f.path,
				strerror(-ret));
		if ((ret = memcg_enter(s.cg)))
			WL_FAIL(ret, "cannot enter %s: %s", s.cg, strerror(-ret));
	}
	if ((ret = luf_file_map(&s.f)))
		WL_FAIL(ret, "cannot map %s: %s", s.f.path, strerror(-ret));
	if (kind == LUF_WL_MIGRATE && o->anon_size) {
		if ((ret = wl_anon_setup(&s, o->anon_size)))
			WL_FAIL(ret, "anonymous memory after the file: %s",
				ret == -ENODEV ? "needs swap on" : strerror(-ret));
		npages = s.npages = npages + o->anon_size / page_size();
	}
	s.pfn1 = calloc(npages, sizeof(*s.pfn1));
	s.pfn2 = calloc(npages, sizeof(*s.pfn2));
	s.pages = calloc(npages, sizeof(*s.pages));
	s.nodes = calloc(npages, sizeof(*s.nodes));
	s.status = calloc(npages, sizeof(*s.status));
	if (!s.pfn1 || !s.pfn2 || !s.pages || !s.nodes || !s.status)
		WL_FAIL(-ENOMEM, "out of memory");

	if (kind != LUF_WL_MEMCG)
		r->bad_words += luf_file_touch(&s.f);
	if (kind == LUF_WL_MIGRATE) {
		uint64_t dummy_failed = 0, dummy_calls = 0;

		/* start from node_a; not counted */
		moved = migrate_all(&s, o->node_a, 0, &dummy_failed, &dummy_calls);
		if (moved < 0)
			WL_FAIL((int)moved, "move_pages: %s", strerror((int)-moved));
	}

	luf_sys_read(&before);
	hot = o->hot_pages && o->hot_pages < npages ? o->hot_pages : npages;
	if ((ret = luf_readers_start(&s.rd, s.f.map, hot, o->reader_cpus,
				     o->nr_readers, o->reader_pause_us)))
		WL_FAIL(ret, "cannot start readers: %s", strerror(-ret));
	s.readers_on = true;

	t0 = luf_now();
	while (!wl_done(o, r, t0)) {
		int err;

		switch (kind) {
		case LUF_WL_PAGEOUT:
			/*
			 * The readers refault what MADV_PAGEOUT takes at
			 * once, so residency says little: a page is paged
			 * out if its PFN is gone or different afterwards.
			 */
			r->bad_words += luf_file_touch(&s.f);
			if ((err = luf_file_pfns(&s.f, s.pfn1)))
				WL_FAIL(err, "pagemap: %s", strerror(-err));
			if (madvise((void *)s.f.map, s.f.size, MADV_PAGEOUT))
				WL_FAIL(-errno, "MADV_PAGEOUT: %s", strerror(errno));
			if ((err = luf_file_pfns(&s.f, s.pfn2)))
				WL_FAIL(err, "pagemap: %s", strerror(-err));
			for (i = 0; i < npages; i++)
				if (s.pfn1[i] && s.pfn2[i] != s.pfn1[i])
					r->pages_evicted++;
			r->pageout_calls++;
			break;
		case LUF_WL_MEMCG:
			r->bad_words += luf_file_touch(&s.f);
			break;
		case LUF_WL_MIGRATE:
			moved = migrate_all(&s, r->rounds % 2 ? o->node_a : o->node_b,
					    o->migrate_chunk, &r->migrate_failed,
					    &r->migrate_calls);
			if (moved < 0)
				WL_FAIL((int)moved, "move_pages: %s", strerror((int)-moved));
			r->pages_migrated += moved;
			break;
		case LUF_WL_DEMOTE:
			r->bad_words += luf_file_touch(&s.f);
			snprintf(buf, sizeof(buf), "%" PRIu64, o->reclaim_bytes);
			err = memcg_write(s.cg, "memory.reclaim", buf);
			r->reclaim_writes++;
			if (err == -EAGAIN)
				r->reclaim_eagain++;
			else if (err)
				WL_FAIL(err, "memory.reclaim: %s", strerror(-err));
			break;
		}
		r->rounds++;
		if (o->round_pause_ms)
			luf_msleep(o->round_pause_ms);
	}
	r->elapsed = luf_now() - t0;
	luf_readers_stop(&s.rd);
	s.readers_on = false;
	r->pages_read = atomic_load(&s.rd.pages_read);
	r->bad_words += atomic_load(&s.rd.bad_words);
	luf_sys_read(&after);
	luf_sys_delta(&after, &before, &r->sys);
	if (s.cg[0])
		memcg_stat(s.cg, "pgsteal", &r->memcg_pgsteal);
out:
	if (s.readers_on) {
		r->pages_read = atomic_load(&s.rd.pages_read);
		r->bad_words += atomic_load(&s.rd.bad_words);
	}
	wl_cleanup(&s);
	return ret;
}

void luf_run_log(const char *prefix, const struct luf_run_res *r)
{
	fprintf(stderr,
		"# %srounds=%" PRIu64 " elapsed=%.2f pages_read=%" PRIu64
		" bad_words=%" PRIu64 "\n",
		prefix, r->rounds, r->elapsed, r->pages_read, r->bad_words);
	fprintf(stderr,
		"# %spageout_calls=%" PRIu64 " pages_evicted=%" PRIu64
		" migrate_calls=%" PRIu64 " pages_migrated=%" PRIu64
		" migrate_failed=%" PRIu64 "\n",
		prefix, r->pageout_calls, r->pages_evicted, r->migrate_calls,
		r->pages_migrated, r->migrate_failed);
	fprintf(stderr,
		"# %sreclaim_writes=%" PRIu64 " reclaim_eagain=%" PRIu64
		" memcg_pgsteal=%" PRIu64 "\n",
		prefix, r->reclaim_writes, r->reclaim_eagain, r->memcg_pgsteal);
	fprintf(stderr,
		"# %svmstat: nr_tlb_remote_flush+%" PRIu64
		" nr_tlb_remote_flush_received+%" PRIu64 " TLB_irqs+%" PRIu64
		" pgsteal+%" PRIu64 " pgmigrate_success+%" PRIu64
		" pgdemote+%" PRIu64 "\n",
		prefix, r->sys.tlb_remote_flush, r->sys.tlb_remote_received,
		r->sys.tlb_irqs, r->sys.pgsteal, r->sys.pgmigrate_success,
		r->sys.pgdemote);
	if (r->err[0])
		fprintf(stderr, "# %serror: %s\n", prefix, r->err);
}
