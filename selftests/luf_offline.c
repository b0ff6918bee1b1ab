// SPDX-License-Identifier: GPL-2.0
/*
 * luf_offline: pages that luf.ko holds back do not keep a memory block from
 * going offline (invariant I1: offlining).
 *
 * A held page has refcount 0 and sits on neither a pcp list nor the buddy
 * free lists: offline_pages() never finds it free (test_pages_isolated())
 * nor movable (scan_movable_pages()), and retries until a signal.  A held
 * large block is worse: it is still a compound page, which
 * has_unmovable_pages() would take for an unmovable one, failing the
 * isolation itself with -EBUSY; it asks the page_held hook first.  The
 * core calls the pages_wanted hook when start_isolate_page_range()
 * (offlining, alloc_contig_range()) has isolated the range; the module
 * flushes and gives back every page it holds there (released_isolate).
 *
 * First, with luf.ko not loaded, every memory block of node 1 (the CPU-less
 * memory node) is offlined and put online again: a block that fails then
 * (-EBUSY: memblock allocations, the node's memmap; -EINVAL: a hole) fails
 * for reasons of its own and is never used.  Then, in each attempt, from a
 * fresh load with max_defer_ms=60000 (the timer releases nothing while the
 * attempt runs), and from CPU 0:
 *
 *  - ballast: anonymous memory bound to node 1 is faulted in until it comes
 *    from offlinable blocks (order-0 allocations take the smallest free
 *    buddy blocks first, then the oldest large ones, and the blocks the
 *    check put online again went to the tail);
 *  - a 16 MiB ext4 file is read in and mapped read-only, and its page cache
 *    moved to node 1 with move_pages(2) while nothing defers; three reader
 *    threads pinned on CPUs 1-3 keep the mm live there (x86 batches, and so
 *    LUF defers, an unmap only while the mm is live on another CPU);
 *  - the unmap of the variant, which must defer and hold something:
 *
 *  offline.pageout.held_block_offlines
 *	enabled=1, MADV_PAGEOUT of the mapping: the reclaimed page cache (on
 *	node 1) is held.
 *  offline.migrate.held_block_offlines
 *	migrc_enabled=1, move_pages(2) of the mapping to node 0: the sources
 *	(on node 1) are held.
 *  offline.pageout_xfs_large.held_block_offlines
 *  offline.migrate_xfs_large.held_block_offlines
 *	the same with the file on XFS, written 64 KiB per write(2) before
 *	each attempt: 64 KiB folios are deferred (more pages deferred than
 *	folios) and held as order-4 blocks.
 *
 * The PFNs of the file's pages before and after the unmap come from
 * /proc/self/pagemap (root).  A page whose PFN left the mapping was freed,
 * and held_pages_total counts the frees that were held, so a memory block
 * holds at least (pages of the file freed from it) - (pages freed but not
 * held) held pages.  The offlinable block with the largest such bound is
 * offlined by writing "offline" to /sys/devices/system/memory/memoryN/state
 * from a child process; if that does not finish within OFFLINE_DEADLINE
 * seconds the child is killed (offline_pages() gives up on a signal) and
 * the test fails.  It passes if the block went offline, released_isolate
 * grew by at least that bound and held_pages fell by as much; the block is
 * put online again.  Should the block fail at once anyway (-EBUSY: an
 * unmovable page that arrived since the check), the next attempt uses the
 * best remaining block; the test fails if none goes offline.
 *
 * Broken mode: with LUF_BREAK=4 the module is loaded with allow_unsafe=1
 * and debug_break=4, so isolation does not give held pages back; then the
 * offline must hang and be killed at the deadline, or, with held large
 * blocks, fail at once with -EBUSY and succeed as soon as turning LUF off
 * has given the held pages back; the test passes only if it did (the
 * suite proves the test can fail).
 *
 * arm64 never offlines boot memory (prevent_bootmem_remove_notifier() in
 * arch/arm64/mm/mmu.c), and the guest's node 1 is boot memory: skipped
 * there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "luf_test.h"

#define MPOL_BIND_	2

#define HELD_NODE	1		/* the CPU-less memory node */
#define OTHER_NODE	0
#define FILE_SIZE	(16UL << 20)
#define HOT_PAGES	16		/* the readers spin over these */
#define NREADERS	3
/*
 * Below max_defer_ms (60 s at most), so that the timer cannot give the
 * held pages back while offline_pages() waits for them.
 */
