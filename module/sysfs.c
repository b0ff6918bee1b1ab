// SPDX-License-Identifier: GPL-2.0
/*
 * Policy knobs in /sys/kernel/mm/luf/.  Writes are root-only (mode 0644);
 * a rejected write returns -EINVAL and leaves the value as it was.
 */
#include <linux/kobject.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sysfs.h>
#include "luf.h"

unsigned long luf_knob_val[LUF_NR_KNOBS];

static struct kobject *luf_kobj;

/*
 * init_on_free, page poisoning and debug_pagealloc change or unmap a page
 * as it is freed; LUF keeps pages until their flush but refuses to rely on
 * that where the kernel is configured to check freed pages.
 */
static bool luf_freed_pages_change(void)
{
	return want_init_on_free() || page_poisoning_enabled() ||
	       debug_pagealloc_enabled();
}

static unsigned long luf_total_kb(void)
{
	return totalram_pages() << (PAGE_SHIFT - 10);
}

struct luf_knob_attr {
	struct kobj_attribute attr;
	enum luf_knob knob;
	unsigned long min;
	unsigned long max;		/* 0: total RAM in kB */
};

static unsigned long luf_knob_max(const struct luf_knob_attr *ka)
{
	return ka->max ?: luf_total_kb();
}

static ssize_t luf_knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct luf_knob_attr *ka = container_of(attr, struct luf_knob_attr, attr);

	return sysfs_emit(buf, "%lu\n", luf_knob(ka->knob));
}

static ssize_t luf_knob_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	struct luf_knob_attr *ka = container_of(attr, struct luf_knob_attr, attr);
	unsigned long v;
	int ret;

	ret = luf_parse_ulong(buf, count, ka->min, luf_knob_max(ka), &v);
	if (ret)
		return ret;
	switch (ka->knob) {
	case LUF_KNOB_ENABLED:
	case LUF_KNOB_MIGRC_ENABLED:
		if (v && luf_freed_pages_change())
			return -EOPNOTSUPP;
		WRITE_ONCE(luf_knob_val[ka->knob], v);
		/* Disabling settles everything deferred at once. */
		if (!v)
			luf_release(LUF_CAUSE_DISABLE);
		break;
	default:
		WRITE_ONCE(luf_knob_val[ka->knob], v);
	}
	return count;
}

#define LUF_KNOB(_name, _knob, _min, _max)				\
	static struct luf_knob_attr luf_attr_##_name = {		\
		.attr = __ATTR(_name, 0644, luf_knob_show, luf_knob_store), \
		.knob = _knob,						\
		.min = _min,						\
		.max = _max,						\
	}

LUF_KNOB(enabled, LUF_KNOB_ENABLED, 0, 1);
LUF_KNOB(migrc_enabled, LUF_KNOB_MIGRC_ENABLED, 0, 1);
LUF_KNOB(observe, LUF_KNOB_OBSERVE, 0, 1);
LUF_KNOB(max_pending_kb, LUF_KNOB_MAX_PENDING_KB, 1, 0);
LUF_KNOB(max_defer_ms, LUF_KNOB_MAX_DEFER_MS, 1, 60000);

static struct attribute *luf_attrs[] = {
	&luf_attr_enabled.attr.attr,
	&luf_attr_migrc_enabled.attr.attr,
	&luf_attr_observe.attr.attr,
	&luf_attr_max_pending_kb.attr.attr,
	&luf_attr_max_defer_ms.attr.attr,
	NULL,
};

static const struct attribute_group luf_attr_group = {
	.attrs = luf_attrs,
};

int luf_sysfs_init(void)
{
	int ret;

	luf_knob_val[LUF_KNOB_ENABLED] = 0;
	luf_knob_val[LUF_KNOB_MIGRC_ENABLED] = 0;
	luf_knob_val[LUF_KNOB_OBSERVE] = 1;
	luf_knob_val[LUF_KNOB_MAX_PENDING_KB] = min(65536UL, luf_total_kb() / 16);
	/*
	 * Nothing but memory depends on how long a flush waits: held pages
	 * are bounded by max_pending_kb and given back under pressure, and
	 * every change of content flushes first.  Each expiry costs one
	 * round of IPIs, so the bound is seconds, not milliseconds.
	 */
	luf_knob_val[LUF_KNOB_MAX_DEFER_MS] = 5000;

	luf_kobj = kobject_create_and_add("luf", mm_kobj);
	if (!luf_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(luf_kobj, &luf_attr_group);
	if (ret)
		kobject_put(luf_kobj);
	return ret;
}

void luf_sysfs_exit(void)
{
	sysfs_remove_group(luf_kobj, &luf_attr_group);
	kobject_put(luf_kobj);
}
