// SPDX-License-Identifier: GPL-2.0
/*
 * luf_unmap: munmap and mprotect keep their stock semantics (I3)
 * (the oracles, readers and broken modes: oracle.h).
 *
 *  unmap.<mprotect|munmap>[_xfs_large|_tmpfs_huge|_anon_mthp|_anon_thp][_migrate]
 *	.access_faults
 *	(I3)
 *	after the deferral (reclaim, or MIGRC for _migrate),
 *	mprotect(PROT_NONE) of the whole mapping, or
 *	munmap of pages 4-11 in the middle of it (so its page table stays),
 *	then a signal to the readers.  _xfs_large: the file is one 16-page
 *	XFS folio, so munmap takes the middle of a large folio;
 *	_tmpfs_huge: one PMD-sized folio of the huge=always tmpfs, mapped by
 *	PTEs; _anon_mthp: one anonymous 64 KiB mTHP, read-only and clean
 *	after a swap-in (anon_mthp_map()), paged out to zram or migrated;
 *	_anon_thp: one anonymous PMD-sized THP, clean after MADV_FREE and
 *	mapped read-only by PTEs (anon_thp_map()), migrated; its readers
 *	and the munmap stay on its first 16 pages.
 *	Oracle: every access to that range
 *	after the signal faults (SIGSEGV, caught with sigsetjmp/siglongjmp); a
 *	successful read means a stale translation.  The flush here is the
 *	core's (flush_tlb_batched_pending() per mm), not the module's, so
 *	there is no broken mode for it: debug_break cannot remove it.
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

FIXTURE(unmap) {
	struct oracle o;
};

/*
 * No broken mode: what must flush here is the core (mprotect and munmap
 * call flush_tlb_batched_pending() for the mm, because the reclaim or
 * migration unmap counted in mm->tlb_flush_batched), not the module;
 * debug_break has no mode that removes it.
 */
FIXTURE_VARIANT(unmap) {
	int brk;
	bool munmap;
	enum how how;
	bool large;		/* one large folio, not ext4's order 0 */
	const char *dir;	/* with .large: tmpfs huge=always, else XFS */
	bool anon;		/* one anonymous mTHP (anon_mthp_map()) */
	bool thp;		/* with .anon: a PMD-sized THP (anon_thp_map()) */
};

FIXTURE_VARIANT_ADD(unmap, mprotect) { .brk = 0, .munmap = false };
FIXTURE_VARIANT_ADD(unmap, munmap) { .brk = 0, .munmap = true };
FIXTURE_VARIANT_ADD(unmap, mprotect_migrate) { .brk = 0, .munmap = false, .how = BY_MIGRATION };
FIXTURE_VARIANT_ADD(unmap, munmap_migrate) { .brk = 0, .munmap = true, .how = BY_MIGRATION };
FIXTURE_VARIANT_ADD(unmap, munmap_xfs_large) { .brk = 0, .munmap = true, .large = true };
FIXTURE_VARIANT_ADD(unmap, mprotect_xfs_large_migrate) {
	.brk = 0, .munmap = false, .how = BY_MIGRATION, .large = true,
};
/* a PMD-sized folio, mapped by PTEs */
FIXTURE_VARIANT_ADD(unmap, munmap_tmpfs_huge_migrate) {
	.brk = 0, .munmap = true, .how = BY_MIGRATION, .large = true, .dir = LUF_THP_DIR,
};
FIXTURE_VARIANT_ADD(unmap, mprotect_tmpfs_huge_migrate) {
	.brk = 0, .munmap = false, .how = BY_MIGRATION, .large = true, .dir = LUF_THP_DIR,
};
FIXTURE_VARIANT_ADD(unmap, munmap_anon_mthp) {
	.brk = 0, .munmap = true, .large = true, .anon = true,
};
FIXTURE_VARIANT_ADD(unmap, mprotect_anon_mthp_migrate) {
	.brk = 0, .munmap = false, .how = BY_MIGRATION, .large = true, .anon = true,
};
FIXTURE_VARIANT_ADD(unmap, munmap_anon_thp_migrate) {
	.brk = 0, .munmap = true, .how = BY_MIGRATION, .large = true, .anon = true, .thp = true,
};
FIXTURE_VARIANT_ADD(unmap, mprotect_anon_thp_migrate) {
	.brk = 0, .munmap = false, .how = BY_MIGRATION, .large = true, .anon = true, .thp = true,
};

static const char *unmap_dir(const FIXTURE_VARIANT(unmap) *variant)
{
	if (variant->anon)
		return NULL;	/* no file */
	if (variant->dir)
		return variant->dir;
	return variant->large ? LUF_XFS_DIR : LUF_EXT4_DIR;
}

FIXTURE_SETUP(unmap)
{
	oracle_setup(_metadata, &self->o, variant->brk, unmap_dir(variant),
		     variant->how, (variant->large ? NEED_LARGE : 0) |
		     (variant->thp ? NEED_THP : variant->anon ? NEED_MTHP : 0));
}

FIXTURE_TEARDOWN(unmap)
{
	oracle_teardown(_metadata, &self->o);
}

TEST_F_TIMEOUT(unmap, access_faults, 180)
{
	unsigned int gen = first_gen();
	struct outcome o = { 0 };
	struct luf_ev e0, e1, e2;
	struct rd_ctl *rd;
	struct rd_sum s;
	size_t words;
	int ret, err;

	if (variant->thp) {
		anon_thp_map(_metadata, &self->o, gen);
	} else if (variant->anon) {
		anon_mthp_map(_metadata, &self->o, gen);
	} else {
		ret = tfile_create(&self->o.f, unmap_dir(variant), "unmap", NPAGES, gen);
		ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
		self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
		ASSERT_NE(NULL, self->o.map);
	}
	/*
	 * A THP's readers stay on its first NPAGES pages, which the migration
	 * moves with the rest of it: after mprotect() a pass over all 2 MiB
	 * takes 512 faults, too slow under arm64's TCG
	 */
	words = (variant->thp ? NPAGES * ps : self->o.f.size) / 8;
	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_FAULT;
	rd->old_gen = rd->new_gen = gen;
	rd->fault_ok_before = true;
	if (variant->munmap) {
		rd->flo = 4 * ps / 8;
		rd->fhi = 12 * ps / 8;
	} else {
		rd->flo = 0;
		rd->fhi = words;
	}
	prefault_all();
	open_window(_metadata, rd, self->o.map, words * 8, variant->how,
		    &e0, &e1, false);
	if (variant->munmap)
		ret = munmap((char *)self->o.map + 4 * ps, 8 * ps);
	else
		ret = mprotect(self->o.map, self->o.f.size, PROT_NONE);
	err = errno;
	/* nothing may be mapped into the hole while the readers look at it */
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after the call", &s);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", variant->munmap ? "munmap" : "mprotect",
				 strerror(err));
	/* every reader must really have tried the range after the signal */
	ASSERT_GE(s.post_faults, (uint64_t)NREADERS) TH_LOG("readers did not fault");
	attempt_done(&o, 0, s.read_after + s.corrupt, s.bad_fault);
	verdict(_metadata, &o, "read through a stale translation after the call");
}

/* ---- d. write upgrade (COW of a never-written private mapping) ----- */

LUF_MAIN(LUF_NEED_MODULE | LUF_QUIET)
