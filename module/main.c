// SPDX-License-Identifier: GPL-2.0
/*
 * luf.ko: lazy unmap flush (LUF) and migration read copy (MIGRC) provider
 * for the core hook layer (include/linux/luf_hooks.h).
 *
 * This version observes: it lets reclaim and migration separate read-only
 * unmaps and counts what deferring their flushes would save, but takes no
 * deferral decision, so every consumer hook lets the kernel proceed as
 * usual and there is never anything to drain.
 */
#include <linux/module.h>
#include "luf.h"

static bool luf_hook_defer_ok(enum luf_ctx ctx, int reason)
{
	return luf_observe_defer_ok(ctx, reason);
}

static bool luf_hook_unmap_done(struct folio *folio,
				struct tlbflush_unmap_batch *ro, int ttu_flags)
{
	luf_observe_unmap_done(ro);
	return false;
}

static bool luf_hook_migrate_src_done(struct folio *src, struct folio *dst,
				      int reason)
{
	return false;
}

static bool luf_hook_free_page(struct page *page, unsigned int order)
{
	return false;
}

static void luf_hook_write_fault(struct vm_area_struct *vma,
				 unsigned long addr, unsigned int flags)
{
}

static void luf_hook_file_change(struct address_space *mapping,
				 enum luf_file_why why)
{
}

static bool luf_hook_zone_low(struct zone *zone, unsigned int order,
			      unsigned int alloc_flags, gfp_t gfp)
{
	return false;
}

static unsigned long
luf_hook_flush_begin(const struct tlbflush_unmap_batch *ubc)
{
	luf_observe_flush(ubc);
	return 0;
}

static void luf_hook_flush_end(unsigned long token)
{
}

static void luf_hook_cpu_flush(void)
{
}

static void luf_hook_drain(void)
{
}

static const struct luf_hook_ops luf_ops = {
	.defer_ok = luf_hook_defer_ok,
	.unmap_done = luf_hook_unmap_done,
	.migrate_src_done = luf_hook_migrate_src_done,
	.free_page = luf_hook_free_page,
	.write_fault = luf_hook_write_fault,
	.file_change = luf_hook_file_change,
	.zone_low = luf_hook_zone_low,
	.flush_begin = luf_hook_flush_begin,
	.flush_end = luf_hook_flush_end,
	.cpu_flush = luf_hook_cpu_flush,
	.drain = luf_hook_drain,
};

static int __init luf_init(void)
{
	int ret;

	ret = luf_sysfs_init();
	if (ret)
		return ret;
	ret = luf_debugfs_init();
	if (ret)
		goto err_sysfs;
	ret = luf_hooks_register(&luf_ops);
	if (ret)
		goto err_debugfs;
	pr_info("luf: registered (observe mode)\n");
	return 0;

err_debugfs:
	luf_debugfs_exit();
err_sysfs:
	luf_sysfs_exit();
	return ret;
}

static void __exit luf_exit(void)
{
	luf_hooks_unregister(&luf_ops);
	luf_debugfs_exit();
	luf_sysfs_exit();
	pr_info("luf: unregistered\n");
}

module_init(luf_init);
module_exit(luf_exit);
MODULE_DESCRIPTION("Lazy unmap flush (LUF) and migration read copy (MIGRC)");
MODULE_LICENSE("GPL");