#define OFFLINE_DEADLINE 30
#define MAX_BLOCKS	64		/* memory blocks of node 1 */
#define BALLAST_MAX	(640UL << 20)
#define BALLAST_CHUNK	(4UL << 20)
#define MADV_POPULATE_WRITE_ 23
#define MEM_DIR		"/sys/devices/system/memory"
#define NODE_DIR	"/sys/devices/system/node/node" STR(HELD_NODE)
#define STR_(x)		#x
#define STR(x)		STR_(x)


/* ---- memory blocks ---------------------------------------------------- */

struct block {
	int id;			/* memoryN */
	uint64_t freed;		/* pages of the file freed from it */
	int64_t held_min;	/* lower bound of the pages held in it */
	int err;		/* offlining it failed with -err */
	bool offlinable;	/* went offline with nothing held */
	bool tried;
};

/* block_size_bytes: hexadecimal without 0x */
static int block_size(uint64_t *bytes)
{
	char buf[32], *end;

	if (read_file(MEM_DIR "/block_size_bytes", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	*bytes = strtoull(buf, &end, 16);
	return *bytes && end != buf ? 0 : -EINVAL;
}

/* The memory blocks of node HELD_NODE, sorted; count or -errno */
static int node_blocks(struct block *b, int max)
{
	struct dirent *de;
	int n = 0, i, j, id;
	DIR *d;

	d = opendir(NODE_DIR);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		if (sscanf(de->d_name, "memory%d", &id) != 1)
			continue;
		memset(&b[n], 0, sizeof(b[n]));
		b[n++].id = id;
	}
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && b[j - 1].id > b[j].id; j--) {
			struct block t = b[j];

			b[j] = b[j - 1];
			b[j - 1] = t;
		}
	return n;
}

static void state_path(int id, char *buf, size_t len)
{
	snprintf(buf, len, MEM_DIR "/memory%d/state", id);
}

static bool block_online(int id)
{
	char path[96], buf[32];

	state_path(id, path, sizeof(path));
	return read_file(path, buf, sizeof(buf)) > 0 &&
	       !strncmp(buf, "online", 6);
}

/*
 * Write @state to memoryN/state from a child; kill it after @deadline
 * seconds.  0, -errno of the write, or -ETIMEDOUT (killed).
 */
static int block_set_state(int id, const char *state, int deadline,
			   double *took)
{
	double t0 = luf_now();
	char path[96];
	int st = 0;
	pid_t pid;

	state_path(id, path, sizeof(path));
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int err = write_file_str(path, state);

		_exit(err ? -err & 0xff : 0);
	}
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0)
			return -errno;
		if (luf_now() - t0 > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			*took = luf_now() - t0;
			return -ETIMEDOUT;
		}
		luf_msleep(50);
	}
	*took = luf_now() - t0;
	if (!WIFEXITED(st))
		return -EINTR;
	return -WEXITSTATUS(st);
}

/*
 * Offline every memory block of node 1 and put it online again, with
 * nothing held (luf.ko not loaded): the blocks that fail here cannot go
 * offline for reasons of their own (memblock allocations, the node's
 * memmap, holes).  0 or -errno.
 */
static int precheck(struct block *b, int nb)
{
	double took;
	int k, ret;

	for (k = 0; k < nb; k++) {
		b[k].offlinable = false;
		if (!block_online(b[k].id)) {
			b[k].err = EALREADY;
			continue;
		}
		ret = block_set_state(b[k].id, "offline", OFFLINE_DEADLINE, &took);
		b[k].err = -ret;
		if (ret)
			continue;
		ret = block_set_state(b[k].id, "online", 60, &took);
		if (ret)
			return ret;
		b[k].offlinable = true;
	}
	return 0;
}

static struct block *block_of(struct block *b, int nb, uint64_t pfn,
			      uint64_t bsize)
{
	uint64_t id = pfn * ps / bsize;
	int k;

	for (k = 0; k < nb; k++)
		if ((uint64_t)b[k].id == id)
			return &b[k];
	return NULL;
}

/* move_pages(2) of the whole mapping to @node (-1: query); pages on it */
static int move_all(const char *map, size_t n, int node, int *status,
		    size_t *on_node)
{
	int err = luf_move_to_node(map, n, node, 0, status);
	size_t i;

	*on_node = 0;
	for (i = 0; i < n; i++)
		if (status[i] == (node < 0 ? HELD_NODE : node))
			(*on_node)++;
	/* a page that did not move is counted, not an error */
	return err < 0 ? err : 0;
}

