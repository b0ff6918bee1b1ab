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
	unsigned int knob;
};

static ssize_t luf_knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct luf_knob_attr *ka = container_of(attr, struct luf_knob_attr, attr);

	return sysfs_emit(buf, "%lu\n", luf_knob_val(ka->knob));
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
	if (ka->knob == LUF_KNOB_NR(max_defer_ms))
		luf_timer_rearm();
	return count;
}

/* Each knob of luf_knob_defs.h: its sysfs file, with the knob's name */
#define LUF_KNOB(_name, ...)						\
	static struct luf_knob_attr luf_attr_##_name = {		\
		.attr = { .attr = { .name = #_name, .mode = 0644 },	\
			  .show = luf_knob_show, .store = luf_knob_store }, \
		.knob = LUF_KNOB_NR(_name),				\
	}
#include "luf_knob_defs.h"
#undef LUF_KNOB

/* Its module parameter of the same name: the argument is its number */
#define LUF_KNOB(_name, ...)						\
	module_param_cb(_name, &luf_knob_param_ops, &luf_attr_##_name.knob, \
			0444)
#include "luf_knob_defs.h"
#undef LUF_KNOB

/* The parameter's description, for modinfo */
#define LUF_KNOB(_name, d, lo, hi, desc)				\
	MODULE_PARM_DESC(_name, desc " (" #lo "-" #hi ", default " #d ")")
#include "luf_knob_defs.h"
#undef LUF_KNOB

static struct attribute *luf_attrs[LUF_NR_KNOBS + 1];

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

#define LUF_KNOB(name, ...)						\
	(luf_attrs[LUF_KNOB_NR(name)] = &luf_attr_##name.attr.attr)
#include "luf_knob_defs.h"
#undef LUF_KNOB
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
