// SPDX-License-Identifier: GPL-2.0
/*
 * luf_write: no write becomes visible while a deferred read-only
 * translation to the old copy may exist (I2)
 * (the oracles, readers and broken modes: oracle.h).
 *
 *  write.<fs>_<op>[_migrate].reclaim_then_write (I2), fs in ext4, xfs,
 *	xfs_large (the file is one 16-page folio), tmpfs (page-out
 *	variants swap tmpfs to zram), tmpfs_huge (huge=always: one
 *	PMD-sized folio, mapped by PTEs),
 *	after the deferral, CPU 0 changes the file to generation G+1 (pwrite,
 *	pwritev, splice from a pipe, copy_file_range from another file) or to
 *	zeros (fallocate PUNCH_HOLE of pages 4-11, ftruncate to 0 and back,
 *	ftruncate into the last page and back), then publishes.  Oracle: a
 *	reader that has seen the publication never reads old content again,
 *	and no reader ever reads a word that is neither old nor new content.
 *  cow.<ext4|xfs|xfs_large[_migrate]|ext4_migrate|tmpfs_huge_migrate|
 *	ext4_shared|ext4_shared_migrate|xfs_shared_migrate|ext4_shared_read|
 *	xfs_shared_read|anon_mthp|anon_thp_migrate>.write_upgrade
 *	(I2, write faults; anon_mthp: a read-only, clean 64 KiB mTHP made
 *	writable by mprotect() after its page-out; anon_thp_migrate: the
 *	same for a PMD-sized THP after MIGRC moved it)
 *	a MAP_PRIVATE (COW) or MAP_SHARED (*_shared) PROT_READ|PROT_WRITE
 *	file mapping, never written, so its PTEs are read-only; after the
 *	deferral CPU 0 writes generation G+1 into every word (write faults),
 *	then publishes.  *_read: CPU 0 first reads every page back (read
 *	faults, which must leave the deferral pending: write notification
 *	maps them read-only), then writes.  Oracle as for write.
 *  swapin.anon.read_maps_writable (I2, a read fault that maps writable)
 *	an anonymous page swapped in through the swap cache (read-only, the
 *	swap entry shared with a child), deferred by MADV_PAGEOUT; the child
 *	exits, and the parent's READ faults map fresh exclusive pages
 *	writable (zram skips the swap cache); it writes G+1 without a fault
 *	and publishes.  Oracle as for write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "oracle.h"

enum wop {
	OP_PWRITE, OP_PWRITEV, OP_SPLICE,
	OP_COPY,	/* copy_file_range */
	OP_PUNCH,	/* fallocate PUNCH_HOLE of pages 4-11 */
	OP_TRUNC0,	/* ftruncate to 0 and back */
	OP_TAIL,	/* ftruncate into the last page and back */
};

FIXTURE(write) {
	struct oracle o;
	struct luf_file src;
	uint64_t *buf;
	int pipefd[2];
};

/*
 * BRK_WRITE where only the module's file_change flush stands between
 * the change and a stale read, so that broken mode must be caught:
 * - ext4 and XFS writes (pwrite, pwritev, splice, ext4 copy_file_range)
 *   put the new content into a new page-cache folio; the old folio is
 *   held by the module, still readable through the stale entries.
 * - truncate_tail: ftruncate into the last page unmaps nothing of the
 *   mapping (the unmapped range starts after it), but zeroes the tail of
 *   the last page in a new folio.  This is the truncation that needs the
 *   module's flush; truncation to 0 does not (below).
 * Not selected (10 attempts each in broken mode 2 never saw a violation,
 * as expected):
 * - punch and trunc0 unmap the mapped range: zap_pte_range() calls
 *   flush_tlb_batched_pending(), which flushes the whole mm because the
 *   reclaim unmap counted in mm->tlb_flush_batched.  So does XFS
 *   copy_file_range, which reflinks and truncates the destination's page
 *   cache (truncate_pagecache_range()).
 * - tmpfs with swap on LUF_SWAP_DEV (zram, so that the swap-out completes
 *   and the folio is freed in the MADV_PAGEOUT pass): writes swap the page
 *   back in as a new folio; truncate_tail zeroes that new folio in
 *   truncate_inode_partial_folio(), which shmem shares.
 */