FIXTURE(offline) {
	struct luf_file f;
	struct luf_rd rd;
	uint64_t *pfn0, *pfn1;
	int *status;
	char *ballast;
	size_t ballast_used;	/* bytes of the ballast faulted in */
	int offlined;		/* block to put online again, -1: none */
	pid_t pid;		/* the test process */
};

FIXTURE_VARIANT(offline) {
	int brk;		/* debug_break=4 removes this release */
	bool migrate;		/* MIGRC instead of reclaim */
	bool large;		/* 64 KiB XFS folios instead of ext4's order 0 */
};

FIXTURE_VARIANT_ADD(offline, pageout) { .brk = BRK_ISOLATE, .migrate = false };
FIXTURE_VARIANT_ADD(offline, migrate) { .brk = BRK_ISOLATE, .migrate = true };
FIXTURE_VARIANT_ADD(offline, pageout_xfs_large) {
	.brk = BRK_ISOLATE, .migrate = false, .large = true,
};
FIXTURE_VARIANT_ADD(offline, migrate_xfs_large) {
	.brk = BRK_ISOLATE, .migrate = true, .large = true,
};

/* the variant's file system */
static const char *file_dir(const FIXTURE_VARIANT(offline) *variant)
{
	return variant->large ? LUF_XFS_DIR : LUF_EXT4_DIR;
}

FIXTURE_SETUP(offline)
{
	memset(&self->f, 0, sizeof(self->f));
	self->f.fd = -1;
	self->offlined = -1;
	self->pfn0 = self->pfn1 = NULL;
	self->status = NULL;
	self->ballast = NULL;
	self->ballast_used = 0;
	self->pid = getpid();
	LUF_BREAK_SKIP(variant->brk);
#ifdef __aarch64__
	SKIP(return, "arm64 never offlines boot memory (prevent_bootmem_remove_notifier), and node %d is boot memory",
	     HELD_NODE);
#endif
	if (nr_cpus() < 1 + NREADERS)
		SKIP(return, "needs %d CPUs", 1 + NREADERS);
	if (!numa_node_has_memory(HELD_NODE))
		SKIP(return, "needs memory on NUMA node %d", HELD_NODE);
	REQUIRE_DIR(file_dir(variant));
	ASSERT_TRUE(path_exists(MEM_DIR "/block_size_bytes"))
		TH_LOG("no " MEM_DIR ": the test kernel needs CONFIG_MEMORY_HOTREMOVE");
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, luf_ensure_unloaded());
	ASSERT_EQ(0, luf_file_create(&self->f, file_dir(variant), "offline",
				     FILE_SIZE));
	self->pfn0 = calloc(self->f.npages, sizeof(uint64_t));
	self->pfn1 = calloc(self->f.npages, sizeof(uint64_t));
	self->status = calloc(self->f.npages, sizeof(int));
	ASSERT_TRUE(self->pfn0 && self->pfn1 && self->status);
}

/*
 * In the parent: after a failed ASSERT the 6.12 harness runs no
 * FIXTURE_TEARDOWN() (the wrapper's `child` does not survive the
 * longjmp(), so the test process takes the parent's path and aborts), but
 * it runs this one either in the test process (then) or in the parent.
 * Only the test process has the readers, the mappings and the file
 * descriptor.
 */
FIXTURE_TEARDOWN_PARENT(offline)
{
	bool mine = getpid() == self->pid;
	double took;

	if (mine)
		luf_readers_stop(&self->rd);
	if (self->offlined >= 0 && !block_online(self->offlined))
		block_set_state(self->offlined, "online", 60, &took);
	if (mine) {
		luf_file_destroy(&self->f);
		if (self->ballast)
			munmap(self->ballast, BALLAST_MAX);
		free(self->pfn0);
		free(self->pfn1);
		free(self->status);
	} else if (self->f.fd >= 0) {
		unlink(self->f.path);
	}
	luf_ensure_unloaded();
}

/*
 * Order-0 allocations on node 1 take the smallest free buddy blocks first,
 * then the oldest large ones: at boot, those of the lowest blocks; a block
 * put online goes to the tail.  Fault in anonymous memory bound to node 1
 * (its page tables stay on node 0) until it lands in offlinable blocks:
 * the pages the file moves to node 1 next come from there too.
 */
