// SPDX-License-Identifier: GPL-2.0
/*
 * luf_reuse: a page a stale translation may still reach is never reused (I1)
 * (the oracles, readers and broken modes: oracle.h).
 *
 *  reuse.<ext4|ext4_migrate|tmpfs_migrate|xfs_large|xfs_large_migrate|
 *	tmpfs_huge_migrate|anon_mthp[_migrate]|anon_thp_migrate|ext4_demote>
 *	.release_then_alloc
 *	(I1; *_demote: memory.reclaim of the test's own memcg with demotion
 *	to node 1 on, MIGRC; xfs_large*: the file is one 16-page folio;
 *	tmpfs_huge_migrate: tmpfs huge=always keeps the 16-page file in one
 *	PMD-sized folio, mapped by PTEs, moved whole and held at PMD order;
 *	anon_mthp: no file but one anonymous 64 KiB mTHP, read-only and
 *	clean after a swap-in from zram, reclaimed into the swap cache;
 *	anon_thp_migrate: one anonymous PMD-sized THP, made clean by
 *	MADV_FREE and mapped read-only by PTEs, moved whole)
 *	echo 0 > enabled (migrc_enabled for *_migrate) from CPU 0 releases
 *	the held pages onto CPU 0's pcp lists; CPU 0 at once fills 64 MiB of
 *	new anonymous memory with POISON (pcp lists are LIFO, so the released
 *	pages come back first).  Oracle: no reader ever reads a word other
 *	than the file's content.  Broken mode 1 releases without the flush;
 *	broken mode 5 holds nothing (the free path's filter misses every
 *	deferral), so the unmap itself frees the pages onto CPU 0's lists,
 *	and CPU 0 writes the POISON into a memfd before the disable: a
 *	disable flushes, and so does a write fault in the test's mm while
 *	its batched unmaps are pending.  tmpfs_huge_migrate frees a
 *	PMD-sized block, which goes to the pcp list of its order: the
 *	POISON comes in THPs there, and mode 5's fill goes into a file of
 *	the huge=always tmpfs.
 *  steal.ext4_to_fuse.splice_move_then_write (I1: a page-cache steal)
 *  split.xfs.split_then_reclaim (I1 for every page of a large folio split
 *	after its deferral; see the fixture)
 *
 * A page can leave the page cache without being freed: splice's
 * page_cache_pipe_buf_try_steal() takes a page-cache page that sits in a
 * pipe out of its file with remove_mapping(), and FUSE does that to a
 * READ reply spliced into /dev/fuse with SPLICE_F_MOVE
 * (fuse_dev_splice_write() -> fuse_copy_page() -> fuse_try_move_page() ->
 * replace_page_cache_folio()): the page becomes a page of the FUSE file,
 * and a write to that file changes it in place.  The free hook never sees
 * it, so only the module's flush at remove_mapping() (the file_change
 * hook at remove_mapping()) keeps the stale entries of the first file from
 * reading the new owner's bytes: broken mode 2.  (The only other
 * pipe_buf_try_steal() caller in 6.12 is virtio_console's pipe_to_sg(),
 * splice to a virtio-serial port: it hands the stolen page to the device,
 * which only reads it, and frees it afterwards, where the free hook holds
 * it back.)
 *
 * The test mounts a FUSE file system of its own (mount(2) with fd=,
 * rootmode=, user_id=, group_id=): a minimal daemon thread on CPU 0 speaks
 * the /dev/fuse protocol directly (INIT, LOOKUP, GETATTR, OPEN, READ,
 * WRITE, FLUSH, RELEASE; ENOSYS for the rest).  Its one file has the size
 * of the ext4 test file.
 *  1. The ext4 test file (generation G) is mapped read-only and shared,
 *     and the readers spin on it.  Its page-cache pages are spliced into a
 *     pipe (the "hold" pipe), whose references keep MADV_PAGEOUT from
 *     freeing them: reclaim unmaps them (deferred), fails in
 *     __remove_mapping() on the extra reference and puts them back on the
 *     LRU, still in ext4's page cache.
 *  2. The readers pause off the mapping (luf_rd_pause()).
 *  3. madvise(MADV_COLD) of a dummy mapping drains CPU 0's LRU batches,
 *     where the putback left a reference of its own: a page is stolen only
 *     when the page cache and the pipe hold the only two.  The dummy page
 *     lies in a 2 MiB block with no page table: where madvise finds a page
 *     table it calls flush_tlb_batched_pending(), which flushes the whole
 *     mm (the deferred unmap counts in mm->tlb_flush_batched).
 *  4. read(2) of the FUSE file: readahead sends one READ for its pages.
 *     The daemon writes the reply header into a second pipe, moves the
 *     ext4 page buffers behind it (pipe to pipe: no copy, no new
 *     reference) and splices the lot into /dev/fuse with SPLICE_F_MOVE.
 *     An ext4 page that nothing else maps or references is stolen into
 *     the FUSE file's page cache.
 *  5. The readers go on; pwrite(2) of generation G+1 to the FUSE file
 *     writes those very pages (fuse_fill_write_pages() finds them in its
 *     page cache); then the test publishes.
 * Oracle: the ext4 file never changed, so a reader of its mapping must
 * never see anything but generation G (old_gen == new_gen; G+1 is
 * foreign content).
 *
 * The test first asserts that the deferral happened (make_deferred()),
 * and then, in a normal run, that the steal did: the FUSE file's pages,
 * mapped after the check, must include at least one at the pfn that the
 * same page of the ext4 file had before the page-out (/proc/self/pagemap;
 * every page, 16 of 16, in the runs so far, normal and broken).  In a
 * broken run the violation itself proves the steal.
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

FIXTURE(reuse) {
	struct oracle o;
	uint64_t *poison;
};

FIXTURE_VARIANT(reuse) {
	int brk;
	const char *dir;	/* NULL: anonymous memory (anon_mthp_map()) */
	enum how how;
	bool large;
	bool thp;	/* anonymous: a PMD-sized THP (anon_thp_map()) */
};