FIXTURE_VARIANT(write) {
	int brk;
	const char *dir;
	enum wop op;
	enum how how;
	bool large;
};

/* name, the broken mode it catches, directory, op, how, large */
#define WRITE_VARIANT(name, b, d, o, h, l)				\
	FIXTURE_VARIANT_ADD(write, name) {				\
		.brk = b, .dir = LUF_##d##_DIR, .op = OP_##o,		\
		.how = BY_##h, .large = l,				\
	}

/* the same seven on each file system; XFS's copy_file_range() shares extents */
#define FS_VARIANTS(fs, d, copy_brk)					\
	WRITE_VARIANT(fs##_pwrite, BRK_WRITE, d, PWRITE, PAGEOUT, false);	\
	WRITE_VARIANT(fs##_pwritev, BRK_WRITE, d, PWRITEV, PAGEOUT, false);	\
	WRITE_VARIANT(fs##_splice, BRK_WRITE, d, SPLICE, PAGEOUT, false);	\
	WRITE_VARIANT(fs##_copy_file_range, copy_brk, d, COPY, PAGEOUT, false); \
	WRITE_VARIANT(fs##_punch_hole, 0, d, PUNCH, PAGEOUT, false);		\
	WRITE_VARIANT(fs##_truncate, 0, d, TRUNC0, PAGEOUT, false);		\
	WRITE_VARIANT(fs##_truncate_tail, BRK_WRITE, d, TAIL, PAGEOUT, false)

FS_VARIANTS(ext4, EXT4, BRK_WRITE);
FS_VARIANTS(xfs, XFS, 0);
FS_VARIANTS(tmpfs, TMP, BRK_WRITE);
WRITE_VARIANT(xfs_large_pwrite, BRK_WRITE, XFS, PWRITE, PAGEOUT, true);
WRITE_VARIANT(xfs_large_punch_hole, 0, XFS, PUNCH, PAGEOUT, true);
/* MIGRC: the page cache now holds the new copy, the old one is held */
WRITE_VARIANT(ext4_pwrite_migrate, BRK_WRITE, EXT4, PWRITE, MIGRATION, false);
WRITE_VARIANT(xfs_pwrite_migrate, BRK_WRITE, XFS, PWRITE, MIGRATION, false);
WRITE_VARIANT(tmpfs_pwrite_migrate, BRK_WRITE, TMP, PWRITE, MIGRATION, false);
WRITE_VARIANT(tmpfs_truncate_tail_migrate, BRK_WRITE, TMP, TAIL, MIGRATION, false);
/* the file is one PMD-sized folio of the huge=always tmpfs */
WRITE_VARIANT(tmpfs_huge_pwrite_migrate, BRK_WRITE, THP, PWRITE, MIGRATION, true);
WRITE_VARIANT(tmpfs_huge_punch_hole_migrate, 0, THP, PUNCH, MIGRATION, true);

static void write_release(FIXTURE_DATA(write) *self)
{
	if (self->buf)
		munmap(self->buf, self->o.f.size);
	self->buf = NULL;
	oracle_release(&self->o);
	luf_file_destroy(&self->src);
	if (self->pipefd[0] >= 0) {
		close(self->pipefd[0]);
		close(self->pipefd[1]);
	}
	self->pipefd[0] = self->pipefd[1] = -1;
}

FIXTURE_SETUP(write)
{
	self->src.fd = -1;
	self->buf = NULL;
	self->pipefd[0] = self->pipefd[1] = -1;
	/* Without swap, reclaim can unmap a shmem folio but never free it */
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, variant->how,
		     (variant->large ? NEED_LARGE : 0) |
		     (variant->how == BY_PAGEOUT && !strcmp(variant->dir, LUF_TMP_DIR) ?
		      NEED_SWAP : 0));
}

FIXTURE_TEARDOWN(write)
{
	write_release(self);
	oracle_teardown(_metadata, &self->o);
}

/* Write all of @buf (@len bytes) into the pipe */
static int fill_pipe(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const char *)buf + done, len - done);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += n;
	}
	return 0;
}

/* The change itself; returns 0 or -errno.  Must not print. */
static int do_wop(FIXTURE_DATA(write) *self, enum wop op, const void *buf,
		  const struct iovec *iov, int iovcnt)
{
	size_t size = self->o.f.size, done = 0;
	loff_t off_in, off_out;
	ssize_t n;

	switch (op) {
	case OP_PWRITE:
		n = pwrite(self->o.f.fd, buf, size, 0);
		return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
	case OP_PWRITEV:
		n = pwritev(self->o.f.fd, iov, iovcnt, 0);
		return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
	case OP_SPLICE:
		while (done < size) {
			off_out = done;
			n = splice(self->pipefd[0], NULL, self->o.f.fd, &off_out,
				   size - done, 0);
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			done += n;
		}
		return 0;
	case OP_COPY:
		while (done < size) {
			off_in = off_out = done;
			n = copy_file_range(self->src.fd, &off_in, self->o.f.fd,
					    &off_out, size - done, 0);
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			done += n;
		}
		return 0;
	case OP_PUNCH:
		return fallocate(self->o.f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 4 * ps, 8 * ps) ? -errno : 0;
	case OP_TRUNC0:
		if (ftruncate(self->o.f.fd, 0) || ftruncate(self->o.f.fd, size))
			return -errno;
		return 0;
	case OP_TAIL:
		if (ftruncate(self->o.f.fd, size - ps / 2) ||
		    ftruncate(self->o.f.fd, size))
			return -errno;
		return 0;
	}
	return -EINVAL;
}

static void write_once(struct __test_metadata *_metadata,
		       FIXTURE_DATA(write) *self,
		       const FIXTURE_VARIANT(write) *variant, struct rd_sum *s)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, i;
	struct iovec iov[NPAGES];
	struct luf_ev e0, e1, e2;
	struct rd_ctl *rd;
	uint64_t *buf;
	int ret;

	ret = tfile_create(&self->o.f, variant->dir, "write", NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file in %s: %s", variant->dir, strerror(-ret));
	self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->o.map);
	buf = self->buf = anon_buf(self->o.f.size);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < words; i++)
		buf[i] = word(i, gen + 1);
	for (i = 0; i < NPAGES; i++) {
		iov[i].iov_base = (char *)buf + i * ps;
		iov[i].iov_len = ps;
	}
	if (variant->op == OP_SPLICE) {
		ASSERT_EQ(0, pipe(self->pipefd));
		ASSERT_LE((ssize_t)self->o.f.size,
			  fcntl(self->pipefd[1], F_SETPIPE_SZ, (int)(2 * self->o.f.size)));
		ASSERT_EQ(0, fill_pipe(self->pipefd[1], buf, self->o.f.size));
	}
	if (variant->op == OP_COPY) {
		ret = tfile_create(&self->src, variant->dir, "src", NPAGES, gen + 1);
		ASSERT_EQ(0, ret) TH_LOG("source file: %s", strerror(-ret));
	}

	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = gen;
	switch (variant->op) {
	case OP_PUNCH:
		rd->new_gen = gen;
		rd->zlo = 4 * ps / 8;
		rd->zhi = 12 * ps / 8;
		break;
	case OP_TRUNC0:
		rd->new_gen = gen;
		rd->zlo = 0;
		rd->zhi = words;
		/* SIGBUS between the truncation and the extension */
		rd->fault_ok_before = true;
		break;
	case OP_TAIL:
		rd->new_gen = gen;
		rd->zlo = (self->o.f.size - ps / 2) / 8;
		rd->zhi = words;
		break;
	default:
		rd->new_gen = gen + 1;
		break;
	}
	prefault_all();
	open_window(_metadata, rd, self->o.map, self->o.f.size, variant->how,
		    &e0, &e1, false);
	ret = do_wop(self, variant->op, buf, iov, NPAGES);
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after change", s);
	ASSERT_EQ(0, ret) TH_LOG("the change: %s", strerror(-ret));
	write_release(self);
}

TEST_F_TIMEOUT(write, reclaim_then_write, 300)
{
	RUN_ATTEMPTS(write_once, "reader read old or foreign content after the change");
}

FIXTURE(cow) {
	struct oracle o;
};

FIXTURE_VARIANT(cow) {
	int brk;
	const char *dir;	/* NULL: anonymous memory (anon_mthp_map()) */
	enum how how;
	bool shared;
	bool read_first;
	bool large;
	bool thp;		/* anonymous: a PMD-sized THP (anon_thp_map()) */
};

/*
 * MAP_PRIVATE: the write faults COW the never-written file pages.  After a
 * page-out the PTEs are empty and only the module's write_fault flush
 * stands between the new anonymous pages and the stale entries (brk 3).
 * After a migration the PTEs map the new copy read-only, and the COW
 * replaces each with ptep_clear_flush(), which flushes that address on
 * every CPU of the mm: the core covers it, no broken mode.
 * MAP_SHARED (PROT_READ | PROT_WRITE): read faults map the clean page-cache
 * pages read-only (write notification); a write fault then makes the PTE
 * of the page-cache page writable without any flush (after a page-out:
 * a new folio read back; after a migration: the new copy), so the module's
 * write_fault flush is the only one (brk 3).  (Not tmpfs: shmem needs no
 * write notification, so its shared writable PTEs are writable at once and
 * never deferred.)
 */
FIXTURE_VARIANT_ADD(cow, ext4) { .brk = BRK_FAULT, .dir = LUF_EXT4_DIR };
FIXTURE_VARIANT_ADD(cow, xfs) { .brk = BRK_FAULT, .dir = LUF_XFS_DIR };
FIXTURE_VARIANT_ADD(cow, xfs_large) { .brk = BRK_FAULT, .dir = LUF_XFS_DIR, .large = true };
FIXTURE_VARIANT_ADD(cow, xfs_large_migrate) {
	.brk = 0, .dir = LUF_XFS_DIR, .how = BY_MIGRATION, .large = true,
};
FIXTURE_VARIANT_ADD(cow, ext4_migrate) { .brk = 0, .dir = LUF_EXT4_DIR, .how = BY_MIGRATION };
/* a PMD-sized folio of the huge=always tmpfs, mapped by PTEs */
FIXTURE_VARIANT_ADD(cow, tmpfs_huge_migrate) {
	.brk = 0, .dir = LUF_THP_DIR, .how = BY_MIGRATION, .large = true,
};
FIXTURE_VARIANT_ADD(cow, ext4_shared) { .brk = BRK_FAULT, .dir = LUF_EXT4_DIR, .shared = true };
/*
 * arm64 (not x86): making a present PTE writable and dirty, as the shared
 * write fault after a migration does, flushes that address on every CPU
 * (__ptep_set_access_flags()), so there the core covers it.
 */
#define UPGRADE_BRK	BRK_X86(BRK_FAULT)
FIXTURE_VARIANT_ADD(cow, ext4_shared_migrate) {
	.brk = UPGRADE_BRK, .dir = LUF_EXT4_DIR, .how = BY_MIGRATION, .shared = true,
};

FIXTURE_VARIANT_ADD(cow, xfs_shared_migrate) {
	.brk = UPGRADE_BRK, .dir = LUF_XFS_DIR, .how = BY_MIGRATION, .shared = true,
};

/*
 * Read faults first: the pages read back are mapped read-only (write
 * notification) and the deferral stays; each write fault then upgrades a
 * present PTE, which only the module's write_fault flush covers on x86
 * (arm64's __ptep_set_access_flags() flushes the address, as above).
 */
FIXTURE_VARIANT_ADD(cow, ext4_shared_read) {
	.brk = UPGRADE_BRK, .dir = LUF_EXT4_DIR, .shared = true, .read_first = true,
};

FIXTURE_VARIANT_ADD(cow, xfs_shared_read) {
	.brk = UPGRADE_BRK, .dir = LUF_XFS_DIR, .shared = true, .read_first = true,
};

/*
 * One anonymous 64 KiB mTHP, read-only and clean after a swap-in, paged
 * out, then made writable by mprotect() and written.  The deferral left
 * the mm's batched-flush count raised (set_tlb_ubc_flush_pending()), and
 * mprotect()'s change_pte_range() flushes the whole mm for it
 * (flush_tlb_batched_pending()) before any write: the core covers it, no
 * broken mode (twice ten attempts in mode 3 never read old content).
 */
FIXTURE_VARIANT_ADD(cow, anon_mthp) { .brk = 0, .large = true };
/* The same for one anonymous PMD-sized THP moved by MIGRC (anon_thp_map()) */
FIXTURE_VARIANT_ADD(cow, anon_thp_migrate) {
	.brk = 0, .how = BY_MIGRATION, .large = true, .thp = true,
};

FIXTURE_SETUP(cow)
{
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, variant->how,
		     (variant->large ? NEED_LARGE : 0) |
		     (variant->thp ? NEED_THP : variant->dir ? 0 : NEED_MTHP));
}

