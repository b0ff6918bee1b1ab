// SPDX-License-Identifier: GPL-2.0
/*
 * luf_notifier_test: test-only recorder of secondary-TLB invalidations.
 *
 * A device that shares a process address space (SMMU SVA) caches
 * translations in its own TLB, which the core invalidates through
 * mmu_notifier_arch_invalidate_secondary_tlbs().  LUF may defer the CPU
 * TLB flush of a read-only unmap, but never this one: the device must hear
 * of every unmapped page before the page can be reused (invariant I4b).
 * This module stands in for such a device.  It registers an mmu_notifier
 * with only .arch_invalidate_secondary_tlbs on the mm of the task that
 * asks for it and records every range it is told about, so that a
 * selftest can check that each page whose unmap was deferred was reported
 * while the page was still held back.
 *
 * /sys/kernel/debug/luf_notifier_test/ctl (root only):
 *   write "start"  register on the writer's mm and forget earlier records
 *                  (-EBUSY if already registered)
 *   write "stop"   unregister (-EINVAL if not registered)
 *   read           "active <0|1>", "calls <n>", "dropped <n>",
 *                  "ranges <n>", then one "<start> <end>" line (hex,
 *                  [start, end)) per recorded range, oldest first.  A call
 *                  with the same range as the one recorded last is only
 *                  counted in calls; a call that finds the table full is
 *                  counted in dropped.  Full-range calls (x86 sends
 *                  0..ffffffffffffffff) are recorded as they come.
 * Anything else written fails with -EINVAL.  Unloading unregisters.
 *
 * /sys/kernel/debug/luf_notifier_test/contig (root only) holds a page's
 * migration in a contiguous allocation, so that a test can act while the
 * allocation's pageblocks are isolated:
 *   write "<pfn>"  alloc_contig_range() of the pageblock of <pfn> (hex or
 *                  decimal), freed again at once; the first blockable
 *                  invalidation of the writer's mm that it causes (the
 *                  migration of a page mapped there) waits until "resume"
 *                  (at most 30 s).  Fails with the allocation's error.
 *   write "wait"   wait (at most 30 s, else -ETIMEDOUT) until an
 *                  allocation waits; -ESRCH if it ended without waiting
 *   write "resume" let it go on
 *   read           "pauses <n>": allocations that waited
 *
 * /sys/kernel/debug/luf_notifier_test/atomic (root only) measures what
 * GFP_ATOMIC allocations get, as an interrupt handler's would:
 *   write "<ms> <burst>"  for <ms> milliseconds (1-600000), about once a
 *                  millisecond, allocate up to <burst> (1-65536) order-0
 *                  pages with GFP_ATOMIC, stop at the first failure and
 *                  free them again
 *   write "fill <n>"  allocate <n> pages that may reclaim (GFP_HIGHUSER,
 *                  no retries) and keep them, as memory pressure; "fill 0"
 *                  frees them
 *   read           "bursts <n>", "failed_bursts <n>", "pages <n>" of the
 *                  last run, "filled <n>"
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/hugetlb.h>
#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define LNT_MAX_RANGES	1024

struct lnt_range {
	unsigned long start;
	unsigned long end;
};

/* Serialises start, stop and reads */
static DEFINE_MUTEX(lnt_lock);
/* Serialises recording; taken by the notifier in any context */
static DEFINE_SPINLOCK(lnt_rec_lock);
static struct mmu_notifier lnt_mn;
static bool lnt_active;
/*
 * Entries below lnt_nr never change while the notifier is registered:
 * readers load lnt_nr with acquire and read them without lnt_rec_lock.
 */
static unsigned int lnt_nr;
static unsigned long lnt_calls, lnt_dropped;
static struct lnt_range lnt_ranges[LNT_MAX_RANGES];
static struct dentry *lnt_dir;

