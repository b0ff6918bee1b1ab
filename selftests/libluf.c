// SPDX-License-Identifier: GPL-2.0
/* libluf: shared helpers for the luf selftests and workload (see libluf.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/mempolicy.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "libluf.h"

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
	return (size_t)sysconf(_SC_PAGESIZE);
}

static struct luf_env env;

/* The environment variable of each LUF_DIR_* path, and its default */
#define ENV_DIR(var)	{ #var, var }
static const char *const env_dirs[LUF_DIR_NR][2] = {
	ENV_DIR(LUF_EXT4_DIR), ENV_DIR(LUF_XFS_DIR), ENV_DIR(LUF_TMP_DIR), ENV_DIR(LUF_THP_DIR),
	ENV_DIR(LUF_SWAP_DEV),
};

/* @name's value if set and not empty, else @dflt */
static const char *env_str(const char *name, const char *dflt)
{
	const char *e = getenv(name);

	return e && *e ? e : dflt;
}

/* @name as a number in [@lo, @hi], else (and in ->err if set) @dflt */
static unsigned long env_num(const char *name, unsigned long dflt, unsigned long lo,
			     unsigned long hi, const char *want)
{
	const char *e = env_str(name, NULL);
	unsigned long v;
	char *end;

	if (!e)
		return dflt;
	errno = 0;
	v = strtoul(e, &end, 10);
	if (isdigit((unsigned char)*e) && !errno && !*end && v >= lo && v <= hi)
		return v;
	if (!env.err[0])
		snprintf(env.err, sizeof(env.err), "%s=%s: want %s", name, e, want);
	return dflt;
}

const struct luf_env *luf_env(void)
{
	static bool done;
	int i;

	if (done)
		return &env;
	done = true;
	for (i = 0; i < LUF_DIR_NR; i++)
		env.dir[i] = env_str(env_dirs[i][0], env_dirs[i][1]);
	env.ko = env_str("LUF_KO", NULL);
	env.notifier_ko = env_str("LUF_NOTIFIER_KO", NULL);
	env.quiet = strcmp(env_str("LUF_QUIET_CPUS", "1"), "0");
	env.mark = env_str("LUF_CORRECT_MARK", NULL);
	env.keep = !strcmp(env_str("LUF_KEEP_MODULE", "0"), "1");
	env.brk = env_num("LUF_BREAK", 0, 1, BRK_NR - 1, "a mode of debug_break");
	env.gen_start = env_num("LUF_GEN_START", 0, 1, 0xffffffffUL, "1-4294967295");
	env.stress_cycles = env_num("LUF_STRESS_CYCLES", 100, 0, UINT_MAX, "a number");
	env.stress_deadline_s = env_num("LUF_STRESS_DEADLINE_S", 540, 0, UINT_MAX, "a number");
	env.stress_size_mb = env_num("LUF_STRESS_SIZE_MB", 8, 0, UINT_MAX, "a number");
	env.stress_round_pause_ms = env_num("LUF_STRESS_ROUND_PAUSE_MS", 2000, 0, UINT_MAX,
					    "a number");
	env.stress_reader_pause_us = env_num("LUF_STRESS_READER_PAUSE_US", 2000, 0, UINT_MAX,
					     "a number");
	return &env;
}

