/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libluf: helpers shared by the luf selftests and luf_workload, linked
 * into every program: module load/unload, sysfs/debugfs access, the
 * counter snapshot, /proc readers, CPU pinning and quieting, the pinned
 * reader engine, memcg helpers, test files, migration, and starting
 * luf_workload as a child.
 *
 * Functions return 0 or a negative errno unless documented otherwise; none
 * of them prints on success.  Nothing here depends on kselftest_harness.h.
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
#define LUF_DEFAULT_KO		"/luf/luf.ko"
#define LUF_SYSFS_DIR		"/sys/kernel/mm/luf"
#define LUF_DEBUGFS_DIR		"/sys/kernel/debug/luf"
#define LUF_MODULE_DIR		"/sys/module/luf"
#define LUF_CGROUP_ROOT		"/sys/fs/cgroup"
#define LUF_DEMOTION_KNOB	"/sys/kernel/mm/numa/demotion_enabled"
/*
 * The guest's paths.  Each is a default: luf_path() returns the value of
 * the environment variable of the same name instead, if it is set.
 */
#define LUF_EXT4_DIR		"/mnt/ext4"
#define LUF_XFS_DIR		"/mnt/xfs"
#define LUF_TMP_DIR		"/mnt/tmp"	/* tmpfs */
#define LUF_THP_DIR		"/mnt/thp"	/* tmpfs huge=always */
#define LUF_SWAP_DEV		"/dev/zram0"	/* init: mkswap, no swapon */

#define LUF_MAX_READERS		16

/*
 * The one retry rule.  A try whose premise something outside the test
 * took away (another CPU flushed the stale entry, reclaim kept the page,
 * no page was stolen, no pageblock could be isolated, a migration left
 * pages behind) is made again from scratch, at most LUF_TRIES times in
 * all, and the test fails or skips, saying why, only if no try kept its
 * premise.  In a broken mode (debug_break) a test likewise makes up to
 * LUF_TRIES attempts and passes at the first that sees the violation.
 */
#define LUF_TRIES		10

/* The module's broken modes (debug_break=<n>), BRK_<id> = n */
enum {
	BRK_NONE,
#define LUF_BREAK(id, ...)	BRK_##id,
#include "luf_break_defs.h"
#undef LUF_BREAK
	BRK_NR
};

/* ---- environment ----------------------------------------------------- */

enum {
	LUF_DIR_EXT4, LUF_DIR_XFS, LUF_DIR_TMP, LUF_DIR_THP, LUF_DIR_SWAP,
	LUF_DIR_NR
};

/*
 * Every LUF_* environment variable the tests read (testing.rst lists
 * them), read once.  A bad value leaves its default and says why in ->err.
 */
struct luf_env {
	int brk;		/* LUF_BREAK: the debug_break mode to catch */
	unsigned long gen_start;	/* LUF_GEN_START: gen_start= of each load */
	bool keep;		/* LUF_KEEP_MODULE=1: one load, never unloaded */
	bool quiet;		/* LUF_QUIET_CPUS (not 0): luf_quiet_cpus() works */
	const char *mark;	/* LUF_CORRECT_MARK: trace_marker in the window */
	const char *ko;		/* LUF_KO: luf.ko */
	const char *notifier_ko;	/* LUF_NOTIFIER_KO: luf_notifier_test.ko */
	const char *dir[LUF_DIR_NR];	/* LUF_EXT4_DIR ... LUF_SWAP_DEV */
	/* luf_stress: LUF_STRESS_CYCLES, _DEADLINE_S, _SIZE_MB, ... */
	unsigned int stress_cycles, stress_deadline_s, stress_size_mb;
	unsigned int stress_round_pause_ms, stress_reader_pause_us;
	char err[160];
};

const struct luf_env *luf_env(void);

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

/* ---- module --------------------------------------------------------- */

/*
 * @dflt (one of the paths above), or its environment variable if set;
 * any other path unchanged.
 */
const char *luf_path(const char *dflt);

/*
 * The file of module @name (luf or luf_notifier_test): $LUF_KO or
 * $LUF_NOTIFIER_KO if set, else the file modprobe would load (from
 * /lib/modules/$(uname -r)/modules.dep), else /luf/@name.ko.
 */
const char *luf_module_path(const char *name);
#define luf_ko_path()	luf_module_path(LUF_MODNAME)
/* /sys/module/luf exists */
bool luf_is_loaded(void);
/* finit_module(2) of @path with @params ("" or NULL for none). */
int luf_insmod(const char *path, const char *params);
/* luf.ko with @params, and gen_start= of LUF_GEN_START unless @params has one */
int luf_load(const char *params);
/* delete_module(@name), retrying while it is busy (<= ~10 s); 0 or -errno */
int module_unload(const char *name);
int luf_unload(void);
/* Unload if loaded; 0 when the module is gone afterwards. */
int luf_ensure_unloaded(void);
/*
 * The start of a test: luf.ko freshly loaded with @params; with
 * LUF_KEEP_MODULE=1 the loaded one (loaded if it is not) with LUF and
 * MIGRC disabled, which settles everything.  0 or -errno.
 */