static void lnt_invalidate_secondary_tlbs(struct mmu_notifier *mn,
					  struct mm_struct *mm,
					  unsigned long start,
					  unsigned long end)
{
	struct lnt_range *last;
	unsigned long flags;
	unsigned int nr;

	spin_lock_irqsave(&lnt_rec_lock, flags);
	lnt_calls++;
	nr = lnt_nr;
	last = nr ? &lnt_ranges[nr - 1] : NULL;
	if (last && last->start == start && last->end == end)
		goto out;
	if (nr == LNT_MAX_RANGES) {
		lnt_dropped++;
		goto out;
	}
	lnt_ranges[nr].start = start;
	lnt_ranges[nr].end = end;
	/* Pairs with smp_load_acquire() in lnt_ctl_show() */
	smp_store_release(&lnt_nr, nr + 1);
out:
	spin_unlock_irqrestore(&lnt_rec_lock, flags);
}

#define LNT_WAIT	(30 * HZ)

/* Serialises allocations of the contig file */
static DEFINE_MUTEX(lnt_contig_lock);
/* The allocating task until its first invalidation waited */
static struct task_struct *lnt_pause_task;
static DECLARE_COMPLETION(lnt_paused);
static DECLARE_COMPLETION(lnt_resume);
static atomic_t lnt_pauses = ATOMIC_INIT(0);
static bool lnt_pause_missed;

static int lnt_invalidate_range_start(struct mmu_notifier *mn,
				      const struct mmu_notifier_range *range)
{
	if (READ_ONCE(lnt_pause_task) != current ||
	    !mmu_notifier_range_blockable(range))
		return 0;
	WRITE_ONCE(lnt_pause_task, NULL);
	atomic_inc(&lnt_pauses);
	complete(&lnt_paused);
	wait_for_completion_timeout(&lnt_resume, LNT_WAIT);
	return 0;
}

static const struct mmu_notifier_ops lnt_mn_ops = {
	.arch_invalidate_secondary_tlbs = lnt_invalidate_secondary_tlbs,
};

/* Not with the recorder's: a notifier has range or secondary-TLB calls */
static const struct mmu_notifier_ops lnt_pause_ops = {
	.invalidate_range_start = lnt_invalidate_range_start,
};

/* Called with lnt_lock held */
static int lnt_start(void)
{
	unsigned long flags;
	int ret;

	if (lnt_active)
		return -EBUSY;
	if (!current->mm)
		return -EINVAL;
	spin_lock_irqsave(&lnt_rec_lock, flags);
	lnt_nr = 0;
	lnt_calls = 0;
	lnt_dropped = 0;
	spin_unlock_irqrestore(&lnt_rec_lock, flags);
	memset(&lnt_mn, 0, sizeof(lnt_mn));
	lnt_mn.ops = &lnt_mn_ops;
	/* Takes a reference on the mm_struct, dropped by the unregister */
	ret = mmu_notifier_register(&lnt_mn, current->mm);
	if (!ret)
		lnt_active = true;
	return ret;
}

/* Called with lnt_lock held */
static void lnt_unregister(void)
{
	/* Waits for running callbacks, then drops the mm_struct reference */
	mmu_notifier_unregister(&lnt_mn, lnt_mn.mm);
	lnt_active = false;
}

/* A command written to a control file, NUL-terminated in @buf */
static int lnt_get_cmd(char *buf, size_t len, const char __user *ubuf,
		       size_t count)
{
	if (!count || count >= len)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	return 0;
}

static ssize_t lnt_ctl_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char buf[8];
	int ret;

	ret = lnt_get_cmd(buf, sizeof(buf), ubuf, count);
	if (ret)
		return ret;

	mutex_lock(&lnt_lock);
	if (sysfs_streq(buf, "start")) {
		ret = lnt_start();
	} else if (sysfs_streq(buf, "stop")) {
		ret = lnt_active ? 0 : -EINVAL;
		if (!ret)
			lnt_unregister();
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&lnt_lock);
	return ret ? ret : count;
}