static void ballast_fill(struct __test_metadata *_metadata,
			 FIXTURE_DATA(offline) *self, struct block *b, int nb,
			 uint64_t bsize)
{
	const size_t n = BALLAST_CHUNK / ps;
	unsigned long mask = 1UL << HELD_NODE;
	uint64_t *pfns = calloc(n, sizeof(*pfns));
	size_t i, good = 0;

	ASSERT_NE(NULL, pfns);
	if (!self->ballast) {
		self->ballast = mmap(NULL, BALLAST_MAX, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				     -1, 0);
		ASSERT_NE(MAP_FAILED, self->ballast) {
			self->ballast = NULL;
		}
		madvise(self->ballast, BALLAST_MAX, MADV_NOHUGEPAGE);
		ASSERT_EQ(0, syscall(SYS_mbind, self->ballast, BALLAST_MAX,
				     MPOL_BIND_, &mask, 8 * sizeof(mask), 0))
			TH_LOG("mbind: %s", strerror(errno));
	}
	while (self->ballast_used < BALLAST_MAX) {
		char *p = self->ballast + self->ballast_used;

		ASSERT_EQ(0, madvise(p, BALLAST_CHUNK, MADV_POPULATE_WRITE_))
			TH_LOG("MADV_POPULATE_WRITE: %s", strerror(errno));
		self->ballast_used += BALLAST_CHUNK;
		ASSERT_EQ(0, luf_pagemap_pfns(p, n, pfns));
		good = 0;
		for (i = 0; i < n; i++) {
			struct block *blk = block_of(b, nb, pfns[i], bsize);

			good += blk && blk->offlinable && !blk->tried;
		}
		if (good * 10 >= n * 9)
			break;
	}
	free(pfns);
	note("ballast: %zu MiB on node %d\n", self->ballast_used >> 20, HELD_NODE);
	ASSERT_GE(good * 10, n * 9)
		TH_LOG("node %d never allocated from its offlinable blocks", HELD_NODE);
}

/*
 * Fresh load, the file's page cache moved to node 1 (nothing deferred),
 * mapped, readers on CPUs 1-3; then the unmap of @variant.  Fills
 * @b[].freed and held_min, @e0 before and @e1 after the unmap.
 */
static void make_held(struct __test_metadata *_metadata,
		      FIXTURE_DATA(offline) *self,
		      const FIXTURE_VARIANT(offline) *variant,
		      struct block *b, int nb, uint64_t bsize,
		      struct luf_ev *e0, struct luf_ev *e1)
{
	static const int cpus[NREADERS] = { 1, 2, 3 };
	struct luf_file *f = &self->f;
	uint64_t freed = 0, parked;
	size_t on_node, i;
	struct luf_ev e;
	int ret, k;

	ret = luf_module_fresh_brk();
	ASSERT_EQ(0, ret) TH_LOG("loading %s (LUF_BREAK=%d): %s", luf_ko_path(),
				 luf_env()->brk, strerror(-ret));
	ASSERT_EQ(0, luf_knob_write(KNOB(max_defer_ms), "60000"));

	/* read in on node 0, then moved to node 1 while nothing defers */
	if (f->map)
		munmap((void *)f->map, f->size);
	f->map = NULL;
	if (variant->large) {
		/*
		 * Written again, 64 KiB per write(2): XFS caches it in
		 * 64 KiB folios (a read-in would start with order 0).
		 */
		luf_file_destroy(f);
		ASSERT_EQ(0, luf_file_create(f, file_dir(variant), "offline",
					     FILE_SIZE));
	} else {
		ASSERT_EQ(0, luf_file_evict(f));
	}
	ASSERT_EQ(0, luf_file_map(f));
	ASSERT_EQ((uint64_t)0, luf_file_touch(f));
	ASSERT_EQ(0, luf_ev_read(&e));
	ret = move_all(f->map, f->npages, HELD_NODE, self->status, &on_node);
	ASSERT_EQ(0, ret) TH_LOG("move_pages to node %d: %s", HELD_NODE,
				 strerror(-ret));
	ASSERT_EQ(0, move_all(f->map, f->npages, -1, self->status, &on_node));
	ASSERT_EQ(0, luf_ev_read(e0));
	note("%zu of %zu pages of the file are on node %d\n", on_node,
	     f->npages, HELD_NODE);
	ASSERT_GT(on_node, f->npages / 2)
		TH_LOG("the page cache did not go to node %d", HELD_NODE);
	ASSERT_EQ(e.deferred, e0->deferred)
		TH_LOG("the move to node %d deferred", HELD_NODE);

