// SPDX-License-Identifier: GPL-2.0
/*
 * libluf: the workload drivers (see libluf.h): MADV_PAGEOUT and memcg
 * reclaim, move_pages(2) migration and memcg demotion of a test file that
 * pinned readers (libluf_rd.c) keep reading.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "libluf.h"

#define LUF_MPOL_MF_MOVE_ALL (1 << 2)

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

const char *luf_wl_idle(enum luf_wl kind, const struct luf_run_res *r)
{
	switch (kind) {
	case LUF_WL_PAGEOUT:
		return r->pages_evicted ? NULL : "MADV_PAGEOUT evicted nothing";
	case LUF_WL_MEMCG:
		return r->memcg_pgsteal ? NULL : "the memcg reclaimed nothing (memcg pgsteal is 0)";
	case LUF_WL_MIGRATE:
		return r->pages_migrated ? NULL : "move_pages moved nothing";
	case LUF_WL_DEMOTE:
		return r->sys.pgdemote ? NULL :
		       "memory.reclaim demoted nothing (pgdemote_* unchanged)";
	}
	return "unknown workload";
}

static const int min_rounds[] = {
	[LUF_WL_PAGEOUT] = 4,
	[LUF_WL_MEMCG] = 1,
	[LUF_WL_MIGRATE] = 6,
	[LUF_WL_DEMOTE] = 3,
};

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
	o->min_rounds = min_rounds[kind];
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

long luf_move_pages(unsigned long count, void **pages, const int *nodes,
		    int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status,
		       LUF_MPOL_MF_MOVE_ALL);
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
static int wl_memcg_size(struct wl_state *s, const struct luf_run_opts *o,
			 struct luf_run_res *r)
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
	if (o->initiator_cpu >= 0) {
		ret = pin_to_cpu(o->initiator_cpu);
		if (ret)
			WL_FAIL(ret, "cannot pin to CPU %d: %s", o->initiator_cpu,
				strerror(-ret));
	}

	if (kind == LUF_WL_DEMOTE) {
		if (read_file(LUF_DEMOTION_KNOB, s.demotion_saved,
			      sizeof(s.demotion_saved)) <= 0)
			WL_FAIL(-EIO, "cannot read %s", LUF_DEMOTION_KNOB);
		s.demotion_saved[strcspn(s.demotion_saved, "\n")] = '\0';
		ret = write_file_str(LUF_DEMOTION_KNOB, "1");
		if (ret)
			WL_FAIL(ret, "cannot enable demotion: %s", strerror(-ret));
		s.demotion_changed = true;
	}
	if (kind == LUF_WL_MEMCG || kind == LUF_WL_DEMOTE) {
		char name[64];

		if (o->memcg)
			snprintf(name, sizeof(name), "%s", o->memcg);
		else
			snprintf(name, sizeof(name), "luf-%s-%d", luf_wl_name(kind), getpid());
		ret = memcg_create(name, s.cg, sizeof(s.cg));
		if (ret) {
			s.cg[0] = '\0';
			WL_FAIL(ret, "cannot create memcg %s: %s", name, strerror(-ret));
		}
		if (kind == LUF_WL_MEMCG) {
			snprintf(buf, sizeof(buf), "%" PRIu64, o->memcg_max);
			ret = memcg_write(s.cg, "memory.max", buf);
			if (ret)
				WL_FAIL(ret, "memory.max=%s: %s", buf, strerror(-ret));
		}
	}

	ret = luf_file_create(&s.f, o->dir, o->tag ? o->tag : luf_wl_name(kind),
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
	if ((kind == LUF_WL_MIGRATE || kind == LUF_WL_PAGEOUT) && o->anon_size) {
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
	ret = luf_readers_start(&s.rd, s.f.map, hot, o->reader_cpus,
				o->nr_readers, o->reader_pause_us);
	if (ret)
		WL_FAIL(ret, "cannot start readers: %s", strerror(-ret));
	if (kind == LUF_WL_MEMCG) {
		ret = wl_memcg_size(&s, o, r);
		if (ret)
			WL_FAIL(ret, "cannot size %s: %s", s.cg, strerror(-ret));
	}

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
	luf_sys_read(&after);
	luf_sys_delta(&after, &before, &r->sys);
	if (s.cg[0])
		memcg_stat(s.cg, "pgsteal", &r->memcg_pgsteal);
out:
	wl_cleanup(&s);
	/* what the readers did until they stopped (nothing, never started) */
	r->pages_read = luf_rd_count(&s.rd, LUF_RD_OK);
	r->readers_active = luf_rd_active_s(&s.rd);
	r->bad_words += luf_rd_count(&s.rd, LUF_RD_CORRUPT);
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
		" memcg_pgsteal=%" PRIu64 " memcg_other_kb=%" PRIu64 "\n",
		prefix, r->reclaim_writes, r->reclaim_eagain, r->memcg_pgsteal,
		r->memcg_other >> 10);
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
