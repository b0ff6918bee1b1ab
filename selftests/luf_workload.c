// SPDX-License-Identifier: GPL-2.0
/*
 * luf_workload: the workload driver of the tests, the demo and the
 * benchmarks.  Pinned readers keep reading a test file (and anonymous
 * memory after it) while the initiator unmaps it, round after round:
 *
 *   luf_workload reclaim	MADV_PAGEOUT rounds
 *   luf_workload migrate	move_pages(2) node 0 <-> 1
 *   luf_workload memcg		memory.max below the working set
 *   luf_workload demote	memory.reclaim with demotion to node 1
 *
 * How long: --seconds N (at least N seconds and one round), --rounds R
 * (exactly R rounds: the same work in every run), or neither: the
 * defaults (3 s and a few rounds).  SIGTERM or SIGINT ends the run after
 * the current round, which still reports (--max-seconds S: at most S).
 * Options: --readers K (on CPUs 1..K) or --reader-cpus A,B,..., --cpu C
 * (the initiator's, default 0), --size-mb M (file size), --dir D (where
 * the file lives), --hot-pages H (readers spin over the first H pages
 * only; 0 = all), --chunk P (migrate: at most P pages per move_pages(2)
 * call; 0 = all), --anon-mb A (migrate, reclaim: also A MiB of read-only
 * anonymous memory, which the readers read and move_pages(2) moves or
 * MADV_PAGEOUT swaps out too; needs swap on), --anon-mthp (that memory
 * 64 KiB-aligned and THP-eligible, so that a 64 KiB mTHP setting makes it
 * of 64 KiB folios), --round-pause-ms, --reader-pause-us (sleep after
 * each round, each reader pass).
 *
 * Output, one key=value per line:
 *   workload, seconds, readers, rounds, pages_read (reader progress),
 *   readers_active_s (seconds the readers' loops ran, summed: without the
 *   gaps in which their CPUs ran something else, e.g. other vCPUs under
 *   single-threaded TCG),
 *   bad_words (must be 0), idle (1: the run unmapped nothing), and
 *   reclaim: pageouts (pages MADV_PAGEOUT took: PFN gone or replaced),
 *            pageout_calls
 *   migrate: pages_migrated, migrate_calls, migrate_failed
 *   memcg:   pgsteal (memcg memory.stat), memcg_other_kb
 *   demote:  pgdemote, reclaim_writes, reclaim_eagain
 *   always:  nr_tlb_remote_flush, nr_tlb_remote_flush_received, tlb_irqs
 *            (deltas over the run; -1 if the kernel does not count them),
 *            vmstat_pgsteal, vmstat_pgmigrate_success (/proc/vmstat deltas)
 * Exit status: 0, 1 when the run failed or a reader saw a wrong word, 2
 * for bad usage, 4 (KSFT_SKIP) when this machine lacks what the workload
 * needs (the reason on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "libluf.h"

struct wl_sys {
	uint64_t tlb_remote_flush;	/* nr_tlb_remote_flush */
	uint64_t tlb_remote_received;	/* nr_tlb_remote_flush_received */
	uint64_t tlb_irqs;		/* sum of the TLB row */
	uint64_t pgsteal;		/* pgsteal_anon + pgsteal_file */
	uint64_t pgmigrate_success;
	uint64_t pgdemote;		/* pgdemote_{kswapd,direct,khugepaged} */
	bool has_tlb_vmstat;		/* nr_tlb_* present (DEBUG_TLBFLUSH) */
};

enum wl {
	WL_PAGEOUT,		/* MADV_PAGEOUT over an ext4 file mapping */
	WL_MEMCG,		/* memcg memory.max below the working set */
	WL_MIGRATE,		/* move_pages between node_a and node_b */
	WL_DEMOTE,		/* memory.reclaim with demotion enabled */
};