FIXTURE_VARIANT_ADD(reuse, ext4) { .brk = BRK_REUSE, .dir = LUF_EXT4_DIR };
FIXTURE_VARIANT_ADD(reuse, ext4_migrate) { .brk = BRK_REUSE, .dir = LUF_EXT4_DIR, .how = BY_MIGRATION };
FIXTURE_VARIANT_ADD(reuse, tmpfs_migrate) { .brk = BRK_REUSE, .dir = LUF_TMP_DIR, .how = BY_MIGRATION };
FIXTURE_VARIANT_ADD(reuse, xfs_large) { .brk = BRK_REUSE, .dir = LUF_XFS_DIR, .large = true };
FIXTURE_VARIANT_ADD(reuse, xfs_large_migrate) {
	.brk = BRK_REUSE, .dir = LUF_XFS_DIR, .how = BY_MIGRATION, .large = true,
};
FIXTURE_VARIANT_ADD(reuse, tmpfs_huge_migrate) {
	.brk = BRK_REUSE, .dir = LUF_THP_DIR, .how = BY_MIGRATION, .large = true,
};
/*
 * One 64 KiB anonymous mTHP, read-only and clean after a swap-in (zram).
 * arm64 maps it, naturally aligned, with contiguous PTEs, and the unmap
 * unfolds them with a flush of its own (contpte_convert()) right before
 * it clears them: the readers hold no translation the deferred flush
 * would have to take, so there a broken mode shows nothing (ten attempts
 * of each variant in mode 1 never read POISON), while the deferral and
 * the hold are asserted as on x86.
 */
FIXTURE_VARIANT_ADD(reuse, anon_mthp) { .brk = BRK_X86(BRK_REUSE), .large = true };
FIXTURE_VARIANT_ADD(reuse, anon_mthp_migrate) {
	.brk = BRK_X86(BRK_REUSE), .how = BY_MIGRATION, .large = true,
};
/*
 * An anonymous PMD-sized THP is mapped dirty from its first fault on and
 * swap-in never builds one again, so reclaim never finds one clean; and
 * MADV_FREE, which cleans it, makes reclaim discard it, which LUF does
 * not defer (luf_unmap_deferrable()).  Migration of one whose PMD was
 * split into clean read-only PTEs does defer: MIGRC keeps the 2 MiB
 * source, which goes back at PMD order.  On arm64 the split PTEs are
 * contiguous blocks again, unfolded with a flush of their own, as for
 * anon_mthp: ten attempts in broken mode 1 never read POISON.
 */
FIXTURE_VARIANT_ADD(reuse, anon_thp_migrate) {
	.brk = BRK_X86(BRK_REUSE), .how = BY_MIGRATION, .large = true, .thp = true,
};
/*
 * Demotion needs a lower memory tier: the x86 guest's node 1 (HMAT); an
 * arm64 device-tree boot has none, so there the test skips, and it is no
 * test of broken mode 1 there.
 */
FIXTURE_VARIANT_ADD(reuse, ext4_demote) {
	.brk = BRK_X86(BRK_REUSE), .dir = LUF_EXT4_DIR, .how = BY_DEMOTION,
};

#define POISON_LEN	(64UL << 20)
#define FILL_CHUNK	(64UL << 10)	/* broken mode 5: pwrite() size */

static void reuse_release(FIXTURE_DATA(reuse) *self)
{
	oracle_release(&self->o);
	if (self->poison)
		munmap(self->poison, POISON_LEN);
	self->poison = NULL;
}

FIXTURE_SETUP(reuse)
{
	self->poison = NULL;
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, variant->how,
		     (variant->large ? NEED_LARGE : 0) | (variant->thp ? NEED_THP : 0) |
		     (variant->dir || variant->thp ? 0 : NEED_MTHP));
}

FIXTURE_TEARDOWN(reuse)
{
	reuse_release(self);
	oracle_teardown(_metadata, &self->o);
}

/*
 * Charge the page cache of @f to g_cg: drop it, then read it back from a
 * child that runs in g_cg and exits.  0 or -errno.
 */
static int tfile_charge_cg(struct luf_file *f)
{
	int st = luf_file_evict(f);
	off_t off;
	pid_t pid;
	char c;

	if (st)
		return st;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (memcg_enter(g_cg))
			_exit(1);
		for (off = 0; off < (off_t)f->size; off += ps)
			if (pread(f->fd, &c, 1, off) != 1)
				_exit(2);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
}