static int lnt_ctl_show(struct seq_file *m, void *v)
{
	unsigned long calls, dropped, flags;
	unsigned int nr, i;

	mutex_lock(&lnt_lock);
	spin_lock_irqsave(&lnt_rec_lock, flags);
	calls = lnt_calls;
	dropped = lnt_dropped;
	spin_unlock_irqrestore(&lnt_rec_lock, flags);
	/* Pairs with smp_store_release() in lnt_invalidate_secondary_tlbs() */
	nr = smp_load_acquire(&lnt_nr);
	seq_printf(m, "active %d\ncalls %lu\ndropped %lu\nranges %u\n",
		   lnt_active, calls, dropped, nr);
	for (i = 0; i < nr; i++)
		seq_printf(m, "%lx %lx\n", lnt_ranges[i].start,
			   lnt_ranges[i].end);
	mutex_unlock(&lnt_lock);
	return 0;
}

static int lnt_ctl_open(struct inode *inode, struct file *file)
{
	return single_open_size(file, lnt_ctl_show, NULL,
				(LNT_MAX_RANGES + 4) * 40);
}

static const struct file_operations lnt_ctl_fops = {
	.owner = THIS_MODULE,
	.open = lnt_ctl_open,
	.read = seq_read,
	.write = lnt_ctl_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int lnt_contig(unsigned long pfn)
{
	unsigned long start = ALIGN_DOWN(pfn, pageblock_nr_pages);
	struct mmu_notifier mn = { .ops = &lnt_pause_ops };
	int ret;

	if (!current->mm || !pfn_valid(start) ||
	    !pfn_valid(start + pageblock_nr_pages - 1))
		return -EINVAL;
	mutex_lock(&lnt_contig_lock);
	ret = mmu_notifier_register(&mn, current->mm);
	if (ret)
		goto out;
	reinit_completion(&lnt_paused);
	reinit_completion(&lnt_resume);
	WRITE_ONCE(lnt_pause_missed, false);
	WRITE_ONCE(lnt_pause_task, current);
	ret = alloc_contig_range(start, start + pageblock_nr_pages,
				 MIGRATE_MOVABLE, GFP_KERNEL);
	/* only this task clears it, in lnt_invalidate_range_start() */
	if (lnt_pause_task) {
		WRITE_ONCE(lnt_pause_task, NULL);
		WRITE_ONCE(lnt_pause_missed, true);
		complete(&lnt_paused);
	}
	if (!ret)
		free_contig_range(start, pageblock_nr_pages);
	mmu_notifier_unregister(&mn, current->mm);
out:
	mutex_unlock(&lnt_contig_lock);
	return ret;
}

static ssize_t lnt_contig_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned long pfn;
	char buf[24];
	int ret;

	ret = lnt_get_cmd(buf, sizeof(buf), ubuf, count);
	if (ret)
		return ret;
	if (sysfs_streq(buf, "wait")) {
		ret = wait_for_completion_interruptible_timeout(&lnt_paused,
								LNT_WAIT);
		ret = ret < 0 ? ret : !ret ? -ETIMEDOUT :
		      READ_ONCE(lnt_pause_missed) ? -ESRCH : 0;
	} else if (sysfs_streq(buf, "resume")) {
		complete(&lnt_resume);
		ret = 0;
	} else {
		ret = kstrtoul(strim(buf), 0, &pfn);
		if (!ret)
			ret = lnt_contig(pfn);
	}
	return ret ? ret : count;
}

static int lnt_contig_show(struct seq_file *m, void *v)
{
	seq_printf(m, "pauses %d\n", atomic_read(&lnt_pauses));
	return 0;
}

/* The contig and atomic files: i_private is their show function */
static int lnt_show_open(struct inode *inode, struct file *file)
{
	return single_open(file, inode->i_private, NULL);
}

static const struct file_operations lnt_contig_fops = {
	.owner = THIS_MODULE,
	.open = lnt_show_open,
	.read = seq_read,
	.write = lnt_contig_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* Serialises runs and fills of the atomic file */
static DEFINE_MUTEX(lnt_atomic_lock);
static unsigned long lnt_bursts, lnt_failed_bursts, lnt_pages, lnt_filled;
static LIST_HEAD(lnt_fill_list);

static void lnt_free_list(struct list_head *list)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, list, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
}