int luf_module_fresh(const char *params);
/*
 * luf_module_fresh() for a test that a broken mode may have to catch: in a
 * broken run (LUF_BREAK=n) luf.ko is loaded with allow_unsafe=1 and gets
 * debug_break=n.  0 or -errno (-EPERM: debug_break refused).
 */
int luf_module_fresh_brk(void);
/*
 * The end of a test: unload, or LUF and MIGRC disabled and debug_break=0
 * (LUF_KEEP_MODULE)
 */
void luf_module_done(void);

/*
 * Why a selftest binary cannot run here (not root, no debugfs, or, if
 * @need_module, no luf.ko), or NULL if it can.
 */
const char *luf_skip_reason(bool need_module);

/* ---- generic file helpers ------------------------------------------- */

/* stat(2) of luf_path(@path) works */
bool path_exists(const char *path);
/* One write(2) of exactly @len bytes; -errno on failure, -EIO if short. */
int write_file(const char *path, const void *buf, size_t len);
int write_file_str(const char *path, const char *s);
/* Read up to @len-1 bytes, NUL terminated; returns bytes read or -errno. */
ssize_t read_file(const char *path, char *buf, size_t len);
/* Strict: the file must hold decimal digits and one newline, nothing else. */
int read_u64_strict(const char *path, uint64_t *val);
/* File mode bits (& 07777) or -errno. */
int file_mode(const char *path);

/* ---- knobs (/sys/kernel/mm/luf) ------------------------------------- */

/*
 * The name of a knob or counter, from the module's lists: a name that is
 * not in luf_knob_defs.h or luf_stat_defs.h does not compile.
 * KNOB(enabled) is "enabled", CTR(deferred_folios) "deferred_folios",
 * CTR_PATH(reclaim, deferred) "reclaim_deferred", CTR_FORCED(aging)
 * "forced_aging" and CTR_RELEASED(aging) "released_aging".
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
/* Writes exactly strlen(@s) bytes. */
int luf_knob_write(const char *name, const char *s);
/* Knob @i of the module's list (luf_knob_defs.h); NULL past its end */
const char *luf_knob_name(int i);
/*
 * Knob @name's default and range on this machine, evaluated from the
 * module's list; -ENOENT if the list has no such knob.
 */
int luf_knob_limits(const char *name, uint64_t *def, uint64_t *lo, uint64_t *hi);

/* ---- counters (/sys/kernel/debug/luf/stat) -------------------------- */

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

/* 0, or -errno; -EPROTO for a line that is not "<name> <decimal>" */
int luf_stat_read(struct luf_stat *s);
/* The value of line @name of @s into @val; -ENOENT if there is none */
int luf_stat_get(const struct luf_stat *s, const char *name, uint64_t *val);
/* One line of a fresh read; -ENOENT if the module has no such counter */
int luf_counter_read(const char *name, uint64_t *val);

/*
 * The module's state: deferrals, held and released pages, and why
 * deferred work was settled; what the correctness tests read around an
 * unmap.  A counter file this luf.ko does not have reads as 0.
 */
struct luf_ev {
	uint64_t deferred;	/* deferred_folios */
	uint64_t held;		/* held_pages */
	uint64_t held_total;	/* held_pages_total */
	uint64_t released;	/* released_pages */
	uint64_t pending;	/* pending_folios */
	uint64_t flushes;
	uint64_t fc, wf, timer, disable, aging;	/* forced_<cause> */
	uint64_t rel_zone_low, rel_shrinker, rel_isolate;	/* released_<cause> */
	uint64_t retained;	/* migrc_retained */
	uint64_t tlbi_avoided;
	uint64_t pages_reclaim;	/* reclaim_deferred_pages */
	uint64_t pages_migrate;	/* migrate_deferred_pages */
};

int luf_ev_read(struct luf_ev *e);
/* Every field as "# @what: name=value ..." on stderr */
void luf_ev_log(const char *what, const struct luf_ev *e);

/* ---- system statistics ---------------------------------------------- */

int nr_cpus(void);
/*
 * Read the "name<@sep>value" lines of @path into @vals for the @n @names
 * (@found[i] set for each found); the number found, or -errno.
 */
int read_keyed(const char *path, const char *const *names, int n,
	       uint64_t *vals, bool *found, const char *sep);