FIXTURE_TEARDOWN(cow)
{
	oracle_teardown(_metadata, &self->o);
}

static void cow_once(struct __test_metadata *_metadata, FIXTURE_DATA(cow) *self,
		     const FIXTURE_VARIANT(cow) *variant, struct rd_sum *s)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, i;
	struct luf_ev e0, e1, e2;
	volatile uint64_t *w;
	struct rd_ctl *rd;
	int ret;

	if (variant->thp) {
		anon_thp_map(_metadata, &self->o, gen);
		words = self->o.f.size / 8;
	} else if (!variant->dir) {
		anon_mthp_map(_metadata, &self->o, gen);
	} else {
		ret = tfile_create(&self->o.f, variant->dir, "cow", NPAGES, gen);
		ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	}
	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = gen;
	rd->new_gen = gen + 1;
	prefault_all();
	/* after prefault_all(), which would write to it */
	if (variant->dir) {
		self->o.map = map_file(&self->o.f, PROT_READ | PROT_WRITE,
				       variant->shared ? MAP_SHARED : MAP_PRIVATE);
		ASSERT_NE(NULL, self->o.map);
	}
	w = self->o.map;
	open_window(_metadata, rd, self->o.map, self->o.f.size, variant->how,
		    &e0, &e1, false);
	/* the anonymous memory is read-only: made writable in the window */
	if (!variant->dir)
		ASSERT_EQ(0, mprotect(self->o.map, self->o.f.size, PROT_READ | PROT_WRITE));
	if (variant->read_first) {
		for (i = 0; i < words; i += ps / 8)
			(void)w[i];
		assert_still_deferred(_metadata, &e0, "the read faults");
	}
	for (i = 0; i < words; i++)
		w[i] = word(i, gen + 1);
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after the writes", s);
	oracle_release(&self->o);
}

