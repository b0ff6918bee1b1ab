/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libluf: the helpers of the luf selftests and luf_workload, free of the
 * kselftest harness.  Functions return 0 or -errno unless said otherwise.
 */
#ifndef LIBLUF_H
#define LIBLUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/types.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif

#define LUF_MODNAME		"luf"
#define LUF_SYSFS_DIR		"/sys/kernel/mm/luf"
#define LUF_DEBUGFS_DIR		"/sys/kernel/debug/luf"
#define LUF_MODULE_DIR		"/sys/module/luf"
#define LUF_CGROUP_ROOT		"/sys/fs/cgroup"
#define LUF_DEMOTION_KNOB	"/sys/kernel/mm/numa/demotion_enabled"
/* Defaults: luf_path() returns the environment variable of the same name if set */
#define LUF_EXT4_DIR		"/mnt/ext4"
#define LUF_XFS_DIR		"/mnt/xfs"
#define LUF_TMP_DIR		"/mnt/tmp"	/* tmpfs */
#define LUF_THP_DIR		"/mnt/thp"	/* tmpfs huge=always */
#define LUF_SWAP_DEV		"/dev/zram0"	/* init: mkswap, no swapon */

#define LUF_MAX_READERS		16

/* The one retry rule (testing.rst): at most LUF_TRIES tries, or attempts in a broken run */
#define LUF_TRIES		10

/* debug_break=<n>: BRK_<id> = n */
enum {
	BRK_NONE,
#define LUF_BREAK(id, ...)	BRK_##id,
#include "luf_break_defs.h"
#undef LUF_BREAK
	BRK_NR
};

enum {
	LUF_DIR_EXT4, LUF_DIR_XFS, LUF_DIR_TMP, LUF_DIR_THP, LUF_DIR_SWAP,
	LUF_DIR_NR
};

/* Every LUF_* variable (testing.rst), read once; a bad one says why in ->err */
struct luf_env {
	int brk;			/* LUF_BREAK */
	unsigned long gen_start;	/* LUF_GEN_START */
	bool keep;			/* LUF_KEEP_MODULE=1 */
	bool quiet;			/* LUF_QUIET_CPUS (not 0) */
	const char *mark;		/* LUF_CORRECT_MARK */
	const char *ko, *notifier_ko;	/* LUF_KO, LUF_NOTIFIER_KO */
	const char *dir[LUF_DIR_NR];	/* LUF_EXT4_DIR ... LUF_SWAP_DEV */
	/* LUF_STRESS_CYCLES, _DEADLINE_S, _SIZE_MB, _ROUND_PAUSE_MS, _READER_PAUSE_US */
	unsigned int stress_cycles, stress_deadline_s, stress_size_mb;
	unsigned int stress_round_pause_ms, stress_reader_pause_us;
	char err[160];
};

const struct luf_env *luf_env(void);

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

/* @dflt (a path above) or its environment variable; any other path unchanged */
const char *luf_path(const char *dflt);

/*
 * Module @name (luf or luf_notifier_test): $LUF_KO or $LUF_NOTIFIER_KO,
 * else modprobe's file (modules.dep), else /luf/@name.ko.
 */
const char *luf_module_path(const char *name);
#define luf_ko_path()	luf_module_path(LUF_MODNAME)
bool luf_is_loaded(void);
/* finit_module(2) of @path with @params (NULL: none) */
int luf_insmod(const char *path, const char *params);
/* luf.ko with @params, and gen_start= of LUF_GEN_START unless @params has one */
int luf_load(const char *params);
/* delete_module(@name), retrying while it is busy (<= ~10 s) */
int module_unload(const char *name);
int luf_unload(void);
/* Unload if loaded; 0 when the module is gone afterwards */
int luf_ensure_unloaded(void);
/*
 * The start of a test: luf.ko freshly loaded with @params; with
 * LUF_KEEP_MODULE=1 the loaded one with LUF and MIGRC disabled.
 */
int luf_module_fresh(const char *params);
/* The same, in a broken run (LUF_BREAK=n) with allow_unsafe=1 and debug_break=n */
int luf_module_fresh_brk(void);
/* The end of a test: unload, or (LUF_KEEP_MODULE) disable and debug_break=0 */
void luf_module_done(void);
/* Why a program cannot run here (root, debugfs, luf.ko if @need_module), or NULL */
const char *luf_skip_reason(bool need_module);

