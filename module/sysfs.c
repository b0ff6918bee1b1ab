// SPDX-License-Identifier: GPL-2.0
/*
 * The knobs as files: /sys/kernel/mm/luf/<knob> (root-only writes, mode
 * 0644; a rejected write returns an error and leaves the value as it was)
 * and the module parameters of the same names, which set the initial
 * values (modprobe luf enabled=1, or options luf ... in modprobe.d) and
 * are read-only once loaded.  Both go through luf_knob_parse() (knobs.c).
 */
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/sysfs.h>
#include "luf.h"

static struct kobject *luf_kobj;

struct luf_knob_attr {
	struct kobj_attribute attr;
	enum luf_knob knob;
};

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

	ret = luf_knob_parse(ka->knob, buf, count, &v);
	if (ret)
		return ret;
	WRITE_ONCE(luf_state.knob[ka->knob], v);
	if (luf_knob_settles(ka->knob, v)) {
		/*
		 * An unmap_done that read the old value may still be on its
		 * way to defer: it runs with preemption off, so after a
		 * grace period every deferral that will ever see the old
		 * value is in the table, and the release below flushes it.
		 */
		synchronize_rcu();
		luf_release(LUF_CAUSE_DISABLE);
	}
	if (ka->knob == LUF_KNOB_MAX_DEFER_MS)
		luf_timer_rearm();
	return count;
}

/*
 * One knob: its sysfs file and its module parameter (whose argument is
 * the knob's number), each with the knob's name.
 */
#define LUF_KNOB(_name, _knob)						\
	static struct luf_knob_attr luf_attr_##_name = {		\
		.attr = { .attr = { .name = #_name, .mode = 0644 },	\
			  .show = luf_knob_show, .store = luf_knob_store }, \
		.knob = _knob,						\
	};								\
	module_param_cb(_name, &luf_knob_param_ops, &luf_attr_##_name.knob, \
			0444)

LUF_KNOB(enabled, LUF_KNOB_ENABLED);
MODULE_PARM_DESC(enabled,
		 "LUF: reclaim defers read-only TLB flushes (0-1, default 0)");
LUF_KNOB(migrc_enabled, LUF_KNOB_MIGRC_ENABLED);
MODULE_PARM_DESC(migrc_enabled,
		 "MIGRC: NUMA migration defers read-only TLB flushes (0-1, default 0)");
LUF_KNOB(observe, LUF_KNOB_OBSERVE);
MODULE_PARM_DESC(observe,
		 "count read-only unmaps and their flush cost (0-1, default 1)");
LUF_KNOB(max_pending_kb, LUF_KNOB_MAX_PENDING_KB);
MODULE_PARM_DESC(max_pending_kb,
		 "bound on memory held back, KiB (1-MemTotal, default min(65536, MemTotal/16))");
LUF_KNOB(max_defer_ms, LUF_KNOB_MAX_DEFER_MS);
MODULE_PARM_DESC(max_defer_ms,
		 "bound on how long a flush may wait, ms (1-60000, default 5000)");
LUF_KNOB(aging_pct, LUF_KNOB_AGING_PCT);
MODULE_PARM_DESC(aging_pct,
		 "x86 reclaim flushes once this % of the memcg is deferred, for page aging (0-100, 0 never, default 75)");

static struct attribute *luf_attrs[] = {
	&luf_attr_enabled.attr.attr,
	&luf_attr_migrc_enabled.attr.attr,
	&luf_attr_observe.attr.attr,
	&luf_attr_max_pending_kb.attr.attr,
	&luf_attr_max_defer_ms.attr.attr,
	&luf_attr_aging_pct.attr.attr,
	NULL,
};

static const struct attribute_group luf_attr_group = {
	.attrs = luf_attrs,
};

/**
 * luf_sysfs_init - create /sys/kernel/mm/luf/
 *
 * Return: 0 or a negative errno.
 */
int luf_sysfs_init(void)
{
	int ret;

	luf_kobj = kobject_create_and_add("luf", mm_kobj);
	if (!luf_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(luf_kobj, &luf_attr_group);
	if (ret)
		kobject_put(luf_kobj);
	return ret;
}

/**
 * luf_sysfs_exit - remove /sys/kernel/mm/luf/
 */
void luf_sysfs_exit(void)
{
	sysfs_remove_group(luf_kobj, &luf_attr_group);
	kobject_put(luf_kobj);
}