TEST_F_TIMEOUT(cow, write_upgrade, 300)
{
	RUN_ATTEMPTS(cow_once, "reader read the old page after the write");
}

/* ---- d2. a read fault that maps writable ---------------------------- */

FIXTURE(swapin) {
	struct oracle o;
	pid_t child;
	int gate[2];
};

/*
 * An anonymous page swapped in by a READ fault is mapped writable when it
 * is certainly exclusive (do_swap_page(): a fresh folio that skipped the
 * swap cache, zram's SWP_SYNCHRONOUS_IO with one swap reference), so the
 * write that follows takes no fault at all.  Only the module's flush at
 * that read fault (or where the PTE is installed) stands between the new
 * page and the readers' stale entries to the deferred one: broken mode 3.
 *
 * To defer, the page must be mapped read-only and clean when it is paged
 * out: a child forked after a first swap-out shares the swap entries, so
 * the parent's swap-in goes through the swap cache and maps read-only.
 * The child exits after the deferral, leaving the parent the only swap
 * reference, and the parent's read then maps writable.
 */
FIXTURE_VARIANT(swapin) {
	int brk;
};

/*
 * arm64: the first write to the clean writable PTE faults (no hardware
 * dirty bit here) and __ptep_set_access_flags() flushes it: no broken mode
 */