/* stat(2) of luf_path(@path) works */
bool path_exists(const char *path);
/* One write(2) of exactly @len bytes (-EIO if short) */
int write_file(const char *path, const void *buf, size_t len);
int write_file_str(const char *path, const char *s);
/* Up to @len-1 bytes, NUL terminated; bytes read or -errno */
ssize_t read_file(const char *path, char *buf, size_t len);
/* The file holds decimal digits and one newline, nothing else */
int read_u64_strict(const char *path, uint64_t *val);
/* Mode bits (& 07777) or -errno */
int file_mode(const char *path);

/*
 * Names from the module's lists (luf_knob_defs.h, luf_stat_defs.h): an
 * unlisted one does not compile.  KNOB(enabled) is "enabled",
 * CTR_PATH(reclaim, deferred) "reclaim_deferred", CTR_FORCED(aging)
 * "forced_aging", CTR_RELEASED(aging) "released_aging".
 */
struct luf_names {
#define LUF_KNOB(name, ...)		char knob_##name;
#include "luf_knob_defs.h"
#undef LUF_KNOB
#define LUF_PATH_STAT(id, name)		char path_##name;
#define LUF_EVENT(id, name)		char ctr_##name;
#define LUF_GAUGE(name, field)		char ctr_##name;
#define LUF_CAUSE(id, name)		char cause_##name;
#include "luf_stat_defs.h"
};

#define LUF_LISTED(field, str)	\
	((str) + 0 * sizeof(((struct luf_names *)0)->field))
#define KNOB(name)		LUF_LISTED(knob_##name, #name)
#define CTR(name)		LUF_LISTED(ctr_##name, #name)
#define CTR_PATH(side, name)	LUF_LISTED(path_##name, #side "_" #name)
#define CTR_FORCED(cause)	LUF_LISTED(cause_##cause, "forced_" #cause)
#define CTR_RELEASED(cause)	LUF_LISTED(cause_##cause, "released_" #cause)

void luf_knob_path(const char *name, char *buf, size_t len);
int luf_knob_read(const char *name, uint64_t *val);
int luf_knob_write(const char *name, const char *s);
/* Knob @name's default and range on this machine; -ENOENT if not listed */
int luf_knob_limits(const char *name, uint64_t *def, uint64_t *lo, uint64_t *hi);

#define LUF_STAT_FILE		LUF_DEBUGFS_DIR "/stat"
#define LUF_STAT_MAX		256
#define LUF_STAT_NAME		48

/* One read of the stat file: its "<name> <value>" lines, in order */
struct luf_stat {
	int n;
	struct {
		char name[LUF_STAT_NAME];
		int64_t val;
	} line[LUF_STAT_MAX];
};

/* -EPROTO for a line that is not "<name> <decimal>" */
int luf_stat_read(struct luf_stat *s);
/* Line @name of @s; -ENOENT if there is none */
int luf_stat_get(const struct luf_stat *s, const char *name, uint64_t *val);
/* One line of a fresh read; -ENOENT if there is none */
int luf_counter_read(const char *name, uint64_t *val);

/* What the correctness tests compare around an unmap; an absent counter reads 0 */
struct luf_ev {
	/* deferred_folios, held_pages, held_pages_total, released_pages, pending_folios */
	uint64_t deferred, held, held_total, released, pending, flushes;
	uint64_t fc, wf, timer, disable, aging;	/* forced_<cause> */
	uint64_t rel_zone_low, rel_shrinker, rel_isolate;	/* released_<cause> */
	uint64_t retained, tlbi_avoided;	/* migrc_retained, tlbi_avoided */
	uint64_t pages_reclaim, pages_migrate;	/* <path>_deferred_pages */
};

int luf_ev_read(struct luf_ev *e);
/* Every field as "# @what: name=value ..." on stderr */
void luf_ev_log(const char *what, const struct luf_ev *e);

int nr_cpus(void);
/* The "name<@sep>value" lines of @path for @names into @vals, @found; how many, or -errno */
int read_keyed(const char *path, const char *const *names, int n,
	       uint64_t *vals, bool *found, const char *sep);
/* The value of key @name in @path (read_keyed()); -ENOENT if absent */
int read_key(const char *path, const char *name, uint64_t *val, const char *sep);
/* /proc/meminfo field in kB; -ENOENT if absent */
int meminfo_kb(const char *name, uint64_t *kb);
/* sync + echo 3 > /proc/sys/vm/drop_caches */
int drop_caches(void);