struct wl_opts {
	const char *dir;		/* directory holding the test file */
	size_t size;			/* bytes */
	int initiator_cpu;		/* -1: leave the caller's affinity */
	int nr_readers;
	int reader_cpus[LUF_MAX_READERS];
	size_t hot_pages;		/* readers spin over these (0: all) */
	double seconds;			/* run at least this long ... */
	int min_rounds;			/* ... and at least this many rounds */
	int max_rounds;			/* 0: no limit */
	double max_seconds;		/* 0: no limit (stops early) */
	unsigned int round_pause_ms;	/* initiator sleeps between rounds */
	unsigned int reader_pause_us;	/* readers sleep after each pass */
	/* MEMCG: the file's share; memory.max adds the rest (wl_memcg_size()) */
	uint64_t memcg_max;
	uint64_t reclaim_bytes;		/* per memory.reclaim write (DEMOTE) */
	int node_a, node_b;		/* MIGRATE: start on a, move to b, back */
	size_t migrate_chunk;		/* MIGRATE: pages per move_pages(2), 0: all */
	/* MIGRATE, PAGEOUT: bytes of read-only anonymous memory after the file (needs swap) */
	size_t anon_size;
	/* that memory 64 KiB-aligned and without MADV_NOHUGEPAGE (mTHP) */
	bool anon_mthp;
};

struct wl_res {
	uint64_t rounds;
	uint64_t pages_read;		/* reader progress */
	uint64_t bad_words;		/* words that did not match the pattern */
	uint64_t pageout_calls;
	/* mapped before MADV_PAGEOUT, gone or replaced (new PFN: refaulted) after */
	uint64_t pages_evicted;
	uint64_t migrate_calls;
	uint64_t pages_migrated;	/* pages that changed node as requested */
	uint64_t migrate_failed;	/* pages still misplaced after retries */
	uint64_t reclaim_writes;	/* memory.reclaim writes */
	uint64_t reclaim_eagain;
	uint64_t memcg_pgsteal;		/* memcg memory.stat pgsteal */
	uint64_t memcg_other;		/* MEMCG: memory.max - memcg_max, bytes */
	double elapsed;
	double readers_active;		/* seconds the readers ran, summed */
	struct wl_sys sys;		/* delta over the run */
	char err[512];
};



static volatile sig_atomic_t stop;

/* Sum of the TLB row of /proc/interrupts; -ENOENT if absent. */
static int tlb_irqs_read(uint64_t *val)
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

/* Line @key of @cg/memory.stat */
static int memcg_stat(const char *cg, const char *key, uint64_t *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	return read_key(path, key, val, " ");
}

static void sys_read(struct wl_sys *s)
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
	if (tlb_irqs_read(&s->tlb_irqs))
		s->tlb_irqs = 0;
}

static void sys_delta(const struct wl_sys *a, const struct wl_sys *b,
		   struct wl_sys *d)
{
	d->tlb_remote_flush = a->tlb_remote_flush - b->tlb_remote_flush;
	d->tlb_remote_received = a->tlb_remote_received - b->tlb_remote_received;
	d->tlb_irqs = a->tlb_irqs - b->tlb_irqs;
	d->pgsteal = a->pgsteal - b->pgsteal;
	d->pgmigrate_success = a->pgmigrate_success - b->pgmigrate_success;
	d->pgdemote = a->pgdemote - b->pgdemote;
	d->has_tlb_vmstat = a->has_tlb_vmstat && b->has_tlb_vmstat;
}

/* the command-line names, also the memcg's and the test file's */
static const char *const wl_names[] = {
	[WL_PAGEOUT] = "reclaim", [WL_MIGRATE] = "migrate",
	[WL_MEMCG] = "memcg", [WL_DEMOTE] = "demote",
};

static const char *wl_idle(enum wl kind, const struct wl_res *r)
{
	switch (kind) {
	case WL_PAGEOUT:
		return r->pages_evicted ? NULL : "MADV_PAGEOUT evicted nothing";
	case WL_MEMCG:
		return r->memcg_pgsteal ? NULL : "the memcg reclaimed nothing (memcg pgsteal is 0)";
	case WL_MIGRATE:
		return r->pages_migrated ? NULL : "move_pages moved nothing";
	case WL_DEMOTE:
		return r->sys.pgdemote ? NULL :
		       "memory.reclaim demoted nothing (pgdemote_* unchanged)";
	}
	return "unknown workload";
}