static void reuse_once(struct __test_metadata *_metadata,
		       FIXTURE_DATA(reuse) *self,
		       const FIXTURE_VARIANT(reuse) *variant, struct rd_sum *s)
{
	const char *knob = variant->how == BY_PAGEOUT ? KNOB(enabled) : KNOB(migrc_enabled);
	bool pmd = variant->thp || (variant->dir && !strcmp(variant->dir, LUF_THP_DIR));
	bool unheld = luf_env()->brk == BRK_FILTER;
	unsigned int gen = first_gen();
	struct luf_ev e0, e1, e2;
	int ret, mfd = -1;
	size_t i, off;
	uint64_t *p;

	/* on again: the previous attempt switched it off to release */
	ASSERT_EQ(0, luf_knob_write(knob, "1"));
	if (variant->thp) {
		anon_thp_map(_metadata, &self->o, gen);
	} else if (!variant->dir) {
		anon_mthp_map(_metadata, &self->o, gen);
	} else {
		ret = tfile_create(&self->o.f, variant->dir, "reuse", NPAGES, gen);
		ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
		if (variant->how == BY_DEMOTION) {
			ret = tfile_charge_cg(&self->o.f);
			ASSERT_EQ(0, ret) TH_LOG("charging the file to %s: %s", g_cg,
						 strerror(-ret));
		}
		self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
		ASSERT_NE(NULL, self->o.map);
	}
	self->o.rd = rd_alloc();
	ASSERT_NE(NULL, self->o.rd);
	self->o.rd->mode = RD_CONTENT;
	self->o.rd->old_gen = self->o.rd->new_gen = gen;
	prefault_all();
	/* after prefault_all(): it must stay unpopulated until the release */
	p = mmap(NULL, POISON_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	self->poison = p;
	/*
	 * Order-0 pages from the pcp lists, not THPs from the buddy; but a
	 * PMD-sized block goes to the pcp list of its own order, where only
	 * a THP takes it.
	 */
	ASSERT_EQ(0, madvise(p, POISON_LEN, pmd ? MADV_HUGEPAGE : MADV_NOHUGEPAGE));
	if (unheld) {
		/* the source of broken mode 5's fill, written before the window */
		for (i = 0; i < FILL_CHUNK / 8; i++)
			p[i] = POISON;
		/* PMD-sized: a huge=always tmpfs file, else a memfd */
		mfd = pmd ? open(luf_path(LUF_THP_DIR), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) :
			    memfd_create("luf_poison", MFD_CLOEXEC);
		ASSERT_LE(0, mfd) TH_LOG("fill file: %s", strerror(errno));
	}
	open_window(_metadata, self->o.rd, self->o.map, self->o.f.size,
		    variant->how, &e0, &e1, !unheld);
	if (!unheld) {
		/* from CPU 0: everything held goes to CPU 0's pcp lists at once */
		ASSERT_EQ(0, luf_knob_write(knob, "0"));
		for (; p < self->poison + POISON_LEN / 8; p++)
			*p = POISON;
	} else {
		/*
		 * Broken mode 5 holds nothing: the unmap on CPU 0 freed the
		 * pages onto CPU 0's lists already.  Disabling would flush,
		 * and so would the first write fault in this mm (its pending
		 * batched unmaps, mm_flushes): fill a memfd's page cache.
		 */
		for (off = 0; off < POISON_LEN; off += FILL_CHUNK)
			if (pwrite(mfd, p, FILL_CHUNK, off) != (ssize_t)FILL_CHUNK)
				break;
	}
	oracle_check(_metadata, self->o.rd, &e0, &e1, &e2, "after release", s);
	note("readers: %" PRIu64 " words not of the file, %" PRIu64
		       " of them POISON\n", s->corrupt, s->poison);
	if (unheld) {
		ASSERT_EQ(POISON_LEN, off) TH_LOG("memfd: %s", strerror(errno));
		close(mfd);
		ASSERT_EQ(0, luf_knob_write(knob, "0"));
	}
	ASSERT_EQ((uint64_t)0, e2.held) TH_LOG("disabling left pages held");
	if (!unheld)
		ASSERT_GT(e2.released, e0.released) TH_LOG("nothing was released");
	reuse_release(self);
}

TEST_F_TIMEOUT(reuse, release_then_alloc, 300)
{
	RUN_ATTEMPTS(reuse_once, "reader read reused memory");
}

/* ---- b. reclaim then write ----------------------------------------- */

#include <linux/fuse.h>
#include <sys/mount.h>

#define STEAL_NAME	"data"
#define STEAL_INO	2
/* a moved page-cache page needs a whole pipe buffer: room for every page */
#define STEAL_PIPE_SZ	(2 * NPAGES * ps)
/* holds an aligned 2 MiB block (a PMD on x86 and 4K-page arm64) */
#define STEAL_DRAIN_LEN	(4UL << 20)

/*
 * Splice the first @size bytes of @fd into the pipe @pipe_w, so that the
 * pipe holds references to its page-cache pages.  0 or -errno (-EIO at
 * an early end of file).
 */
static int splice_file(int fd, int pipe_w, size_t size)
{
	size_t done;
	ssize_t n;
	loff_t off;

	for (done = 0; done < size; done += n) {
		off = done;
		n = splice(fd, &off, pipe_w, NULL, size - done, 0);
		if (n <= 0)
			return n ? -errno : -EIO;
	}
	return 0;
}

/*
 * An address whose MADV_COLD only drains this CPU's LRU batches: in an
 * aligned 2 MiB block of *@region, which is never populated, so madvise
 * finds no page table there to flush.  NULL if mmap() fails.
 */
static void *drain_map(void **region)
{
	*region = mmap(NULL, STEAL_DRAIN_LEN, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (*region == MAP_FAILED) {
		*region = NULL;
		return NULL;
	}
	return (void *)(((uintptr_t)*region + STEAL_DRAIN_LEN / 2 - 1) &
			~(uintptr_t)(STEAL_DRAIN_LEN / 2 - 1));
}

/* The daemon's state; anonymous memory written before the window. */
struct steal_fs {
	int fd;			/* /dev/fuse */
	int ext4_fd;		/* the test file, for copied replies */
	int hold[2];		/* pipe: ext4 pages from hold_off on */
	int reply[2];		/* pipe: reply header + moved pages */
	size_t size;		/* of both files */
	size_t max_write;
	size_t hold_off, hold_end;	/* what is left in hold[] */
	pthread_t th;
	bool running;
	atomic_int inited;
	/* counters, read after the window */
	uint64_t reads, writes, piped_pages, copied_pages, written;
	int err, err_op;	/* first error and the opcode it happened on */
	char *req;		/* request buffer */
	size_t req_len;
	char *data;		/* copied READ replies */
};

FIXTURE(steal) {
	struct oracle o;
	struct steal_fs *d;
	char mnt[128];
	bool mkdir_done, mounted;
	int file_fd;
	void *fuse_map;
	void *drain;
	uint64_t *wbuf, *rbuf;
};

/* brk first, as in every fixture with variants (broken_argv()) */
FIXTURE_VARIANT(steal) {
	int brk;
};

FIXTURE_VARIANT_ADD(steal, ext4_to_fuse) { .brk = BRK_WRITE };

static void steal_err(struct steal_fs *d, int err, unsigned int op)
{
	if (!d->err) {
		d->err = err;
		d->err_op = (int)op;
	}
}

static void steal_attr(const struct steal_fs *d, uint64_t ino,
		       struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = ino == FUSE_ROOT_ID ? 2 : 1;
	a->mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0644;
	a->size = ino == FUSE_ROOT_ID ? 0 : d->size;
	a->blocks = a->size / 512;
	a->blksize = ps;
}

/* A reply: the header and @len bytes of @arg; 0 or -errno. */
static int steal_reply(struct steal_fs *d, uint64_t unique, int error,
		       const void *arg, size_t len)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh) + len, .error = error, .unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &oh, .iov_len = sizeof(oh) },
		{ .iov_base = (void *)arg, .iov_len = len },
	};
	ssize_t n = writev(d->fd, iov, len ? 2 : 1);

	if (n == (ssize_t)oh.len)
		return 0;
	return n < 0 ? -errno : -EIO;
}