const char *luf_path(const char *dflt)
{
	int i;

	for (i = 0; i < LUF_DIR_NR; i++)
		if (!strcmp(dflt, env_dirs[i][1]))
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
	int fd = open(path, O_WRONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	err = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	close(fd);
	return err;
}

int write_file_str(const char *path, const char *s)
{
	return write_file(path, s, strlen(s));
}

ssize_t read_file(const char *path, char *buf, size_t len)
{
	ssize_t n = 0, total = 0;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1 && (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += n;
	if (n < 0)
		total = -errno;
	else
		buf[total] = '\0';
	close(fd);
	return total;
}

int read_u64_strict(const char *path, uint64_t *val)
{
	char buf[64], *p;
	ssize_t n = read_file(path, buf, sizeof(buf));
	uint64_t v = 0;

	if (n < 0)
		return n;
	for (p = buf; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - (*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*p - '0');
	}
	if (p == buf || strcmp(p, "\n"))
		return -EINVAL;
	*val = v;
	return 0;
}

int file_mode(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -errno : (int)(st.st_mode & 07777);
}

const char *luf_module_path(const char *name)
{
	static char path[2][PATH_MAX];
	bool luf = !strcmp(name, LUF_MODNAME), found = false;
	const char *p = luf ? luf_env()->ko : luf_env()->notifier_ko;
	char line[PATH_MAX + 256], dir[128], want[64], *colon, *base, *buf = path[luf];
	struct utsname u;
	FILE *f = NULL;
	int n;

	if (p)
		return p;
	/* the file modprobe would load: its line in modules.dep */
	if (!uname(&u)) {
		snprintf(dir, sizeof(dir), "/lib/modules/%s/", u.release);
		snprintf(line, sizeof(line), "%smodules.dep", dir);
		f = fopen(line, "re");
	}
	snprintf(want, sizeof(want), "%s.ko", name);
	while (f && !found && fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		base = strrchr(line, '/');
		if (strcmp(base ? base + 1 : line, want))
			continue;
		n = snprintf(buf, PATH_MAX, "%s%s", line[0] == '/' ? "" : dir, line);
		found = n > 0 && n < PATH_MAX;
	}
	if (f)
		fclose(f);
	if (!found)
		snprintf(buf, PATH_MAX, "/luf/%s.ko", name);
	return buf;
}

bool luf_is_loaded(void)
{
	FILE *f = fopen("/proc/modules", "re");
	bool found = false;
	char line[512];

	if (!f)
		return path_exists(LUF_MODULE_DIR);
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, LUF_MODNAME " ", strlen(LUF_MODNAME " "));
	fclose(f);
	return found;
}

int luf_insmod(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = syscall(SYS_finit_module, fd, params ?: "", 0) ? -errno : 0;
	close(fd);
	return err;
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
	return err && err != -ENOENT ? err : luf_is_loaded() ? -EBUSY : 0;
}

/* LUF and MIGRC off, which settles everything pending or held */
static int luf_disable(void)
{
	return luf_knob_write(KNOB(enabled), "0") ?: luf_knob_write(KNOB(migrc_enabled), "0");
}

int luf_module_fresh(const char *params)
{
	if (!luf_env()->keep)
		return luf_ensure_unloaded() ?: luf_load(params);
	return (luf_is_loaded() ? 0 : luf_load(params)) ?: luf_disable();
}

int luf_module_fresh_brk(void)
{
	int brk = luf_env()->brk, err = luf_module_fresh(brk ? "allow_unsafe=1" : "");
	char buf[16];

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
		snprintf(why, sizeof(why), "module file %s not found (set LUF_KO)", luf_ko_path());
		return why;
	}
	return NULL;
}

int nr_cpus(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF), onln = sysconf(_SC_NPROCESSORS_ONLN);

	return (int)(conf > onln ? conf : onln);
}

