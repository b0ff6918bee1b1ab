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
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "libluf.h"

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

size_t luf_page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

/* ---- generic file helpers ------------------------------------------- */

/* ---- environment --------------------------------------------------- */

static struct luf_env env;
static bool env_read;

/* @name's value if set and not empty, else @dflt */
static const char *env_str(const char *name, const char *dflt)
{
	const char *e = getenv(name);

	return e && *e ? e : dflt;
}

static void env_bad(const char *name, const char *val, const char *want)
{
	if (!env.err[0])
		snprintf(env.err, sizeof(env.err), "%s=%s: want %s", name, val, want);
}

/* @name, a number, into *@val; @dflt if unset */
static void env_uint(const char *name, unsigned int dflt, unsigned int *val)
{
	const char *e = env_str(name, NULL);
	unsigned long v;
	char *end;

	*val = dflt;
	if (!e)
		return;
	errno = 0;
	v = strtoul(e, &end, 10);
	if (errno || *end || v > UINT_MAX)
		env_bad(name, e, "a number");
	else
		*val = (unsigned int)v;
}

const struct luf_env *luf_env(void)
{
	const char *e;
	char *end;

	if (env_read)
		return &env;
	env_read = true;
	env.dir[LUF_DIR_EXT4] = env_str("LUF_EXT4_DIR", LUF_EXT4_DIR);
	env.dir[LUF_DIR_XFS] = env_str("LUF_XFS_DIR", LUF_XFS_DIR);
	env.dir[LUF_DIR_TMP] = env_str("LUF_TMP_DIR", LUF_TMP_DIR);
	env.dir[LUF_DIR_THP] = env_str("LUF_THP_DIR", LUF_THP_DIR);
	env.dir[LUF_DIR_SWAP] = env_str("LUF_SWAP_DEV", LUF_SWAP_DEV);
	env.ko = env_str("LUF_KO", NULL);
	env.notifier_ko = env_str("LUF_NOTIFIER_KO", NULL);
	env.quiet = strcmp(env_str("LUF_QUIET_CPUS", "1"), "0");
	env.mark = env_str("LUF_CORRECT_MARK", NULL);
	env.keep = !strcmp(env_str("LUF_KEEP_MODULE", "0"), "1");
	e = env_str("LUF_BREAK", NULL);
	if (e) {
		errno = 0;
		env.brk = (int)strtol(e, &end, 10);
		if (errno || *end || env.brk < 1 || env.brk >= BRK_NR)
			env_bad("LUF_BREAK", e, "a mode of debug_break");
	}
	e = env_str("LUF_GEN_START", NULL);
	if (e) {
		errno = 0;
		env.gen_start = strtoul(e, &end, 10);
		if (errno || *end || !env.gen_start || env.gen_start > 0xffffffffUL)
			env_bad("LUF_GEN_START", e, "1-4294967295");
	}
	env_uint("LUF_STRESS_CYCLES", 100, &env.stress_cycles);
	env_uint("LUF_STRESS_DEADLINE_S", 540, &env.stress_deadline_s);
	env_uint("LUF_STRESS_SIZE_MB", 8, &env.stress_size_mb);
	env_uint("LUF_STRESS_ROUND_PAUSE_MS", 2000, &env.stress_round_pause_ms);
	env_uint("LUF_STRESS_READER_PAUSE_US", 2000, &env.stress_reader_pause_us);
	return &env;
}

const char *luf_path(const char *dflt)
{
	static const char *const dflts[LUF_DIR_NR] = {
		LUF_EXT4_DIR, LUF_XFS_DIR, LUF_TMP_DIR, LUF_THP_DIR, LUF_SWAP_DEV,
	};
	int i;

	for (i = 0; i < LUF_DIR_NR; i++)
		if (!strcmp(dflt, dflts[i]))
			return luf_env()->dir[i];
	return dflt;
}