/* Empty the reply pipe after a failed splice */
static void steal_drain_reply(struct steal_fs *d)
{
	int flags = fcntl(d->reply[0], F_GETFL);

	fcntl(d->reply[0], F_SETFL, flags | O_NONBLOCK);
	while (read(d->reply[0], d->data, d->size) > 0)
		;
	fcntl(d->reply[0], F_SETFL, flags);
}

/*
 * Answer READ (@off, @len) with the ext4 pages waiting in the hold pipe:
 * header into the reply pipe, the page buffers moved in behind it, then
 * all of it into /dev/fuse with SPLICE_F_MOVE.  0 or -errno.
 */
static int steal_read_move(struct steal_fs *d, uint64_t unique, size_t len)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh) + len, .error = 0, .unique = unique,
	};
	size_t moved = 0;
	ssize_t n;

	if (write(d->reply[1], &oh, sizeof(oh)) != (ssize_t)sizeof(oh))
		return errno ? -errno : -EIO;
	while (moved < len) {
		n = splice(d->hold[0], NULL, d->reply[1], NULL, len - moved, 0);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		moved += n;
	}
	d->hold_off += len;
	n = splice(d->reply[0], NULL, d->fd, NULL, oh.len, SPLICE_F_MOVE);
	if (n != (ssize_t)oh.len)
		return n < 0 ? -errno : -EIO;
	return 0;
}

static void steal_do_read(struct steal_fs *d, const struct fuse_in_header *ih,
			  const struct fuse_read_in *in)
{
	size_t off = in->offset, len = in->size;
	ssize_t n;
	int err;

	d->reads++;
	len = off >= d->size ? 0 : len < d->size - off ? len : d->size - off;
	if (len && off == d->hold_off && off + len <= d->hold_end &&
	    !(len % ps)) {
		err = steal_read_move(d, ih->unique, len);
		if (!err) {
			d->piped_pages += len / ps;
			return;
		}
		steal_err(d, err, ih->opcode);
		steal_drain_reply(d);
		steal_reply(d, ih->unique, -EIO, NULL, 0);
		return;
	}
	/* anything else: copy the ext4 file's content */
	n = len ? pread(d->ext4_fd, d->data, len, off) : 0;
	if (n < 0) {
		steal_err(d, -errno, ih->opcode);
		steal_reply(d, ih->unique, -EIO, NULL, 0);
		return;
	}
	d->copied_pages += (n + ps - 1) / ps;
	err = steal_reply(d, ih->unique, 0, d->data, n);
	if (err)
		steal_err(d, err, ih->opcode);
}

static void steal_handle(struct steal_fs *d, size_t n)
{
	const struct fuse_in_header *ih = (const void *)d->req;
	const void *arg = d->req + sizeof(*ih);
	union {
		struct fuse_init_out init;
		struct fuse_entry_out entry;
		struct fuse_attr_out attr;
		struct fuse_open_out open;
		struct fuse_write_out write;
	} out;
	size_t len = 0;
	int error = 0, err;

	memset(&out, 0, sizeof(out));
	if (n < sizeof(*ih) || ih->len != n) {
		steal_err(d, -EPROTO, n >= sizeof(*ih) ? ih->opcode : 0);
		return;
	}
	switch (ih->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *in = arg;

		out.init.major = FUSE_KERNEL_VERSION;
		out.init.minor = FUSE_KERNEL_MINOR_VERSION;
		if (in->major != FUSE_KERNEL_VERSION) {
			steal_err(d, -EPROTO, ih->opcode);
			error = -EPROTO;
			break;
		}
		out.init.max_readahead = in->max_readahead;
		/*
		 * SPLICE_* only tell the daemon what the kernel supports:
		 * what moves a page is SPLICE_F_MOVE on the splice itself.
		 */
		out.init.flags = FUSE_BIG_WRITES | FUSE_MAX_PAGES;
		out.init.flags |= in->flags & (FUSE_SPLICE_WRITE |
					       FUSE_SPLICE_MOVE);
		out.init.max_write = d->max_write;
		out.init.max_pages = d->max_write / ps;
		out.init.max_background = 16;
		out.init.congestion_threshold = 12;
		out.init.time_gran = 1;
		len = sizeof(out.init);
		atomic_store(&d->inited, 1);
		break;
	}
	case FUSE_LOOKUP:
		if (ih->nodeid != FUSE_ROOT_ID || strcmp(arg, STEAL_NAME)) {
			error = -ENOENT;
			break;
		}
		out.entry.nodeid = STEAL_INO;
		out.entry.generation = 1;
		out.entry.entry_valid = 3600;
		out.entry.attr_valid = 3600;
		steal_attr(d, STEAL_INO, &out.entry.attr);
		len = sizeof(out.entry);
		break;
	case FUSE_GETATTR:
		if (ih->nodeid != FUSE_ROOT_ID && ih->nodeid != STEAL_INO) {
			error = -ENOENT;
			break;
		}
		out.attr.attr_valid = 3600;
		steal_attr(d, ih->nodeid, &out.attr.attr);
		len = sizeof(out.attr);
		break;
	case FUSE_OPEN:
		/* page cache kept across opens, never direct I/O */
		out.open.fh = 1;
		out.open.open_flags = FOPEN_KEEP_CACHE;
		len = sizeof(out.open);
		break;
	case FUSE_READ:
		steal_do_read(d, ih, arg);
		return;
	case FUSE_WRITE: {
		const struct fuse_write_in *in = arg;

		d->writes++;
		d->written += in->size;
		out.write.size = in->size;
		len = sizeof(out.write);
		break;
	}
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_DESTROY:
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return;		/* no reply */
	default:
		error = -ENOSYS;
		break;
	}
	err = steal_reply(d, ih->unique, error, &out, error ? 0 : len);
	if (err)
		steal_err(d, err, ih->opcode);
}

/* The daemon: until the connection goes (umount, abort) */
static void *steal_daemon(void *arg)
{
	struct steal_fs *d = arg;
	ssize_t n;

	/* CPU 0 like the main thread; nothing of it may fault later */
	pin_to_cpu(0);
	luf_prefault_stack(64 << 10);
	for (;;) {
		n = read(d->fd, d->req, d->req_len);
		if (n < 0) {
			if (errno == EINTR || errno == ENOENT ||
			    errno == EAGAIN)
				continue;
			if (errno != ENODEV)
				steal_err(d, -errno, 0);
			break;
		}
		steal_handle(d, n);
	}
	return NULL;
}