FIXTURE_VARIANT_ADD(swapin, anon) { .brk = UPGRADE_BRK };

FIXTURE_SETUP(swapin)
{
	self->child = -1;
	self->gate[0] = self->gate[1] = -1;
	oracle_setup(_metadata, &self->o, variant->brk, LUF_TMP_DIR, BY_PAGEOUT,
		     NEED_SWAP);
}

static void swapin_release(FIXTURE_DATA(swapin) *self)
{
	int st;

	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, &st, 0);
	}
	self->child = -1;
	if (self->gate[0] >= 0) {
		close(self->gate[0]);
		close(self->gate[1]);
	}
	self->gate[0] = self->gate[1] = -1;
	if (self->o.rd) {
		luf_rd_stop(&self->o.rd->rd);
		munmap(self->o.rd, sizeof(*self->o.rd));
	}
	self->o.rd = NULL;
	if (self->o.map)
		munmap(self->o.map, NPAGES * ps);
	self->o.map = NULL;
}

FIXTURE_TEARDOWN(swapin)
{
	swapin_release(self);
	oracle_teardown(_metadata, &self->o);
}

/*
 * The test pages, written with @gen and swapped out while dirty and
 * writable (nothing deferred), and a child forked then that shares their
 * swap entries until self->gate[1] closes: a swap-in by the parent goes
 * through the swap cache and maps read-only and clean.
 */