int read_keyed(const char *path, const char *const *names, int n,
	       uint64_t *vals, bool *found, const char *sep)
{
	char line[256], key[128], fmt[32];
	FILE *f = fopen(path, "re");
	unsigned long long v;
	int i, hits = 0;

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

int read_key(const char *path, const char *name, uint64_t *val, const char *sep)
{
	bool found = false;
	int ret = read_keyed(path, &name, 1, val, &found, sep);

	return ret < 0 ? ret : found ? 0 : -ENOENT;
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

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Is @nid in a kernel list like "0-1,3"? */
static bool in_list(const char *p, int nid)
{
	char *end;
	long a, b;

	for (;; p = end + 1) {
		a = strtol(p, &end, 10);
		if (end == p)
			return false;
		b = *end == '-' ? strtol(end + 1, &end, 10) : a;
		if (nid >= a && nid <= b)
			return true;
		if (*end != ',')
			return false;
	}
}

bool numa_node_has_memory(int nid)
{
	char buf[256];

	return read_file("/sys/devices/system/node/has_memory", buf, sizeof(buf)) > 0 &&
	       in_list(buf, nid);
}

bool numa_demotion_possible(char *why, size_t len)
{
	DIR *d = opendir("/sys/bus/memory_tiering/devices");
	int id, t0 = -1, t1 = -1;
	char path[512], buf[256];
	struct dirent *de;

	/* the memory tiers of nodes 0 and 1 */
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/sys/bus/memory_tiering/devices/%s/nodelist",
			 de->d_name);
		if (sscanf(de->d_name, "memory_tier%d", &id) != 1 ||
		    read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		if (t0 < 0 && in_list(buf, 0))
			t0 = id;
		if (t1 < 0 && in_list(buf, 1))
			t1 = id;
	}
	if (d)
		closedir(d);
	if (!path_exists(LUF_DEMOTION_KNOB))
		snprintf(why, len, "%s is missing", LUF_DEMOTION_KNOB);
	else if (!numa_node_has_memory(0) || !numa_node_has_memory(1))
		snprintf(why, len, "NUMA node 0 or 1 has no memory");
	else if (t0 < 0 || t1 < 0)
		snprintf(why, len, "no memory tier for node 0 or 1");
	else if (t1 <= t0)
		snprintf(why, len,
			 "node 1 (memory_tier%d) is not a lower tier than node 0 (memory_tier%d)",
			 t1, t0);
	else
		return true;
	return false;
}

bool memcg_available(void)
{
	char buf[512];

	if (read_file(LUF_CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "memory"))
		return false;
	return (read_file(LUF_CGROUP_ROOT "/cgroup.subtree_control", buf, sizeof(buf)) >= 0 &&
		strstr(buf, "memory")) ||
	       !write_file_str(LUF_CGROUP_ROOT "/cgroup.subtree_control", "+memory");
}

int memcg_create(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", LUF_CGROUP_ROOT, name);
	return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
}

int memcg_write(const char *cg, const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_file_str(path, val);
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

int luf_file_create_words(struct luf_file *f, const char *dir,
			  const char *tag, size_t size, size_t wsize,
			  uint64_t (*word)(uint64_t idx, void *arg), void *arg)
{
	size_t ps = luf_page_size(), off, len, i;
	uint64_t *buf;
	ssize_t n;
	int err;

	memset(f, 0, sizeof(*f));
	size = (size + ps - 1) / ps * ps;
	wsize = wsize ? (wsize + ps - 1) / ps * ps : ps;
	snprintf(f->path, sizeof(f->path), "%s/luf-%s-%d", luf_path(dir), tag, getpid());
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0)
		return -errno;
	f->size = size;
	f->npages = size / ps;
	buf = malloc(wsize);
	err = buf ? 0 : -ENOMEM;
	for (off = 0; !err && off < size; off += wsize) {
		len = size - off < wsize ? size - off : wsize;
		for (i = 0; i < len / 8; i++)
			buf[i] = word(off / 8 + i, arg);
		n = pwrite(f->fd, buf, len, off);
		if (n != (ssize_t)len)
			err = n < 0 ? -errno : -EIO;
	}
	free(buf);
	if (!err && fsync(f->fd))
		err = -errno;
	if (err) {
		close(f->fd);
		unlink(f->path);
		f->fd = -1;
	}
	return err;
}

static uint64_t pattern_word(uint64_t idx, void *arg)
{
	(void)arg;
	return luf_pattern(idx * 8);
}

int luf_file_create(struct luf_file *f, const char *dir, const char *tag, size_t size)
{
	return size ? luf_file_create_words(f, dir, tag, size, 64 * 1024, pattern_word, NULL) :
		      -EINVAL;
}

int luf_file_evict(struct luf_file *f)
{
	if (fdatasync(f->fd))
		return -errno;
	return -posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
}

int luf_file_map(struct luf_file *f)
{
	void *p = mmap(NULL, f->size, PROT_READ, MAP_SHARED, f->fd, 0);

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
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -errno;
	got = pread(fd, pfns, len, (off_t)((uintptr_t)addr / ps * sizeof(uint64_t)));
	close(fd);
	if (got != (ssize_t)len)
		return got < 0 ? -errno : -EIO;
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

	for (i = 0; i < f->npages; i++)
		bad += *(const volatile uint64_t *)(f->map + i * ps) !=
		       luf_pattern((uint64_t)i * ps);
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

long luf_move_pages(unsigned long count, void **pages, const int *nodes, int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status, MPOL_MF_MOVE_ALL);
}

int luf_move_to_node(const void *map, size_t npages, int node, size_t chunk,
		     int *status)
{
	size_t ps = luf_page_size(), at, i, c;
	int *st, *nodes, err = 0;
	void **pages;

	if (!chunk || chunk > npages)
		chunk = npages;
	pages = calloc(chunk ?: 1, sizeof(*pages));
	nodes = calloc(chunk ?: 1, sizeof(*nodes));
	st = status ?: calloc(npages ?: 1, sizeof(*st));
	if (!pages || !nodes || !st)
		err = -ENOMEM;
	for (at = 0; !err && at < npages; at += c) {
		c = npages - at < chunk ? npages - at : chunk;
		for (i = 0; i < c; i++) {
			pages[i] = (char *)map + (at + i) * ps;
			nodes[i] = node;
			st[at + i] = -1;
		}
		if (luf_move_pages(c, pages, node < 0 ? NULL : nodes, st + at))
			err = -errno;
	}
	for (i = 0; err >= 0 && node >= 0 && i < npages; i++)
		err += st[i] != node;
	/* a large folio's other pages report -EBUSY, yet move with it: ask where each is */
	if (err > 0) {
		err = luf_move_to_node(map, npages, -1, chunk, st);
		for (i = 0; !err && i < npages; i++)
			err += st[i] != node;
	}
	free(pages);
	free(nodes);
	if (st != status)
		free(st);
	return err;
}

int luf_wl_start(struct luf_wl *w, const char *const *args)
{
	char exe[PATH_MAX], *slash;
	const char *argv[32] = { exe };
	pid_t parent = getpid();
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
	for (n = 0; args[n] && n + 2 < (int)ARRAY_SIZE(argv); n++)
		argv[n + 1] = args[n];
	if (args[n])
		return -E2BIG;
	/* a file, not a pipe: the child never blocks on its output */
	w->fd = memfd_create("luf_workload", MFD_CLOEXEC);
	if (w->fd < 0)
		return -errno;
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
				   "luf_wl_wait: still running after %u s: killed\n", timeout_s);
	w->len = w->len < sizeof(w->out) ? w->len : sizeof(w->out) - 1;
	w->out[w->len] = '\0';
	close(w->fd);
	w->fd = -1;
	return err ?: WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int64_t luf_wl_get(const struct luf_wl *w, const char *key)
{
	size_t kl = strlen(key);
	const char *p, *e;

	for (p = w->out; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		if (!strncmp(p, key, kl) && p[kl] == '=')
			return strtoll(p + kl + 1, NULL, 10);
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
				n += snprintf(kv + n, sizeof(kv) - n, " %.*s", (int)(e - p), p);
		} else {
			fprintf(stderr, "# %s%.*s\n", prefix, (int)(e - p), p);
		}
	}
	if (n)
		fprintf(stderr, "# %s%s\n", prefix, kv + 1);
}