static struct steal_fs *steal_fs_alloc(size_t size)
{
	size_t max_write = size, req_len = max_write + 2 * ps;
	size_t len = sizeof(struct steal_fs) + req_len + size;
	struct steal_fs *d;

	d = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED)
		return NULL;
	memset(d, 0, len);
	d->fd = d->ext4_fd = -1;
	d->hold[0] = d->hold[1] = d->reply[0] = d->reply[1] = -1;
	d->size = size;
	d->max_write = max_write;
	d->req = (char *)(d + 1);
	d->req_len = req_len;
	d->data = d->req + req_len;
	return d;
}

static size_t steal_fs_len(const struct steal_fs *d)
{
	return sizeof(*d) + d->req_len + d->size;
}

static void steal_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * The readers of this test: rd_fn() in RD_CONTENT mode with old_gen ==
 * new_gen (every word must be generation G), paused (luf_rd_pause()) while the
 * pages are stolen: a reader that read on would fault right after the
 * module's flush at the first steal and map the ext4 pages that are still
 * in its page cache, and a mapped page is never stolen (__remove_mapping()
 * fails on the reference and the reply copies it instead), so a normal run
 * could steal nothing.  Paused, every page can be stolen in a normal run
 * as in a broken one.
 */

/*
 * Undo one attempt: readers, the FUSE file, the mount (aborting the
 * connection first, so that nothing waits for the daemon), the daemon,
 * pipes, buffers, the ext4 file.  Fine to call again.
 */
static void steal_release(FIXTURE_DATA(steal) *self)
{
	struct steal_fs *d = self->d;
	size_t size = self->o.f.size;

	if (self->o.rd) {
		luf_rd_resume(&self->o.rd->rd);
		luf_rd_stop(&self->o.rd->rd);
	}
	if (self->fuse_map)
		munmap(self->fuse_map, size);
	self->fuse_map = NULL;
	if (self->mounted) {
		/* MNT_FORCE aborts the connection: FLUSH waits for nobody */
		umount2(self->mnt, MNT_FORCE);
		steal_close(&self->file_fd);
		if (umount2(self->mnt, 0))
			umount2(self->mnt, MNT_DETACH);
		self->mounted = false;
	}
	steal_close(&self->file_fd);
	if (d) {
		if (d->running)
			pthread_join(d->th, NULL);
		d->running = false;
		steal_close(&d->fd);
		steal_close(&d->hold[0]);
		steal_close(&d->hold[1]);
		steal_close(&d->reply[0]);
		steal_close(&d->reply[1]);
		munmap(d, steal_fs_len(d));
	}
	self->d = NULL;
	if (self->wbuf)
		munmap(self->wbuf, size);
	if (self->rbuf)
		munmap(self->rbuf, size);
	self->wbuf = self->rbuf = NULL;
	if (self->drain)
		munmap(self->drain, STEAL_DRAIN_LEN);
	self->drain = NULL;
	oracle_release(&self->o);
}

FIXTURE_SETUP(steal)
{
	self->d = NULL;
	self->mkdir_done = self->mounted = false;
	self->file_fd = -1;
	self->fuse_map = self->drain = NULL;
	self->wbuf = self->rbuf = NULL;
	oracle_setup(_metadata, &self->o, variant->brk, LUF_EXT4_DIR, BY_PAGEOUT, 0);
	if (_metadata->exit_code)
		return;
	/* configs/<arch>.config has CONFIG_FUSE_FS=y: no skip without it */
	ASSERT_TRUE(path_exists("/dev/fuse"))
		TH_LOG("no /dev/fuse: a kernel without CONFIG_FUSE_FS");
	REQUIRE_DIR(LUF_TMP_DIR);
	snprintf(self->mnt, sizeof(self->mnt), "%s/luf-steal-%d", luf_path(LUF_TMP_DIR),
		 getpid());
	ASSERT_EQ(0, mkdir(self->mnt, 0755))
		TH_LOG("mkdir %s: %s", self->mnt, strerror(errno));
	self->mkdir_done = true;
}

FIXTURE_TEARDOWN(steal)
{
	steal_release(self);
	if (self->mkdir_done)
		rmdir(self->mnt);
	oracle_teardown(_metadata, &self->o);
}

/* Mount the FUSE file system, start its daemon, open its file */
static void steal_mount(struct __test_metadata *_metadata,
			FIXTURE_DATA(steal) *self)
{
	struct steal_fs *d = self->d;
	char opts[128], path[160];
	int err;

	d->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, d->fd) TH_LOG("/dev/fuse: %s", strerror(errno));
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=%o,user_id=%u,group_id=%u",
		 d->fd, S_IFDIR, getuid(), getgid());
	ASSERT_EQ(0, mount("luf-steal", self->mnt, "fuse", MS_NOSUID | MS_NODEV,
			   opts))
		TH_LOG("mount -t fuse -o %s %s: %s", opts, self->mnt,
		       strerror(errno));
	self->mounted = true;
	/* /dev/fuse reads fail until the mount: the daemon starts now */
	err = pthread_create(&d->th, NULL, steal_daemon, d);
	ASSERT_EQ(0, err) TH_LOG("daemon thread: %s", strerror(err));
	d->running = true;
	snprintf(path, sizeof(path), "%s/%s", self->mnt, STEAL_NAME);
	self->file_fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->file_fd) {
		TH_LOG("open %s: %s (daemon: error %d on opcode %d)", path,
		       strerror(errno), d->err, d->err_op);
	}
	ASSERT_TRUE(atomic_load(&d->inited));
}

/*
 * One attempt; sets *@stolen to the pages of the ext4 file that are now
 * pages of the FUSE file.
 */