static volatile uint64_t *swapin_shared(struct __test_metadata *_metadata,
					FIXTURE_DATA(swapin) *self, unsigned int gen)
{
	size_t words = NPAGES * ps / 8, i;
	volatile uint64_t *w;
	char c;

	w = self->o.map = mmap(NULL, NPAGES * ps, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->o.map);
	madvise(self->o.map, NPAGES * ps, MADV_NOHUGEPAGE);
	for (i = 0; i < words; i++)
		w[i] = word(i, gen);
	ASSERT_EQ(0, madvise(self->o.map, NPAGES * ps, MADV_PAGEOUT));
	ASSERT_EQ(0, pipe(self->gate));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* shares the swap entries; touches nothing, then exits */
		close(self->gate[1]);
		pin_to_cpu(0);
		if (read(self->gate[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	return w;
}

static void swapin_once(struct __test_metadata *_metadata,
			FIXTURE_DATA(swapin) *self,
			const FIXTURE_VARIANT(swapin) *variant, struct rd_sum *s)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, i;
	volatile uint64_t *w;
	struct luf_ev e0, e1, e2;
	struct rd_ctl *rd;
	uint64_t sum = 0;
	int st;

	(void)variant;
	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = gen;
	rd->new_gen = gen + 1;
	w = swapin_shared(_metadata, self, gen);
	close(self->gate[0]);
	self->gate[0] = -1;
	/*
	 * The fork made every private page copy-on-write: break them all
	 * now (no write fault later), but not the test pages, which must
	 * stay unwritten (read-only while prefault_all() runs; mprotect()
	 * does not make a page that the child shares writable).
	 */
	ASSERT_EQ(0, mprotect(self->o.map, NPAGES * ps, PROT_READ));
	prefault_all();
	ASSERT_EQ(0, mprotect(self->o.map, NPAGES * ps, PROT_READ | PROT_WRITE));
	/* through the swap cache: read-only and clean, the entry is shared */
	for (i = 0; i < words; i += ps / 8)
		sum += w[i];
	ASSERT_NE((uint64_t)0, sum);
	open_window(_metadata, rd, self->o.map, NPAGES * ps, BY_PAGEOUT, &e0,
		    &e1, false);
	/* the child goes: the parent holds the only swap reference */
	close(self->gate[1]);
	self->gate[1] = -1;
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	self->child = -1;
	/* read faults: each maps a fresh exclusive page writable */
	for (i = 0; i < words; i += ps / 8)
		sum += w[i];
	/* no fault from here on */
	for (i = 0; i < words; i++)
		w[i] = word(i, gen + 1);
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after the writes", s);
	swapin_release(self);
}

TEST_F_TIMEOUT(swapin, read_maps_writable, 300)
{
	RUN_ATTEMPTS(swapin_once, "reader read the old page after the write");
}

/*
 * A lazyfree page (MADV_FREE) that reclaim discards leaves a none PTE: the
 * next fault there maps a new page through do_anonymous_page(), where no
 * write_fault hook runs, and so does a write fault that passed its entry
 * hook just before the discard.  So the module must never defer the flush
 * of a discard.  Pages made read-only and clean as for read_maps_writable,
 * then MADV_FREE; the page-out must offer read-only folios (the readers
 * keep the mm live on their CPUs, so x86 batches) and defer none of them.
 */
static bool lazyfree_once(struct __test_metadata *_metadata,
			  FIXTURE_DATA(swapin) *self, uint64_t *ro, uint64_t *deferred)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, i;
	uint64_t ro0, d0, sum = 0;
	volatile uint64_t *w;
	int ret, st;

	w = swapin_shared(_metadata, self, gen);
	/* through the swap cache: read-only and clean */
	for (i = 0; i < words; i += ps / 8)
		sum += w[i];
	ASSERT_NE((uint64_t)0, sum);
	close(self->gate[1]);
	self->gate[1] = -1;
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	self->child = -1;
	/* the only user again: MADV_FREE drops the swap copy, makes it lazyfree */
	ASSERT_EQ(0, madvise(self->o.map, NPAGES * ps, MADV_FREE));
	self->o.rd = rd_alloc();
	ASSERT_NE(NULL, self->o.rd);
	self->o.rd->mode = RD_CONTENT;
	self->o.rd->old_gen = gen;
	self->o.rd->new_gen = gen + 1;
	ret = luf_rd_start(&self->o.rd->rd, self->o.map, words, NULL, NREADERS);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));
	ASSERT_EQ(0, luf_counter_read(CTR_PATH(reclaim, ro_folios), &ro0));
	ASSERT_EQ(0, luf_counter_read(CTR_PATH(reclaim, deferred), &d0));
	ASSERT_EQ(0, madvise(self->o.map, NPAGES * ps, MADV_PAGEOUT));
	ASSERT_EQ(0, luf_counter_read(CTR_PATH(reclaim, ro_folios), ro));
	ASSERT_EQ(0, luf_counter_read(CTR_PATH(reclaim, deferred), deferred));
	*ro -= ro0;
	*deferred -= d0;
	swapin_release(self);
	return *ro > 0;
}

TEST_F_TIMEOUT(swapin, lazyfree_not_deferred, 300)
{
	uint64_t ro = 0, deferred = 0;
	int try;

	for (try = 1; try <= LUF_TRIES; try++) {
		if (lazyfree_once(_metadata, self, &ro, &deferred) ||
		    _metadata->exit_code)
			break;
	}
	if (_metadata->exit_code)
		return;
	ASSERT_GT(ro, (uint64_t)0)
		TH_LOG("no page-out offered a read-only folio in %d tries: nothing tested",
		       LUF_TRIES);
	ASSERT_EQ((uint64_t)0, deferred)
		TH_LOG("%" PRIu64 " of %" PRIu64 " discarded lazyfree folios deferred",
		       deferred, ro);
	note("%" PRIu64 " read-only lazyfree folios discarded, none deferred (try %d)\n",
	     ro, try);
}

LUF_MAIN(LUF_NEED_MODULE | LUF_QUIET)