	ASSERT_EQ(0, luf_knob_write(variant->migrate ? KNOB(migrc_enabled) :
				    KNOB(enabled), "1"));
	ret = luf_readers_start(&self->rd, f->map, HOT_PAGES, cpus, NREADERS, 0);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));

	ASSERT_EQ(0, luf_file_pfns(f, self->pfn0));
	ASSERT_EQ(0, luf_ev_read(e0));
	if (variant->migrate) {
		ret = move_all(f->map, f->npages, OTHER_NODE, self->status,
			       &on_node);
		ASSERT_EQ(0, ret) TH_LOG("move_pages: %s", strerror(-ret));
	} else {
		ASSERT_EQ(0, madvise((void *)f->map, f->size, MADV_PAGEOUT))
			TH_LOG("MADV_PAGEOUT: %s", strerror(errno));
	}
	ASSERT_EQ(0, luf_ev_read(e1));
	ASSERT_EQ(0, luf_file_pfns(f, self->pfn1));
	luf_readers_stop(&self->rd);
	ASSERT_EQ((uint64_t)0, luf_rd_count(&self->rd, LUF_RD_CORRUPT))
		TH_LOG("the readers saw words that are not the file's content");
	luf_ev_log("before the unmap", e0);
	luf_ev_log("after the unmap", e1);
	ASSERT_GT(e1->deferred, e0->deferred)
		TH_LOG("the unmap deferred nothing: the test would prove nothing");
	ASSERT_GT(e1->held, (uint64_t)0) TH_LOG("no page is held back");
	if (variant->large)
		ASSERT_GT(e1->pages_reclaim + e1->pages_migrate -
			  e0->pages_reclaim - e0->pages_migrate,
			  e1->deferred - e0->deferred)
			TH_LOG("no large folio was deferred: the file's folios are all order 0");

	/* pages of the file freed from each block, and how many were held */
	for (k = 0; k < nb; k++)
		b[k].freed = 0;
	for (i = 0; i < f->npages; i++) {
		struct block *blk;

		if (!self->pfn0[i] || self->pfn1[i] == self->pfn0[i])
			continue;
		freed++;
		blk = block_of(b, nb, self->pfn0[i], bsize);
		if (blk)
			blk->freed++;
	}
	parked = e1->held_total - e0->held_total;
	note("%" PRIu64 " pages of the file freed, %" PRIu64 " of them held\n",
	     freed, parked);
	for (k = 0; k < nb; k++) {
		b[k].held_min = (int64_t)b[k].freed - (int64_t)(freed - parked);
		if (b[k].freed)
			note("memory%d: %" PRIu64 " pages of the file freed, at least %"
			     PRId64 " held%s\n", b[k].id, b[k].freed,
			     b[k].held_min > 0 ? b[k].held_min : 0,
			     b[k].offlinable ? "" : " (cannot go offline)");
	}
}

/* The untried offlinable block with the most held pages, or NULL */
static struct block *pick_block(struct block *b, int nb)
{
	struct block *best = NULL;
	int k;

	for (k = 0; k < nb; k++)
		if (b[k].offlinable && !b[k].tried && b[k].held_min > 0 &&
		    (!best || b[k].held_min > best->held_min))
			best = &b[k];
	return best;
}