static void steal_try(struct __test_metadata *_metadata,
		      FIXTURE_DATA(steal) *self, struct rd_sum *s,
		      unsigned int *stolen)
{
	unsigned int gen = first_gen();
	size_t words = NPAGES * ps / 8, size, i;
	uint64_t pfn_ext4[NPAGES], pfn_fuse[NPAGES];
	volatile uint64_t *fm;
	struct luf_ev e0, e1, e2;
	void *drain;
	struct steal_fs *d;
	struct rd_ctl *rd;
	ssize_t nread, nwritten;
	int ret, rerr, werr;

	*stolen = 0;
	ret = tfile_create(&self->o.f, LUF_EXT4_DIR, "steal", NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	size = self->o.f.size;
	self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->o.map);
	self->wbuf = anon_buf(size);
	self->rbuf = anon_buf(size);
	ASSERT_NE(NULL, self->wbuf);
	ASSERT_NE(NULL, self->rbuf);
	for (i = 0; i < words; i++)
		self->wbuf[i] = word(i, gen + 1);
	drain = drain_map(&self->drain);
	ASSERT_NE(NULL, drain);

	d = self->d = steal_fs_alloc(size);
	ASSERT_NE(NULL, d);
	d->ext4_fd = self->o.f.fd;
	ASSERT_EQ(0, pipe2(d->hold, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(d->reply, O_CLOEXEC));
	ASSERT_LE((ssize_t)STEAL_PIPE_SZ,
		  fcntl(d->hold[1], F_SETPIPE_SZ, (int)STEAL_PIPE_SZ));
	ASSERT_LE((ssize_t)STEAL_PIPE_SZ,
		  fcntl(d->reply[1], F_SETPIPE_SZ, (int)STEAL_PIPE_SZ));
	prefault_all();
	steal_mount(_metadata, self);

	/* the ext4 page-cache pages into the hold pipe, in file order */
	ret = splice_file(self->o.f.fd, d->hold[1], size);
	ASSERT_EQ(0, ret) TH_LOG("splice ext4 -> pipe: %s", strerror(-ret));
	d->hold_off = 0;
	d->hold_end = size;

	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = rd->new_gen = gen;
	ret = luf_rd_start(&rd->rd, self->o.map, words, NULL, NREADERS);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));
	/* the readers mapped every page */
	ret = luf_pagemap_pfns(self->o.map, NPAGES, pfn_ext4);
	ASSERT_EQ(0, ret) TH_LOG("pagemap: %s", strerror(-ret));
	for (i = 0; i < NPAGES; i++)
		ASSERT_NE((uint64_t)0, pfn_ext4[i])
			TH_LOG("page %zu not mapped", i);

	make_deferred(_metadata, BY_PAGEOUT, self->o.map, size, &e0, &e1,
		      false);
	ret = luf_rd_pause(&rd->rd);
	ASSERT_EQ(0, ret) TH_LOG("pausing the readers: %s", strerror(-ret));
	/* the putback's LRU batch reference would fail every steal */
	ASSERT_EQ(0, madvise(drain, ps, MADV_COLD));
	nread = pread(self->file_fd, self->rbuf, size, 0);
	rerr = nread < 0 ? errno : 0;
	/* back to the pages they may still have stale entries to */
	luf_rd_resume(&rd->rd);
	nwritten = pwrite(self->file_fd, self->wbuf, size, 0);
	werr = nwritten < 0 ? errno : 0;
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after the FUSE write", s);
	note("forced_file_change +%" PRIu64 " in the window; daemon: READs %"
	     PRIu64 " (pages moved %" PRIu64 ", copied %" PRIu64 "), WRITEs %"
	     PRIu64 " (%" PRIu64 " bytes), error %d on opcode %d\n",
	     e2.fc - e1.fc, d->reads, d->piped_pages, d->copied_pages,
	     d->writes, d->written, d->err, d->err_op);
	ASSERT_EQ((ssize_t)size, nread)
		TH_LOG("read of the FUSE file: %s",
		       rerr ? strerror(rerr) : "short");
	ASSERT_EQ((ssize_t)size, nwritten)
		TH_LOG("write of the FUSE file: %s",
		       werr ? strerror(werr) : "short");
	ASSERT_EQ(0, d->err) TH_LOG("daemon: %s on opcode %d",
				    strerror(-d->err), d->err_op);
	for (i = 0; i < words; i++)
		ASSERT_EQ(word(i, gen), self->rbuf[i])
			TH_LOG("the FUSE read returned word %zu wrong", i);
	ASSERT_LT((uint64_t)0, d->piped_pages)
		TH_LOG("no READ was answered from the pipe");

	/* the steal: FUSE file pages at the ext4 pages' pfns */
	self->fuse_map = mmap(NULL, size, PROT_READ, MAP_SHARED,
			      self->file_fd, 0);
	ASSERT_NE(MAP_FAILED, self->fuse_map) {
		self->fuse_map = NULL;
	}
	fm = self->fuse_map;
	for (i = 0; i < words; i++)
		ASSERT_EQ(word(i, gen + 1), fm[i])
			TH_LOG("the FUSE file's page cache lost the write at word %zu", i);
	ret = luf_pagemap_pfns(self->fuse_map, NPAGES, pfn_fuse);
	ASSERT_EQ(0, ret) TH_LOG("pagemap: %s", strerror(-ret));
	for (i = 0; i < NPAGES; i++)
		*stolen += pfn_fuse[i] && pfn_fuse[i] == pfn_ext4[i];
	note("%u of %d ext4 pages stolen into the FUSE file (%" PRIu64
	     " offered by splice)\n", *stolen, NPAGES, d->piped_pages);
	steal_release(self);
}

static void steal_once(struct __test_metadata *_metadata,
		       FIXTURE_DATA(steal) *self,
		       const FIXTURE_VARIANT(steal) *variant, struct rd_sum *s)
{
	unsigned int stolen;
	int tries = 0;

	(void)variant;
	/*
	 * Whether splice steals a page or copies it depends on its references
	 * at that moment (a busy host left all 16 copied once): a normal run
	 * tries again, up to LUF_TRIES times, unless a reader already saw
	 * a violation.
	 */
	do {
		steal_try(_metadata, self, s, &stolen);
	} while (!luf_env()->brk && !stolen && !s->stale && !s->corrupt &&
		 !s->bad_fault && ++tries < LUF_TRIES);
	/*
	 * A broken run's attempt without a steal just catches nothing
	 * (RUN_ATTEMPTS makes another): G+1 read through the ext4 mapping
	 * can only come from a stolen page.
	 */
	if (!luf_env()->brk)
		ASSERT_LT(0U, stolen)
			TH_LOG("no page moved from ext4 to the FUSE file: the test would prove nothing");
}