static const int min_rounds[] = {
	[WL_PAGEOUT] = 4,
	[WL_MEMCG] = 1,
	[WL_MIGRATE] = 6,
	[WL_DEMOTE] = 3,
};

static void opts_default(struct wl_opts *o, enum wl kind)
{
	int ncpu = nr_cpus(), i;

	memset(o, 0, sizeof(*o));
	o->dir = kind == WL_MIGRATE ? LUF_TMP_DIR : LUF_EXT4_DIR;
	o->size = (kind == WL_PAGEOUT || kind == WL_DEMOTE ? 16 : 8) << 20;
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
	o->hot_pages = kind == WL_DEMOTE || kind == WL_MIGRATE ? 64 : 0;
	o->seconds = 3;
	o->min_rounds = min_rounds[kind];
	o->memcg_max = o->size / 2;
	o->reclaim_bytes = o->size / 2;
	o->node_a = 0;
	o->node_b = 1;
}

struct wl_state {
	struct luf_file f;
	char *anon;			/* anon_size bytes at f.map + f.size */
	size_t anon_size;
	size_t npages;			/* file and anonymous pages */
	struct luf_rd rd;
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
		s->pages[i] = (void *)(s->f.map + i * luf_page_size());
	if (luf_move_pages(n, s->pages, NULL, s->status))
		return -errno;
	todo = 0;
	for (i = 0; i < n; i++)
		if (s->status[i] != node)
			s->pages[todo++] = (void *)(s->f.map + i * luf_page_size());
	if (!chunk)
		chunk = n;
	for (attempt = 0; todo && attempt < LUF_TRIES; attempt++) {
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
 * read back, which maps each page read-only and clean.  With @mthp it
 * starts 64 KiB-aligned and keeps its THP eligibility, so that a 64 KiB
 * mTHP setting builds it of 64 KiB folios (the swap-in of a synchronous
 * device allocates them again).
 */
static int wl_anon_setup(struct wl_state *s, size_t size, bool mthp)
{
	size_t ps = luf_page_size(), al = mthp ? 64 << 10 : ps, i;
	size_t res = s->f.size + size + al;
	uint64_t *w;
	char line[256];
	int n = 0;
	char *p, *r;
	FILE *f;

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
	r = mmap(NULL, res, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return -errno;
	p = (char *)(((uintptr_t)r + al - 1) & ~(uintptr_t)(al - 1));
	if (p > r)
		munmap(r, p - r);
	if (r + res > p + s->f.size + size)
		munmap(p + s->f.size + size, r + res - (p + s->f.size + size));
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
	if (!mthp)
		madvise(p, size, MADV_NOHUGEPAGE);
	for (w = (uint64_t *)p, i = 0; i < size / 8; i++)
		w[i] = luf_pattern(s->f.size + i * 8);
	if (mprotect(p, size, PROT_READ) || madvise(p, size, MADV_PAGEOUT))
		return -errno;
	for (i = 0; i < size; i += ps)
		(void)*(volatile char *)(p + i);
	return 0;
}

static bool wl_done(const struct wl_opts *o, const struct wl_res *r,
		    double t0)
{
	double el = luf_now() - t0;

	if (stop)
		return true;
	if (o->max_rounds && r->rounds >= (uint64_t)o->max_rounds)
		return true;
	if (o->max_seconds > 0 && el >= o->max_seconds)
		return true;
	return el >= o->seconds && r->rounds >= (uint64_t)o->min_rounds;
}

static void wl_cleanup(struct wl_state *s)
{
	luf_readers_stop(&s->rd);
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

static const char *wl_missing(enum wl kind, const struct wl_opts *o,
			      char *why, size_t len)
{
	char d[160];

	if (!o->dir || !path_exists(o->dir))
		snprintf(why, len, "directory %s does not exist",
			 o->dir ? o->dir : "(null)");
	else if (kind == WL_MIGRATE && (!numa_node_has_memory(o->node_a) ||
					    !numa_node_has_memory(o->node_b)))
		snprintf(why, len, "NUMA node %d or %d has no memory",
			 o->node_a, o->node_b);
	else if (kind == WL_DEMOTE && !numa_demotion_possible(d, sizeof(d)))
		snprintf(why, len, "no demotion: %s", d);
	else if ((kind == WL_MEMCG || kind == WL_DEMOTE) && !memcg_available())
		snprintf(why, len, "no memory controller under %s", LUF_CGROUP_ROOT);
	else
		return NULL;
	return why;
}

/*
 * memory.max of the memcg workload, once the readers run: the file's share
 * (memcg_max) plus what the memcg holds besides the file.  The readers'
 * stacks, malloc arenas and page tables and each CPU's charge stock grow
 * with the readers and cannot be reclaimed (no swap); with a fixed
 * memory.max they took 2.5-3.0 of 4 MiB at 15 readers, so the file's share
 * shrank with the vCPU count and 16 direct reclaimers could isolate all
 * of it at once and OOM the memcg.  The limit is raised after the fact:
 * until then the 4 MiB are a tighter limit, never a looser one.
 */
static int wl_memcg_size(struct wl_state *s, const struct wl_opts *o,
			 struct wl_res *r)
{
	uint64_t cur, file;
	char buf[32];
	int err;

	err = memcg_u64(s->cg, "memory.current", &cur);
	if (!err)
		err = memcg_stat(s->cg, "file", &file);
	if (err)
		return err;
	r->memcg_other = cur > file ? cur - file : 0;
	snprintf(buf, sizeof(buf), "%" PRIu64, o->memcg_max + r->memcg_other);
	return memcg_write(s->cg, "memory.max", buf);
}

static int wl_run(enum wl kind, const struct wl_opts *o,
	    struct wl_res *r)
{
	struct wl_sys before, after;
	struct wl_state s;
	size_t npages, i, hot;
	char buf[64];
	double t0;
	int ret = 0;
	long moved;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	s.f.fd = -1;

	if (wl_missing(kind, o, r->err, sizeof(r->err))) {
		ret = -ENODEV;
		goto out;
	}
	if (!sched_getaffinity(0, sizeof(s.saved_affinity), &s.saved_affinity))
		s.affinity_saved = true;
	if (o->initiator_cpu >= 0) {
		ret = pin_to_cpu(o->initiator_cpu);
		if (ret)
			WL_FAIL(ret, "cannot pin to CPU %d: %s", o->initiator_cpu,
				strerror(-ret));
	}

	if (kind == WL_DEMOTE) {
		if (read_file(LUF_DEMOTION_KNOB, s.demotion_saved,
			      sizeof(s.demotion_saved)) <= 0)
			WL_FAIL(-EIO, "cannot read %s", LUF_DEMOTION_KNOB);
		s.demotion_saved[strcspn(s.demotion_saved, "\n")] = '\0';
		ret = write_file_str(LUF_DEMOTION_KNOB, "1");
		if (ret)
			WL_FAIL(ret, "cannot enable demotion: %s", strerror(-ret));
		s.demotion_changed = true;
	}
	if (kind == WL_MEMCG || kind == WL_DEMOTE) {
		char name[64];

		snprintf(name, sizeof(name), "luf-%s-%d", wl_names[kind], getpid());
		ret = memcg_create(name, s.cg, sizeof(s.cg));
		if (ret) {
			s.cg[0] = '\0';
			WL_FAIL(ret, "cannot create memcg %s: %s", name, strerror(-ret));
		}
		if (kind == WL_MEMCG) {
			snprintf(buf, sizeof(buf), "%" PRIu64, o->memcg_max);
			ret = memcg_write(s.cg, "memory.max", buf);
			if (ret)
				WL_FAIL(ret, "memory.max=%s: %s", buf, strerror(-ret));
		}
	}

	ret = luf_file_create(&s.f, o->dir, wl_names[kind],
			      o->size);
	if (ret)
		WL_FAIL(ret, "cannot create a %zu byte file in %s: %s", o->size,
			o->dir, strerror(-ret));
	npages = s.npages = s.f.npages;
	if (s.cg[0]) {
		/* the pages must be charged to the memcg: fault them in there */
		ret = luf_file_evict(&s.f);
		if (ret)
			WL_FAIL(ret, "cannot drop the page cache of %s: %s", s.f.path,
				strerror(-ret));
		ret = memcg_enter(s.cg);
		if (ret)
			WL_FAIL(ret, "cannot enter %s: %s", s.cg, strerror(-ret));
	}
	ret = luf_file_map(&s.f);
	if (ret)
		WL_FAIL(ret, "cannot map %s: %s", s.f.path, strerror(-ret));
	if ((kind == WL_MIGRATE || kind == WL_PAGEOUT) && o->anon_size) {
		ret = wl_anon_setup(&s, o->anon_size, o->anon_mthp);
		if (ret)
			WL_FAIL(ret, "anonymous memory after the file: %s",
				ret == -ENODEV ? "needs swap on" : strerror(-ret));
		npages = s.npages = npages + o->anon_size / luf_page_size();
	}
	s.pfn1 = calloc(npages, sizeof(*s.pfn1));
	s.pfn2 = calloc(npages, sizeof(*s.pfn2));
	s.pages = calloc(npages, sizeof(*s.pages));
	s.nodes = calloc(npages, sizeof(*s.nodes));
	s.status = calloc(npages, sizeof(*s.status));
	if (!s.pfn1 || !s.pfn2 || !s.pages || !s.nodes || !s.status)
		WL_FAIL(-ENOMEM, "out of memory");

	if (kind != WL_MEMCG)
		r->bad_words += luf_file_touch(&s.f);
	if (kind == WL_MIGRATE) {
		uint64_t dummy_failed = 0, dummy_calls = 0;

		/* start from node_a; not counted */
		moved = migrate_all(&s, o->node_a, 0, &dummy_failed, &dummy_calls);
		if (moved < 0)
			WL_FAIL((int)moved, "move_pages: %s", strerror((int)-moved));
	}

	sys_read(&before);
	hot = o->hot_pages && o->hot_pages < npages ? o->hot_pages : npages;
	ret = luf_readers_start(&s.rd, s.f.map, hot, o->reader_cpus,
				o->nr_readers, o->reader_pause_us);
	if (ret)
		WL_FAIL(ret, "cannot start readers: %s", strerror(-ret));
	if (kind == WL_MEMCG) {
		ret = wl_memcg_size(&s, o, r);
		if (ret)
			WL_FAIL(ret, "cannot size %s: %s", s.cg, strerror(-ret));
	}

	t0 = luf_now();
	while (!wl_done(o, r, t0)) {
		int err;

		switch (kind) {
		case WL_PAGEOUT:
			/*
			 * The readers refault what MADV_PAGEOUT takes at
			 * once, so residency says little: a page is paged
			 * out if its PFN is gone or different afterwards.
			 */
			r->bad_words += luf_file_touch(&s.f);
			/* the anonymous memory, if any, right after the file */
			err = luf_pagemap_pfns(s.f.map, npages, s.pfn1);
			if (err)
				WL_FAIL(err, "pagemap: %s", strerror(-err));
			if (madvise((void *)s.f.map, s.f.size + s.anon_size, MADV_PAGEOUT))
				WL_FAIL(-errno, "MADV_PAGEOUT: %s", strerror(errno));
			err = luf_pagemap_pfns(s.f.map, npages, s.pfn2);
			if (err)
				WL_FAIL(err, "pagemap: %s", strerror(-err));
			for (i = 0; i < npages; i++)
				if (s.pfn1[i] && s.pfn2[i] != s.pfn1[i])
					r->pages_evicted++;
			r->pageout_calls++;
			break;
		case WL_MEMCG:
			r->bad_words += luf_file_touch(&s.f);
			break;
		case WL_MIGRATE:
			moved = migrate_all(&s, r->rounds % 2 ? o->node_a : o->node_b,
					    o->migrate_chunk, &r->migrate_failed,
					    &r->migrate_calls);
			if (moved < 0)
				WL_FAIL((int)moved, "move_pages: %s", strerror((int)-moved));
			r->pages_migrated += moved;
			break;
		case WL_DEMOTE:
			r->bad_words += luf_file_touch(&s.f);
			snprintf(buf, sizeof(buf), "%" PRIu64, o->reclaim_bytes);
			err = memcg_write(s.cg, "memory.reclaim", buf);
			r->reclaim_writes++;
			if (err == -EAGAIN)
				r->reclaim_eagain++;
			else if (err == -EINTR && stop)
				break;	/* the stop signal interrupted it */
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
	sys_read(&after);
	sys_delta(&after, &before, &r->sys);
	if (s.cg[0])
		memcg_stat(s.cg, "pgsteal", &r->memcg_pgsteal);
out:
	wl_cleanup(&s);
	/* what the readers did until they stopped (nothing, never started) */
	r->pages_read = luf_rd_count(&s.rd, LUF_RD_OK);
	for (i = 0; i < LUF_MAX_READERS; i++)
		r->readers_active += s.rd.st[i].active_ns / 1e9;
	r->bad_words += luf_rd_count(&s.rd, LUF_RD_CORRUPT);
	return ret;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s reclaim|migrate|memcg|demote [--seconds N|--rounds R]\n"
		"          [--max-seconds S] [--readers K|--reader-cpus A,B,...] [--cpu C]\n"
		"          [--size-mb M] [--dir D] [--hot-pages H] [--chunk P] [--anon-mb A]\n"
		"          [--anon-mthp] [--round-pause-ms T] [--reader-pause-us T]\n", argv0);
	exit(2);
}

static unsigned long parse_num(const char *argv0, const char *opt, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "%s: bad value '%s' for %s\n", argv0, s, opt);
		exit(2);
	}
	return v;
}

/* --reader-cpus A,B,...: the readers' CPUs */
static void parse_cpus(const char *argv0, char *list, struct wl_opts *o)
{
	char *save = NULL, *t;

	o->nr_readers = 0;
	for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->nr_readers == LUF_MAX_READERS) {
			fprintf(stderr, "%s: at most %d readers\n", argv0, LUF_MAX_READERS);
			exit(2);
		}
		o->reader_cpus[o->nr_readers++] = parse_num(argv0, "--reader-cpus", t);
	}
}

static void print_result(const char *name, enum wl kind, const struct wl_opts *o,
			 const struct wl_res *r)
{
	printf("workload=%s\n", name);
	printf("seconds=%.2f\n", r->elapsed);
	printf("readers=%d\n", o->nr_readers);
	printf("rounds=%" PRIu64 "\n", r->rounds);
	printf("pages_read=%" PRIu64 "\n", r->pages_read);
	printf("readers_active_s=%.3f\n", r->readers_active);
	printf("bad_words=%" PRIu64 "\n", r->bad_words);
	printf("idle=%d\n", wl_idle(kind, r) != NULL);
	switch (kind) {
	case WL_PAGEOUT:
		printf("pageouts=%" PRIu64 "\n", r->pages_evicted);
		printf("pageout_calls=%" PRIu64 "\n", r->pageout_calls);
		break;
	case WL_MIGRATE:
		printf("pages_migrated=%" PRIu64 "\n", r->pages_migrated);
		printf("migrate_calls=%" PRIu64 "\n", r->migrate_calls);
		printf("migrate_failed=%" PRIu64 "\n", r->migrate_failed);
		break;
	case WL_MEMCG:
		printf("pgsteal=%" PRIu64 "\n", r->memcg_pgsteal);
		printf("memcg_other_kb=%" PRIu64 "\n", r->memcg_other >> 10);
		break;
	case WL_DEMOTE:
		printf("pgdemote=%" PRIu64 "\n", r->sys.pgdemote);
		printf("reclaim_writes=%" PRIu64 "\n", r->reclaim_writes);
		printf("reclaim_eagain=%" PRIu64 "\n", r->reclaim_eagain);
		break;
	}
	if (r->sys.has_tlb_vmstat) {
		printf("nr_tlb_remote_flush=%" PRIu64 "\n", r->sys.tlb_remote_flush);
		printf("nr_tlb_remote_flush_received=%" PRIu64 "\n",
		       r->sys.tlb_remote_received);
	} else {
		printf("nr_tlb_remote_flush=-1\n");
		printf("nr_tlb_remote_flush_received=-1\n");
	}
	printf("tlb_irqs=%" PRIu64 "\n", r->sys.tlb_irqs);
	printf("vmstat_pgsteal=%" PRIu64 "\n", r->sys.pgsteal);
	printf("vmstat_pgmigrate_success=%" PRIu64 "\n", r->sys.pgmigrate_success);
	if (wl_idle(kind, r))
		fprintf(stderr, "%s: %s\n", name, wl_idle(kind, r));
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	long seconds = -1, readers = -1, rounds = -1;
	int i, ret, ncpu = nr_cpus();
	char why[200];
	struct wl_opts o;
	struct wl_res r;
	enum wl kind;

	/* a stop from the start on ends the run after setup, with a report */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (argc < 2)
		usage(argv[0]);
	for (kind = 0; kind <= WL_DEMOTE; kind++)
		if (!strcmp(argv[1], wl_names[kind]))
			break;
	if (kind > WL_DEMOTE)
		usage(argv[0]);
	opts_default(&o, kind);

	for (i = 2; i < argc; i++) {
		const char *opt = argv[i];

		if (!strcmp(opt, "--anon-mthp")) {
			o.anon_mthp = true;
			continue;
		}
		if (i + 1 >= argc)
			usage(argv[0]);
		if (!strcmp(opt, "--seconds"))
			seconds = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--max-seconds"))
			o.max_seconds = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--readers"))
			readers = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--reader-cpus"))
			parse_cpus(argv[0], argv[++i], &o);
		else if (!strcmp(opt, "--cpu"))
			o.initiator_cpu = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--size-mb"))
			o.size = parse_num(argv[0], opt, argv[++i]) << 20;
		else if (!strcmp(opt, "--dir"))
			o.dir = argv[++i];
		else if (!strcmp(opt, "--hot-pages"))
			o.hot_pages = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--rounds"))
			rounds = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--chunk"))
			o.migrate_chunk = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--anon-mb"))
			o.anon_size = parse_num(argv[0], opt, argv[++i]) << 20;
		else if (!strcmp(opt, "--round-pause-ms"))
			o.round_pause_ms = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--reader-pause-us"))
			o.reader_pause_us = parse_num(argv[0], opt, argv[++i]);
		else
			usage(argv[0]);
	}
	if ((seconds >= 0 && rounds >= 0) || !rounds)
		usage(argv[0]);
	if (readers >= 0) {
		if (readers > LUF_MAX_READERS || readers > ncpu - 1) {
			fprintf(stderr, "%s: --readers %ld: need 1 + %ld CPUs, have %d (max %d readers)\n",
				argv[0], readers, readers, ncpu, LUF_MAX_READERS);
			return 2;
		}
		o.nr_readers = readers;
		for (i = 0; i < readers; i++)
			o.reader_cpus[i] = i + 1;
	}
	/* the memcg's limit and each memory.reclaim: half the file */
	o.memcg_max = o.size / 2;
	o.reclaim_bytes = o.size / 2;
	/* a fixed amount of work, or at least @seconds of it */
	if (rounds > 0) {
		o.seconds = 0;
		o.min_rounds = rounds;
		o.max_rounds = rounds;
	} else if (seconds >= 0) {
		o.seconds = seconds;
		o.min_rounds = 1;
	}
	if (wl_missing(kind, &o, why, sizeof(why))) {
		fprintf(stderr, "%s: %s\n", argv[0], why);
		return 4;
	}
	ret = wl_run(kind, &o, &r);
	if (ret) {
		fprintf(stderr, "%s: %s\n", argv[0], r.err);
		return 1;
	}
	print_result(wl_names[kind], kind, &o, &r);
	return r.bad_words ? 1 : 0;
}