TEST_F_TIMEOUT(offline, held_block_offlines, 500)
{
	struct block b[MAX_BLOCKS], *blk = NULL;
	struct luf_ev e0, e1, e2, e3;
	char why[512] = "";
	bool done = false, gone;
	uint64_t bsize;
	int nb, attempt, ret, k;
	double took;
	size_t len;

	ASSERT_EQ(0, block_size(&bsize));
	nb = node_blocks(b, MAX_BLOCKS);
	ASSERT_GT(nb, 0) TH_LOG("no memory block in " NODE_DIR);
	ret = precheck(b, nb);
	ASSERT_EQ(0, ret) TH_LOG("putting a block online again: %s", strerror(-ret));
	for (k = 0; k < nb; k++) {
		len = strlen(why);
		snprintf(why + len, sizeof(why) - len, " memory%d:%s", b[k].id,
			 b[k].offlinable ? "ok" : strerror(b[k].err));
	}
	note("memory blocks of %" PRIu64 " MiB; node %d, offline with nothing held:%s\n",
	     bsize >> 20, HELD_NODE, why);
	why[0] = '\0';

	for (attempt = 0; attempt < nb; attempt++) {
		ballast_fill(_metadata, self, b, nb, bsize);
		if (_metadata->exit_code)
			return;
		make_held(_metadata, self, variant, b, nb, bsize, &e0, &e1);
		if (_metadata->exit_code)
			return;
		blk = pick_block(b, nb);
		if (!blk)
			break;
		blk->tried = true;
		ASSERT_EQ(0, luf_ev_read(&e2));
		ASSERT_EQ(e1.released, e2.released) {
			luf_ev_log("now", &e2);
			TH_LOG("held pages were given back before the offline");
		}
		note("attempt %d: offline memory%d, at least %" PRId64
		     " of its pages held\n", attempt + 1, blk->id, blk->held_min);
		self->offlined = blk->id;
		ret = block_set_state(blk->id, "offline", OFFLINE_DEADLINE, &took);
		ASSERT_EQ(0, luf_ev_read(&e3));
		luf_ev_log("after the offline", &e3);
		note("memory%d offline: %s after %.1f s\n", blk->id,
		     ret == -ETIMEDOUT ? "killed at the deadline" :
		     ret ? strerror(-ret) : "ok", took);
		if (luf_env()->brk) {
			/* the release is removed: the offline must hang */
			ASSERT_NE(0, ret) TH_LOG("broken mode 4: memory%d went offline although its held pages were kept",
						 blk->id);
			if (ret == -ETIMEDOUT) {
				note("broken mode 4 caught: memory%d did not go offline\n",
				     blk->id);
				self->offlined = -1;
				return;
			}
			/*
			 * A held large block fails the isolation at once: it
			 * is the cause if the block goes offline as soon as
			 * turning LUF off has given the held pages back.
			 */
			if (variant->large && ret == -EBUSY) {
				ASSERT_EQ(0, luf_knob_write(variant->migrate ?
							    KNOB(migrc_enabled) :
							    KNOB(enabled), "0"));
				ret = block_set_state(blk->id, "offline",
						      OFFLINE_DEADLINE, &took);
				note("memory%d offline once nothing is held: %s\n",
				     blk->id, ret ? strerror(-ret) : "ok");
				if (!ret) {
					note("broken mode 4 caught: memory%d failed to go offline while held\n",
					     blk->id);
					return;
				}
			}
		}
		ASSERT_NE(-ETIMEDOUT, ret) {
			TH_LOG("memory%d did not go offline in %d s (child killed): its held pages were not given back",
			       blk->id, OFFLINE_DEADLINE);
		}
		if (!ret) {
			done = true;
			break;
		}
		/* it went offline in the check, with nothing held: try another */
		blk->err = -ret;
		len = strlen(why);
		snprintf(why + len, sizeof(why) - len, "%smemory%d: %s%s",
			 len ? ", " : "", blk->id, strerror(-ret),
			 e3.rel_isolate > e2.rel_isolate ?
			 " (after isolation)" : "");
		self->offlined = -1;
	}
	ASSERT_TRUE(done) {
		TH_LOG("no offlinable memory block of node %d with held pages went offline%s%s",
		       HELD_NODE, why[0] ? ": " : "", why);
	}
	/* online again first, whatever the assertions below find */
	gone = !block_online(blk->id);
	ret = block_set_state(blk->id, "online", 60, &took);
	if (!ret)
		self->offlined = -1;
	ASSERT_TRUE(gone) TH_LOG("memory%d is still online", blk->id);
	ASSERT_EQ(0, ret) TH_LOG("online memory%d: %s", blk->id, strerror(-ret));
	ASSERT_TRUE(block_online(blk->id));
	ASSERT_GE(e3.rel_isolate - e2.rel_isolate, (uint64_t)blk->held_min)
		TH_LOG("released_isolate grew by less than the pages held in memory%d",
		       blk->id);
	ASSERT_LE(e3.held + blk->held_min, e2.held)
		TH_LOG("held_pages did not fall by the pages held in memory%d",
		       blk->id);
}

LUF_MAIN(LUF_NEED_MODULE)