/*
 * Quiet reader CPUs (LUF_QUIET_CPUS=0: no-op): kernel threads, device
 * interrupts and unbound workqueues to CPU 0, NUMA balancing off,
 * vm.stat_interval 60 s, until luf_quiet_restore(), exit, SIGTERM or SIGINT.
 */
void luf_quiet_cpus(void);
void luf_quiet_restore(void);

int pin_to_cpu(int cpu);
bool numa_node_has_memory(int nid);
/* Node 1 has memory in a lower tier than node 0 and the knob exists; else @why */
bool numa_demotion_possible(char *why, size_t len);

/* memcg (cgroup v2) under LUF_CGROUP_ROOT */
bool memcg_available(void);
/* mkdir LUF_CGROUP_ROOT/@name (an existing empty one is reused) */
int memcg_create(const char *name, char *path, size_t len);
int memcg_write(const char *cg, const char *file, const char *val);
/* A one-number file of @cg (memory.current, memory.max) */
int memcg_u64(const char *cg, const char *file, uint64_t *val);
/* The whole calling process into @cg */
int memcg_enter(const char *cg);
/* Back to the root cgroup, then rmdir @cg (retrying while busy) */
int memcg_destroy(const char *cg);

/* Every 8-byte word at file offset @off of a test file holds luf_pattern(@off) */
static inline uint64_t luf_pattern(uint64_t off)
{
	return 0x4c55460000000000ULL | (off >> 3);
}

struct luf_file {
	int fd;
	char path[256];
	size_t size;		/* bytes, multiple of the page size */
	size_t npages;
	const char *map;	/* PROT_READ MAP_SHARED mapping or NULL */
};

/*
 * luf_path(@dir)/luf-@tag-<pid>, @size bytes (0: empty) whose word i is
 * @word(i, @arg), @wsize bytes a write(2) (both rounded up to pages), fsynced.
 */
int luf_file_create_words(struct luf_file *f, const char *dir,
			  const char *tag, size_t size, size_t wsize,
			  uint64_t (*word)(uint64_t idx, void *arg), void *arg);
/* The same with luf_pattern() content, 64 KiB a write(2); @size > 0 */
int luf_file_create(struct luf_file *f, const char *dir, const char *tag,
		    size_t size);
/* Drop the file's clean page cache (fdatasync, POSIX_FADV_DONTNEED) */
int luf_file_evict(struct luf_file *f);
int luf_file_map(struct luf_file *f);
/* The PFN of each page of the mapping (/proc/self/pagemap, root); 0: not mapped */
int luf_file_pfns(struct luf_file *f, uint64_t *pfns);
/* The same for @n pages at @addr */
int luf_pagemap_pfns(const void *addr, size_t n, uint64_t *pfns);
/* One word of every page read through the mapping; the bad ones */
uint64_t luf_file_touch(struct luf_file *f);
/* munmap, close, unlink */
void luf_file_destroy(struct luf_file *f);

/* Pinned reader threads (libluf_rd.c): what a word or a fault is */
enum luf_rd_kind {
	LUF_RD_OK,
	LUF_RD_STALE,		/* old content after the publication */
	LUF_RD_CORRUPT,		/* content that is neither old nor new */
	LUF_RD_BAD_FAULT,	/* a fault where none may happen */
	LUF_RD_READ_AFTER,	/* a read that worked where it must fault */
	LUF_RD_NR_KINDS
};

struct luf_rd;

/*
 * @check: the luf_rd_kind of word @i read as @v (@pub: the pass began after
 * luf_rd_publish()).  @fault_ok: a fault on word @i is allowed (NULL: faults kill).
 */
typedef int (*luf_rd_check_fn)(const struct luf_rd *c, size_t i, uint64_t v,
			       bool pub);
typedef bool (*luf_rd_fault_fn)(const struct luf_rd *c, size_t i, bool pub);

struct luf_rd_stats {
	atomic_uint_fast64_t passes;
	atomic_uint_fast64_t post_passes;	/* passes begun after publication */
	atomic_uint_fast64_t words;		/* words checked */
	atomic_uint_fast64_t bad[LUF_RD_NR_KINDS];
	uint64_t faults, post_faults;
	uint64_t marked;	/* LUF_RD_CORRUPT words equal to ->mark */
	uint64_t preempted;	/* involuntary context switches of the reader */
	uint64_t slept;		/* voluntary ones (a fault, ->pause_us) */
	uint64_t active_ns;	/* ->active_time: time the loop ran */
	uint64_t tick_ns;	/* ->active_time: the last look at the clock */
	uint64_t first_val;	/* the first bad word, its index and kind */
	size_t first_idx;
	int first_kind, have_first;
} __attribute__((aligned(64)));