/* /proc/meminfo field in kB; -ENOENT if absent. */
int meminfo_kb(const char *name, uint64_t *kb);
/* sync + echo 3 > /proc/sys/vm/drop_caches */
int drop_caches(void);

/* ---- CPUs, NUMA ------------------------------------------------------ */

/*
 * Opt-in, for tests that need quiet reader CPUs (libluf_quiet.c): move
 * every movable kernel thread, device interrupt and the unbound workqueues
 * to CPU 0, turn NUMA balancing off and set vm.stat_interval to 60 s,
 * system-wide, until luf_quiet_restore(), exit, SIGTERM or SIGINT of the
 * calling process puts back everything it changed.  LUF_QUIET_CPUS=0 in
 * the environment: do nothing.
 */
void luf_quiet_cpus(void);
void luf_quiet_restore(void);

/* Pin the calling thread to @cpu. */
int pin_to_cpu(int cpu);
/* Node @nid is online and has memory. */
bool numa_node_has_memory(int nid);
/*
 * Demotion from node 0 to node 1 can happen: the demotion knob exists,
 * node 1 has memory and sits in a slower memory tier than node 0.
 * If not, @why says what is missing.
 */
bool numa_demotion_possible(char *why, size_t len);

/* ---- memcg (cgroup v2) ---------------------------------------------- */

bool memcg_available(void);
/* mkdir LUF_CGROUP_ROOT/@name (an existing empty one is reused). */
int memcg_create(const char *name, char *path, size_t len);
int memcg_write(const char *cg, const char *file, const char *val);
/* a one-number file of @cg (memory.current, memory.max): -errno */
int memcg_u64(const char *cg, const char *file, uint64_t *val);
/* "key value" line from @cg/memory.stat */
int memcg_stat(const char *cg, const char *key, uint64_t *val);
/* Move the whole calling process into @cg (cgroup.procs). */
int memcg_enter(const char *cg);
/* Back to the root cgroup, then rmdir @cg (retrying while busy). */
int memcg_destroy(const char *cg);

/* ---- test file with a self-describing pattern ------------------------ */

/* Every 8-byte word at file offset @off holds luf_pattern(@off). */
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
 * Create luf_path(@dir)/luf-@tag-<pid> of @size bytes (rounded up to
 * pages) whose 8-byte word at index i (file offset / 8) is @word(i, @arg),
 * written @wsize bytes (rounded up to pages) per write(2), and fsync it.
 * @size 0: an empty file.
 */
int luf_file_create_words(struct luf_file *f, const char *dir,
			  const char *tag, size_t size, size_t wsize,
			  uint64_t (*word)(uint64_t idx, void *arg), void *arg);
/* The same with luf_pattern() content, 64 KiB per write(2); @size > 0. */
int luf_file_create(struct luf_file *f, const char *dir, const char *tag,
		    size_t size);
/* Drop the file's clean page cache (fsync + POSIX_FADV_DONTNEED). */
int luf_file_evict(struct luf_file *f);
int luf_file_map(struct luf_file *f);
/*
 * PFN behind each page of the mapping from /proc/self/pagemap (root), 0 for
 * a page that is not mapped.
 */
int luf_file_pfns(struct luf_file *f, uint64_t *pfns);
/* The same for @n pages at @addr; 0 or -errno */
int luf_pagemap_pfns(const void *addr, size_t n, uint64_t *pfns);
/* Read one word of every page through the mapping; returns bad words. */
uint64_t luf_file_touch(struct luf_file *f);
/* munmap, close, unlink */
void luf_file_destroy(struct luf_file *f);

/* ---- pinned reader threads (libluf_rd.c) ------------------------------ */

/* What a word (or a fault) is; the bad kinds are counted per reader */
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
 * Reader engine callbacks.  @check: what word @i (of the mapping) read as
 * @v is, @pub: the pass began after luf_rd_publish(); returns an enum
 * luf_rd_kind.  @fault_ok: whether a fault reading word @i is allowed;
 * NULL: faults are not caught (they kill the process).
 */
typedef int (*luf_rd_check_fn)(const struct luf_rd *c, size_t i, uint64_t v,
			       bool pub);
typedef bool (*luf_rd_fault_fn)(const struct luf_rd *c, size_t i, bool pub);

struct luf_rd_stats {
	atomic_uint_fast64_t passes;
	atomic_uint_fast64_t post_passes;	/* passes begun after publication */
	atomic_uint_fast64_t words;		/* words checked */
	atomic_uint_fast64_t bad[LUF_RD_NR_KINDS];
	uint64_t faults;
	uint64_t post_faults;
	uint64_t marked;	/* LUF_RD_CORRUPT words equal to ->mark */
	uint64_t preempted;	/* involuntary context switches of the reader */
	uint64_t slept;		/* voluntary ones (a fault, ->pause_us) */
	uint64_t active_ns;	/* ->active_time: time the loop ran */
	uint64_t tick_ns;	/* ->active_time: the last look at the clock */
	uint64_t first_val;	/* the first bad word */
	size_t first_idx;
	int first_kind;
	int have_first;
} __attribute__((aligned(64)));