TEST_F_TIMEOUT(steal, splice_move_then_write, 300)
{
	RUN_ATTEMPTS(steal_once, "reader of the ext4 file read the FUSE file's write");
}

/* ---- c. a deferred large folio split, its pieces reclaimed ---------- */

/*
 * split.xfs.split_then_reclaim
 * The XFS test file is one 16-page folio (written with one write(2)),
 * charged to a memcg of the test's own.  A pipe holds references to its
 * pages, so MADV_PAGEOUT defers the unmap but cannot free the folio.  With
 * the pipe closed and CPU 0's LRU batch drained, the split_huge_pages
 * debugfs file splits the folio into order-0 pieces, still pending, and
 * memory.reclaim of the memcg frees them one by one (no unmap: they are
 * not mapped), each of which must be held.  CPU 0 then writes 64 MiB of
 * POISON into a memfd (as broken mode 5 of reuse does: a write fault in
 * this mm would flush its batched unmaps while the deferral is pending).
 * Oracle: no reader ever reads a word other than the file's.  Broken mode
 * 7 keeps only the folio's first page pending, so the other pieces are
 * reused.  split.xfs_order2 splits into 4-page pieces instead, freed and
 * held at order 2, and fills 4 MiB of an XFS file 16 KiB a write(2)
 * instead (order-2 page cache folios take the order-2 free blocks).  The readers pause off the mapping from the
 * page-out until the fill: a reader that refaulted would map the folio
 * again, and the split would unmap it with a flush.  The test asserts
 * that the folio was large, deferred as such, split (/proc/kpageflags
 * shows a compound head at every piece's first page and no other, or no
 * compound page at all for order-0 pieces) and gone from the page cache
 * (mincore()) before the fill, and in a normal run that every piece was
 * held.
 */
#define SPLIT_DEBUGFS		"/sys/kernel/debug/split_huge_pages"
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define SPLIT_FILL_LEN		(4UL << 20)	/* pieces of order > 0 */

FIXTURE(split) {
	struct oracle o;
	int hold[2];
	int mfd;
	void *drain;
	uint64_t *poison;
};

FIXTURE_VARIANT(split) {
	int brk;
	const char *dir;
	unsigned int order;	/* of the pieces */
};

FIXTURE_VARIANT_ADD(split, xfs) { .brk = BRK_TAIL, .dir = LUF_XFS_DIR };
FIXTURE_VARIANT_ADD(split, xfs_order2) {
	.brk = BRK_TAIL, .dir = LUF_XFS_DIR, .order = 2,
};

static void split_release(FIXTURE_DATA(split) *self)
{
	int i;

	oracle_release(&self->o);
	for (i = 0; i < 2; i++) {
		if (self->hold[i] >= 0)
			close(self->hold[i]);
		self->hold[i] = -1;
	}
	if (self->mfd >= 0)
		close(self->mfd);
	self->mfd = -1;
	if (self->poison)
		munmap(self->poison, FILL_CHUNK);
	self->poison = NULL;
	if (self->drain)
		munmap(self->drain, STEAL_DRAIN_LEN);
	self->drain = NULL;
}

FIXTURE_SETUP(split)
{
	char name[64];
	int err;

	self->hold[0] = self->hold[1] = -1;
	self->mfd = -1;
	self->drain = NULL;
	self->poison = NULL;
	oracle_setup(_metadata, &self->o, variant->brk, variant->dir, BY_PAGEOUT,
		     NEED_LARGE);
	if (_metadata->exit_code)
		return;
	if (access(SPLIT_DEBUGFS, W_OK))
		SKIP(return, "no %s (debugfs, THP)", SPLIT_DEBUGFS);
	if (!memcg_available())
		SKIP(return, "no memory controller in " LUF_CGROUP_ROOT);
	snprintf(name, sizeof(name), "luf-split-%d", getpid());
	err = memcg_create(name, g_cg, sizeof(g_cg));
	ASSERT_EQ(0, err) TH_LOG("memcg %s: %s", name, strerror(-err));
	/* the whole process: the test file's page cache is charged to it */
	err = memcg_enter(g_cg);
	ASSERT_EQ(0, err) TH_LOG("entering %s: %s", g_cg, strerror(-err));
	/* a cpuset controller resets the affinity of a task it takes in */
	ASSERT_EQ(0, pin_to_cpu(0));
}

FIXTURE_TEARDOWN(split)
{
	split_release(self);
	oracle_teardown(_metadata, &self->o);	/* g_cg too */
}

/* Page flags of @pfn from /proc/kpageflags; 0 or -errno */
static int kpageflags(uint64_t pfn, uint64_t *flags)
{
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, flags, sizeof(*flags), (off_t)(pfn * sizeof(*flags)));
	close(fd);
	if (n < 0)
		return -errno;
	return n == sizeof(*flags) ? 0 : -EIO;
}

/* Pages of the @len bytes at @map in the page cache (all if unknown) */
static size_t resident(void *map, size_t len)
{
	unsigned char vec[NPAGES];
	size_t i, n = 0;

	if (mincore(map, len, vec))
		return len / ps;
	for (i = 0; i < len / ps; i++)
		n += vec[i] & 1;
	return n;
}