/* Called with lnt_atomic_lock held */
static void lnt_atomic_run(unsigned int ms, unsigned int burst)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct page *page;
	unsigned int i;
	LIST_HEAD(list);

	lnt_bursts = 0;
	lnt_failed_bursts = 0;
	lnt_pages = 0;
	while (time_before(jiffies, end) && !signal_pending(current)) {
		for (i = 0; i < burst; i++) {
			page = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
			if (!page)
				break;
			list_add(&page->lru, &list);
		}
		lnt_bursts++;
		lnt_pages += i;
		if (i < burst)
			lnt_failed_bursts++;
		lnt_free_list(&list);
		usleep_range(1000, 1100);
	}
}

/* Called with lnt_atomic_lock held; returns -ENOMEM if not all came */
static int lnt_fill(unsigned long n)
{
	struct page *page;

	if (!n) {
		lnt_free_list(&lnt_fill_list);
		lnt_filled = 0;
		return 0;
	}
	for (; n; n--) {
		page = alloc_page(GFP_HIGHUSER | __GFP_NORETRY | __GFP_NOWARN);
		if (!page)
			return -ENOMEM;
		list_add(&page->lru, &lnt_fill_list);
		lnt_filled++;
		cond_resched();
	}
	return 0;
}

static ssize_t lnt_atomic_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned int ms, burst;
	unsigned long n;
	char buf[32];
	int ret;

	ret = lnt_get_cmd(buf, sizeof(buf), ubuf, count);
	if (ret)
		return ret;
	ret = -EINVAL;
	mutex_lock(&lnt_atomic_lock);
	if (sscanf(buf, "fill %lu", &n) == 1) {
		ret = lnt_fill(n);
	} else if (sscanf(buf, "%u %u", &ms, &burst) == 2 && ms >= 1 &&
		   ms <= 600000 && burst >= 1 && burst <= 65536) {
		lnt_atomic_run(ms, burst);
		ret = 0;
	}
	mutex_unlock(&lnt_atomic_lock);
	return ret ? ret : count;
}

static int lnt_atomic_show(struct seq_file *m, void *v)
{
	mutex_lock(&lnt_atomic_lock);
	seq_printf(m, "bursts %lu\nfailed_bursts %lu\npages %lu\nfilled %lu\n",
		   lnt_bursts, lnt_failed_bursts, lnt_pages, lnt_filled);
	mutex_unlock(&lnt_atomic_lock);
	return 0;
}

static const struct file_operations lnt_atomic_fops = {
	.owner = THIS_MODULE,
	.open = lnt_show_open,
	.read = seq_read,
	.write = lnt_atomic_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int __init lnt_init(void)
{
	lnt_dir = debugfs_create_dir("luf_notifier_test", NULL);
	if (IS_ERR(lnt_dir))
		return PTR_ERR(lnt_dir);
	debugfs_create_file("ctl", 0600, lnt_dir, NULL, &lnt_ctl_fops);
	debugfs_create_file("contig", 0600, lnt_dir, lnt_contig_show,
			    &lnt_contig_fops);
	debugfs_create_file("atomic", 0600, lnt_dir, lnt_atomic_show,
			    &lnt_atomic_fops);
	return 0;
}

static void __exit lnt_exit(void)
{
	/* Waits for readers and writers of ctl */
	debugfs_remove_recursive(lnt_dir);
	mutex_lock(&lnt_lock);
	if (lnt_active)
		lnt_unregister();
	mutex_unlock(&lnt_lock);
	lnt_free_list(&lnt_fill_list);
}

module_init(lnt_init);
module_exit(lnt_exit);
MODULE_DESCRIPTION("luf test only: record secondary TLB invalidations of one mm, hold a contiguous allocation, allocate GFP_ATOMIC");
MODULE_LICENSE("GPL");