struct luf_rd_slot {
	struct luf_rd *c;
	int idx;
};

/*
 * Set ->check (and ->fault_ok, ->sample, ->pause_us, ->mark) in a zeroed
 * struct luf_rd, then luf_rd_start().
 */
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

/*
 * Start @n readers over the @words words at @base, reader i pinned to
 * @cpus[i] (@cpus NULL: CPU 1 + i); returns once each is pinned and has
 * made one pass.
 */
int luf_rd_start(struct luf_rd *c, const void *base, size_t words,
		 const int *cpus, int n);
/* Stop and join the readers; none run in a zeroed or stopped @c: a no-op */
void luf_rd_stop(struct luf_rd *c);
/*
 * Hold every reader at the start of its next pass, off the mapping, until
 * luf_rd_resume(): it keeps running the test's mm in user mode and keeps
 * the translations it cached until a flush takes them.  0 once all wait,
 * or -ETIMEDOUT.
 */
int luf_rd_pause(struct luf_rd *c);
void luf_rd_resume(struct luf_rd *c);
/* From the next pass on, the readers check for the published state */
void luf_rd_publish(struct luf_rd *c);
/*
 * Wait until @ms have passed since the publication and every reader made
 * @passes passes that began after it; false after 60 s.
 */
bool luf_rd_hold(struct luf_rd *c, unsigned int ms, uint64_t passes);
/* Sum over the readers: words checked (LUF_RD_OK) or words of @kind */
uint64_t luf_rd_count(const struct luf_rd *c, enum luf_rd_kind kind);
/* ->active_time: seconds the readers' loops ran, summed over the readers */
double luf_rd_active_s(const struct luf_rd *c);
/* Grow the stack and fault it in, so deep calls later need no new page */
void luf_prefault_stack(size_t bytes);

/*
 * Readers for the workloads: @n readers, reader i pinned to @cpus[i], each
 * reading one word of every page of the first @npages pages at @base per
 * pass (a different word each pass) and checking it against
 * luf_pattern(), sleeping @pause_us after each pass (0: never).  Pages
 * read: luf_rd_count(r, LUF_RD_OK); bad words: LUF_RD_CORRUPT.
 */
int luf_readers_start(struct luf_rd *r, const char *base, size_t npages,
		      const int *cpus, int n, unsigned int pause_us);
#define luf_readers_stop luf_rd_stop

/* ---- migration, the workload driver ---------------------------------- */

/* move_pages(2) of this process with MPOL_MF_MOVE_ALL; @nodes NULL: query */
long luf_move_pages(unsigned long count, void **pages, const int *nodes,
		    int *status);
/*
 * move_pages(2) of the @npages pages at @map to @node, at most @chunk
 * pages a call (0: all in one); @node < 0 only queries.  The node of each
 * page (or -errno) goes to @status if not NULL.  Returns how many pages
 * are not on @node (0 for a query), or -errno if a call failed.
 */
int luf_move_to_node(const void *map, size_t npages, int node, size_t chunk,
		     int *status);

/*
 * luf_workload (luf_workload.c, beside the test programs), the workload
 * driver, run as a child: luf_wl_start() with its arguments, the workload
 * first, then luf_wl_wait(); luf_wl_stop() ends a run early (after its
 * current round).  What it prints (key=value lines, and any message) is
 * collected in ->out.
 */
struct luf_wl {
	pid_t pid;
	int fd;
	size_t len;
	char out[4096];
};

int luf_wl_start(struct luf_wl *w, const char *const *args);
void luf_wl_stop(const struct luf_wl *w);
/*
 * Collect the output and the exit: its status (4: KSFT_SKIP), or -errno.
 * @timeout_s (0: none): SIGKILL it if it is still running after that long.
 */
int luf_wl_wait(struct luf_wl *w, unsigned int timeout_s);
/* The integer value of @key in the output; -1 if absent */
int64_t luf_wl_get(const struct luf_wl *w, const char *key);
/* The output on stderr: "# <prefix>" and a message, or all key=value pairs */
void luf_wl_log(const char *prefix, const struct luf_wl *w);

/*
 * Diagnostics go to stderr, unbuffered: a test runs in a process that
 * ends with _exit(), which would drop what stdout still buffers.
 */
#define note(fmt, ...) fprintf(stderr, "# " fmt, ##__VA_ARGS__)

size_t luf_page_size(void);
double luf_now(void);
void luf_msleep(unsigned int ms);

#endif /* LIBLUF_H */