bool path_exists(const char *path)
{
	struct stat st;

	return stat(luf_path(path), &st) == 0;
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

/*
 * The file modprobe would load for @name: its line in
 * /lib/modules/$(uname -r)/modules.dep; NULL if there is none.
 */
static const char *luf_modules_dep(const char *name, char *buf, size_t len)
{
	char line[PATH_MAX + 256], want[64];
	const char *found = NULL;
	struct utsname u;
	char *colon, *base;
	FILE *f;
	int n;

	if (uname(&u))
		return NULL;
	snprintf(line, sizeof(line), "/lib/modules/%s/modules.dep", u.release);
	f = fopen(line, "re");
	if (!f)
		return NULL;
	snprintf(want, sizeof(want), "%s.ko", name);
	while (!found && fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		base = strrchr(line, '/');
		if (strcmp(base ? base + 1 : line, want))
			continue;
		n = line[0] == '/' ? snprintf(buf, len, "%s", line) :
		    snprintf(buf, len, "/lib/modules/%s/%s", u.release, line);
		if (n > 0 && (size_t)n < len)
			found = buf;
	}
	fclose(f);
	return found;
}

const char *luf_module_path(const char *name)
{
	static char dep[2][PATH_MAX];
	bool luf = !strcmp(name, LUF_MODNAME);
	const char *p = luf ? luf_env()->ko : luf_env()->notifier_ko;

	if (p)
		return p;
	p = luf_modules_dep(name, dep[luf], sizeof(dep[luf]));
	if (!p) {
		snprintf(dep[luf], sizeof(dep[luf]), "/luf/%s.ko", name);
		p = dep[luf];
	}
	return p;
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

int luf_insmod(const char *path, const char *params)
{
	long ret;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
	err = errno;
	close(fd);
	return ret ? -err : 0;
}

int luf_load(const char *params)
{
	char buf[256];

	params = params ? params : "";
	if (!luf_env()->gen_start || strstr(params, "gen_start="))
		return luf_insmod(luf_ko_path(), params);
	snprintf(buf, sizeof(buf), "%s%sgen_start=%lu", params,
		 *params ? " " : "", luf_env()->gen_start);
	return luf_insmod(luf_ko_path(), buf);
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

/* LUF and MIGRC off, which settles everything pending or held */
static int luf_disable(void)
{
	int err = luf_knob_write(KNOB(enabled), "0");

	return err ? err : luf_knob_write(KNOB(migrc_enabled), "0");
}

int luf_module_fresh(const char *params)
{
	int err;

	if (!luf_env()->keep) {
		err = luf_ensure_unloaded();
		return err ? err : luf_load(params);
	}
	if (!luf_is_loaded()) {
		err = luf_load(params);
		if (err)
			return err;
	}
	return luf_disable();
}

int luf_module_fresh_brk(void)
{
	int brk = luf_env()->brk, err;
	char buf[16];

	err = luf_module_fresh(brk ? "allow_unsafe=1" : "");
	if (err || !brk)
		return err;
	snprintf(buf, sizeof(buf), "%d", brk);
	return write_file_str(LUF_MODULE_DIR "/parameters/debug_break", buf);
}

void luf_module_done(void)
{
	if (!luf_env()->keep) {
		luf_ensure_unloaded();
		return;
	}
	if (luf_env()->brk)
		write_file_str(LUF_MODULE_DIR "/parameters/debug_break", "0");
	luf_disable();
}

const char *luf_skip_reason(bool need_module)
{
	static char why[512];
	struct statfs fs;

	if (geteuid() != 0)
		return "must be run as root";
	if (statfs("/sys/kernel/debug", &fs) || fs.f_type != DEBUGFS_MAGIC)
		return "debugfs is not mounted at /sys/kernel/debug";
	if (need_module && access(luf_ko_path(), R_OK)) {
		snprintf(why, sizeof(why), "module file %s not found (set LUF_KO)",
			 luf_ko_path());
		return why;
	}
	return NULL;
}

/* ---- system statistics ---------------------------------------------- */

int nr_cpus(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	long onln = sysconf(_SC_NPROCESSORS_ONLN);

	return (int)(conf > onln ? conf : onln);
}

int read_keyed(const char *path, const char *const *names, int n,
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

/* The value of key @name in @path (read_keyed()); -ENOENT if absent. */
static int read_key(const char *path, const char *name, uint64_t *val,
		    const char *sep)
{
	bool found = false;
	int ret;

	ret = read_keyed(path, &name, 1, val, &found, sep);
	if (ret < 0)
		return ret;
	return found ? 0 : -ENOENT;
}

int meminfo_kb(const char *name, uint64_t *kb)
{
	return read_key("/proc/meminfo", name, kb, ":");
}

int drop_caches(void)
{
	sync();
	return write_file_str("/proc/sys/vm/drop_caches", "3");
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

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	return read_key(path, key, val, " ");
}

int memcg_u64(const char *cg, const char *file, uint64_t *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return read_u64_strict(path, val);
}

int memcg_enter(const char *cg)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	return memcg_write(cg, "cgroup.procs", pid);
}

int memcg_destroy(const char *cg)
{
	int i;

	memcg_enter(LUF_CGROUP_ROOT);
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

int luf_file_create_words(struct luf_file *f, const char *dir,
			  const char *tag, size_t size, size_t wsize,
			  uint64_t (*word)(uint64_t idx, void *arg), void *arg)
{
	size_t ps = luf_page_size(), off, i;
	uint64_t *buf;
	ssize_t n;
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	size = (size + ps - 1) / ps * ps;
	wsize = wsize ? (wsize + ps - 1) / ps * ps : ps;
	snprintf(f->path, sizeof(f->path), "%s/luf-%s-%d", luf_path(dir), tag,
		 getpid());
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0)
		return -errno;
	f->size = size;
	f->npages = size / ps;
	buf = malloc(wsize);
	if (!buf) {
		err = -ENOMEM;
		goto fail;
	}
	for (off = 0; off < size; off += wsize) {
		size_t len = size - off < wsize ? size - off : wsize;

		for (i = 0; i < len / 8; i++)
			buf[i] = word(off / 8 + i, arg);
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

static uint64_t pattern_word(uint64_t idx, void *arg)
{
	(void)arg;
	return luf_pattern(idx * 8);
}

int luf_file_create(struct luf_file *f, const char *dir, const char *tag,
		    size_t size)
{
	if (!size)
		return -EINVAL;
	return luf_file_create_words(f, dir, tag, size, 64 * 1024,
				     pattern_word, NULL);
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

int luf_pagemap_pfns(const void *addr, size_t n, uint64_t *pfns)
{
	size_t ps = luf_page_size(), len = n * sizeof(uint64_t), i;
	off_t off = (off_t)((uintptr_t)addr / ps * sizeof(uint64_t));
	ssize_t got;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, pfns, len, off);
	close(fd);
	if (got < 0)
		return -errno;
	if ((size_t)got != len)
		return -EIO;
	for (i = 0; i < n; i++)
		pfns[i] = pfns[i] >> 63 ? pfns[i] & ((1ULL << 55) - 1) : 0;
	return 0;
}

int luf_file_pfns(struct luf_file *f, uint64_t *pfns)
{
	return luf_pagemap_pfns(f->map, f->npages, pfns);
}

uint64_t luf_file_touch(struct luf_file *f)
{
	size_t ps = luf_page_size(), i;
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

/* ---- migration, the workload driver ---------------------------------- */

long luf_move_pages(unsigned long count, void **pages, const int *nodes,
		    int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status,
		       MPOL_MF_MOVE_ALL);
}

int luf_move_to_node(const void *map, size_t npages, int node, size_t chunk,
		     int *status)
{
	size_t ps = luf_page_size(), at, i, c;
	int *st = status, *nodes = NULL;
	void **pages = NULL;
	int err = 0;

	if (!chunk || chunk > npages)
		chunk = npages;
	pages = calloc(chunk ? chunk : 1, sizeof(*pages));
	nodes = calloc(chunk ? chunk : 1, sizeof(*nodes));
	if (!st)
		st = calloc(npages ? npages : 1, sizeof(*st));
	if (!pages || !nodes || !st) {
		err = -ENOMEM;
		goto out;
	}
	for (at = 0; at < npages; at += c) {
		c = npages - at < chunk ? npages - at : chunk;
		for (i = 0; i < c; i++) {
			pages[i] = (char *)map + (at + i) * ps;
			nodes[i] = node;
			st[at + i] = -1;
		}
		if (luf_move_pages(c, pages, node < 0 ? NULL : nodes, st + at)) {
			err = -errno;
			goto out;
		}
	}
	for (i = 0; node >= 0 && i < npages; i++)
		err += st[i] != node;
	/*
	 * The other pages of a large folio report -EBUSY (their folio was
	 * already isolated, by its first page) and move with it: ask where
	 * every page is now.
	 */
	if (err > 0) {
		err = luf_move_to_node(map, npages, -1, chunk, st);
		for (i = 0; !err && i < npages; i++)
			err += st[i] != node;
	}
out:
	free(pages);
	free(nodes);
	if (st != status)
		free(st);
	return err;
}

int luf_wl_start(struct luf_wl *w, const char *const *args)
{
	const char *argv[32];
	char exe[PATH_MAX], *slash;
	pid_t parent;
	ssize_t len;
	int n, err;

	memset(w, 0, sizeof(*w));
	w->pid = -1;
	w->fd = -1;
	/* luf_workload is installed beside this program */
	len = readlink("/proc/self/exe", exe, sizeof(exe) - sizeof("luf_workload"));
	if (len < 0)
		return -errno;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	strcpy(slash ? slash + 1 : exe, "luf_workload");
	argv[0] = exe;
	for (n = 0; args[n]; n++) {
		if (n + 2 >= (int)ARRAY_SIZE(argv))
			return -E2BIG;
		argv[n + 1] = args[n];
	}
	argv[n + 1] = NULL;
	/* a file, not a pipe: the child never blocks on its output */
	w->fd = memfd_create("luf_workload", MFD_CLOEXEC);
	if (w->fd < 0)
		return -errno;
	parent = getpid();
	w->pid = fork();
	if (!w->pid) {
		/* dies with the test; it may have died before the prctl() */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == parent && dup2(w->fd, 1) == 1 && dup2(w->fd, 2) == 2)
			execv(exe, (char *const *)argv);
		_exit(127);
	}
	if (w->pid > 0)
		return 0;
	err = -errno;
	close(w->fd);
	w->fd = -1;
	return err;
}

void luf_wl_stop(const struct luf_wl *w)
{
	if (w->pid > 0)
		kill(w->pid, SIGTERM);
}

int luf_wl_wait(struct luf_wl *w, unsigned int timeout_s)
{
	double end = luf_now() + timeout_s;
	bool killed = false;
	int st, err;
	ssize_t n;
	pid_t r;

	if (w->pid <= 0)
		return -ECHILD;
	while ((r = waitpid(w->pid, &st, timeout_s ? WNOHANG : 0)) != w->pid) {
		if (r < 0 && errno != EINTR)
			break;
		if (timeout_s && !killed && luf_now() > end)
			killed = !kill(w->pid, SIGKILL);
		if (!r)
			luf_msleep(50);
	}
	err = r < 0 ? -errno : 0;
	w->pid = -1;
	n = pread(w->fd, w->out, sizeof(w->out) - 1, 0);
	w->len = n > 0 ? n : 0;
	if (!err && killed && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		w->len += snprintf(w->out + w->len, sizeof(w->out) - w->len,
				   "luf_wl_wait: still running after %u s: killed\n",
				   timeout_s);
	w->len = w->len < sizeof(w->out) ? w->len : sizeof(w->out) - 1;
	w->out[w->len] = '\0';
	close(w->fd);
	w->fd = -1;
	if (err)
		return err;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int64_t luf_wl_get(const struct luf_wl *w, const char *key)
{
	size_t kl = strlen(key);
	const char *p = w->out;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == '=')
			return strtoll(p + kl + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

void luf_wl_log(const char *prefix, const struct luf_wl *w)
{
	const char *p = w->out, *e;
	char kv[sizeof(w->out)];
	size_t n = 0;

	/* the key=value lines in one line, after any message */
	for (; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		if (memchr(p, '=', e - p) && !memchr(p, ' ', e - p)) {
			if (n < sizeof(kv))
				n += snprintf(kv + n, sizeof(kv) - n, " %.*s",
					      (int)(e - p), p);
		} else {
			fprintf(stderr, "# %s%.*s\n", prefix, (int)(e - p), p);
		}
	}
	if (n)
		fprintf(stderr, "# %s%s\n", prefix, kv + 1);
}