static void split_once(struct __test_metadata *_metadata,
		       FIXTURE_DATA(split) *self,
		       const FIXTURE_VARIANT(split) *variant, struct rd_sum *s)
{
	unsigned int gen = first_gen(), compound = 0;
	uint64_t pfns[NPAGES], fl, head_fl = 0;
	char cmd[sizeof(self->o.f.path) + 32];
	struct luf_ev e0, e1, e2, e3;
	size_t size, left, off, i, chunk = variant->order ? ps << variant->order :
						      FILL_CHUNK;
	size_t fill_len = variant->order ? SPLIT_FILL_LEN : POISON_LEN;
	struct rd_ctl *rd;
	void *drain;
	uint64_t *p;
	ssize_t ret;
	int tries;

	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "1"));
	ret = tfile_create(&self->o.f, variant->dir, "split", NPAGES, gen);
	ASSERT_EQ(0, ret) TH_LOG("test file: %s", strerror(-ret));
	size = self->o.f.size;
	self->o.map = map_file(&self->o.f, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, self->o.map);
	drain = drain_map(&self->drain);
	ASSERT_NE(NULL, drain);
	/* the fill's source, written now: no write fault in the window */
	p = anon_buf(FILL_CHUNK);
	ASSERT_NE(NULL, p);
	self->poison = p;
	ASSERT_EQ(0, pipe2(self->hold, O_CLOEXEC));
	ASSERT_LE((ssize_t)STEAL_PIPE_SZ,
		  fcntl(self->hold[1], F_SETPIPE_SZ, (int)STEAL_PIPE_SZ));
	for (i = 0; i < FILL_CHUNK / 8; i++)
		p[i] = POISON;
	if (!variant->order) {
		self->mfd = memfd_create("luf_poison", MFD_CLOEXEC);
	} else {
		snprintf(cmd, sizeof(cmd), "%s/luf-split-fill-%d",
			 luf_path(variant->dir), getpid());
		self->mfd = open(cmd, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (self->mfd >= 0)
			unlink(cmd);
	}
	ASSERT_LE(0, self->mfd) TH_LOG("fill file: %s", strerror(errno));
	prefault_all();
	/* references that keep reclaim from freeing the folio */
	ret = splice_file(self->o.f.fd, self->hold[1], size);
	ASSERT_EQ(0, ret) TH_LOG("splice xfs -> pipe: %s", strerror(-ret));

	rd = self->o.rd = rd_alloc();
	ASSERT_NE(NULL, rd);
	rd->mode = RD_CONTENT;
	rd->old_gen = rd->new_gen = gen;
	ret = luf_rd_start(&rd->rd, self->o.map, size / 8, NULL, NREADERS);
	ASSERT_EQ(0, ret) TH_LOG("readers: %s", strerror(-ret));
	ret = luf_pagemap_pfns(self->o.map, NPAGES, pfns);
	ASSERT_EQ(0, ret) TH_LOG("pagemap: %s", strerror(-ret));
	ASSERT_EQ(0, kpageflags(pfns[0], &head_fl));
	make_deferred(_metadata, BY_PAGEOUT, self->o.map, size, &e0, &e1,
		      false);
	ret = luf_rd_pause(&rd->rd);
	ASSERT_EQ(0, ret) TH_LOG("pausing the readers: %s", strerror(-ret));
	close(self->hold[0]);
	close(self->hold[1]);
	self->hold[0] = self->hold[1] = -1;
	/* the putback's LRU batch reference would fail the split */
	ASSERT_EQ(0, madvise(drain, ps, MADV_COLD));
	snprintf(cmd, sizeof(cmd), "%s,0x0,0x%x,%u", self->o.f.path, NPAGES,
		 variant->order);
	ret = write_file_str(SPLIT_DEBUGFS, cmd);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", SPLIT_DEBUGFS, strerror(-ret));
	/* pages whose compound state is not that of a piece of the order */
	for (i = 0; i < NPAGES; i++) {
		bool head = variant->order && !(i & ((1U << variant->order) - 1));

		ASSERT_EQ(0, kpageflags(pfns[i], &fl));
		if (!variant->order)
			compound += !!(fl & (1ULL << KPF_COMPOUND_HEAD |
					     1ULL << KPF_COMPOUND_TAIL));
		else
			compound += !!(fl & (1ULL << KPF_COMPOUND_HEAD)) != head;
	}
	/*
	 * The pieces are not mapped: reclaim frees them without an unmap.
	 * Ask for no more than the file: memory.reclaim drains the LRU
	 * batches of every CPU before it gives up (lru_add_drain_all()),
	 * and the worker that does it on a reader's CPU flushes its TLB.
	 */
	snprintf(cmd, sizeof(cmd), "%zu", size);
	for (tries = 0; resident(self->o.map, size) && tries < LUF_TRIES;
	     tries++) {
		ret = memcg_write(g_cg, "memory.reclaim", cmd);
		ASSERT_TRUE(!ret || ret == -EAGAIN)
			TH_LOG("memory.reclaim: %s", strerror(-ret));
	}
	/* before the readers go on: they read the file back in */
	left = resident(self->o.map, size);
	ASSERT_EQ(0, luf_ev_read(&e3));
	/*
	 * No write fault here: with the folio's deferral still pending, it
	 * would flush this mm's batched unmaps (LUF_SCOPE_MM), the readers'
	 * stale entries with them.  The POISON goes into a memfd's page
	 * cache from a buffer written before the window; for pieces of a
	 * higher order into a file of the same file system, a piece's size a
	 * write(2), so that its page cache takes blocks of that order.
	 */
	for (off = 0; off < fill_len; off += chunk)
		if (pwrite(self->mfd, p, chunk, off) != (ssize_t)chunk)
			break;
	luf_rd_resume(&rd->rd);
	oracle_check(_metadata, rd, &e0, &e1, &e2, "after reclaim and reuse", s);
	ASSERT_EQ(fill_len, off) TH_LOG("fill: %s", strerror(errno));
	ASSERT_NE((uint64_t)0, head_fl & (1ULL << KPF_COMPOUND_HEAD))
		TH_LOG("the test file is not one large folio: the test would prove nothing");
	ASSERT_EQ(0U, compound)
		TH_LOG("%u pages not split as asked: the folio was not split", compound);
	ASSERT_EQ((size_t)0, left)
		TH_LOG("%zu pages of the split folio stayed in the page cache", left);
	if (!luf_env()->brk)
		ASSERT_LE((uint64_t)NPAGES, e3.held - e1.held)
			TH_LOG("only %" PRIu64 " pages held after the pieces were freed",
			       e3.held - e1.held);
	ASSERT_EQ(0, luf_knob_write(KNOB(enabled), "0"));
	split_release(self);
}

TEST_F_TIMEOUT(split, split_then_reclaim, 300)
{
	RUN_ATTEMPTS(split_once, "reader read a reused piece of a split folio");
}

LUF_MAIN(LUF_NEED_MODULE | LUF_QUIET)