struct luf_rd_slot {
	struct luf_rd *c;
	int idx;
};

/* Zeroed, with ->check (->fault_ok, ->sample, ...) set, for luf_rd_start() */
struct luf_rd {
	luf_rd_check_fn check;
	luf_rd_fault_fn fault_ok;
	bool sample;			/* one word of each page a pass */
	unsigned int pause_us;		/* sleep after each pass (0: spin) */
	uint64_t mark;			/* a content worth counting apart */
	bool active_time;		/* sum the time the loop ran (st[].active_ns) */
	const volatile uint64_t *base;
	size_t words;			/* words the readers spin over */
	size_t wpp;			/* words per page */
	int n;
	int cpus[LUF_MAX_READERS];
	pthread_t th[LUF_MAX_READERS];
	struct luf_rd_slot slot[LUF_MAX_READERS];
	atomic_int stop, ready, err;
	atomic_int pause, paused;	/* luf_rd_pause() */
	atomic_int published;
	double t_pub;
	struct luf_rd_stats st[LUF_MAX_READERS];
};

/* @n readers of @words words at @base on @cpus[i] (NULL: 1 + i), each past one pass */
int luf_rd_start(struct luf_rd *c, const void *base, size_t words,
		 const int *cpus, int n);
/* Stop and join them; a no-op for a zeroed or stopped @c */
void luf_rd_stop(struct luf_rd *c);
/*
 * Hold every reader before its next pass, off the mapping but in the mm with
 * its cached translations, until luf_rd_resume(); -ETIMEDOUT.
 */
int luf_rd_pause(struct luf_rd *c);
void luf_rd_resume(struct luf_rd *c);
/* From the next pass on, the readers check for the published state */
void luf_rd_publish(struct luf_rd *c);
/* @ms after the publication and @passes passes of each begun after it; false after 60 s */
bool luf_rd_hold(struct luf_rd *c, unsigned int ms, uint64_t passes);
/* Summed over the readers: words checked (LUF_RD_OK) or of @kind */
uint64_t luf_rd_count(const struct luf_rd *c, enum luf_rd_kind kind);
/* Grow the stack and fault it in, so deep calls later need no new page */
void luf_prefault_stack(size_t bytes);

/*
 * The workloads' readers: one word of each of @npages pages a pass (another
 * each pass) against luf_pattern(), @pause_us after a pass; bad: LUF_RD_CORRUPT.
 */
int luf_readers_start(struct luf_rd *r, const char *base, size_t npages,
		      const int *cpus, int n, unsigned int pause_us);
#define luf_readers_stop luf_rd_stop

/* move_pages(2) of this process, MPOL_MF_MOVE_ALL; @nodes NULL: query */
long luf_move_pages(unsigned long count, void **pages, const int *nodes,
		    int *status);
/*
 * @npages pages at @map to @node (< 0: query), @chunk a call (0: all), each
 * one's node into @status; how many are not on @node, or -errno.
 */
int luf_move_to_node(const void *map, size_t npages, int node, size_t chunk,
		     int *status);

/*
 * luf_workload (beside the program) as a child: luf_wl_start() (the workload
 * first), luf_wl_wait(); luf_wl_stop() ends it after its round.  Its output: ->out.
 */
struct luf_wl {
	pid_t pid;
	int fd;
	size_t len;
	char out[4096];
};

int luf_wl_start(struct luf_wl *w, const char *const *args);
void luf_wl_stop(const struct luf_wl *w);
/* Its exit status (4: KSFT_SKIP) or -errno; SIGKILL after @timeout_s (0: never) */
int luf_wl_wait(struct luf_wl *w, unsigned int timeout_s);
/* The integer value of @key in the output; -1 if absent */
int64_t luf_wl_get(const struct luf_wl *w, const char *key);
/* The output on stderr: messages, then all key=value pairs in one line */
void luf_wl_log(const char *prefix, const struct luf_wl *w);

/* To stderr, unbuffered: a test process ends with _exit() */
#define note(fmt, ...) fprintf(stderr, "# " fmt, ##__VA_ARGS__)

size_t luf_page_size(void);
double luf_now(void);
void luf_msleep(unsigned int ms);

#endif /* LIBLUF_H */
