// SPDX-License-Identifier: GPL-2.0
/*
 * Knob values in, as text: the strict parser shared by /sys/kernel/mm/luf/
 * (sysfs.c) and the module parameters of the same names, which set the
 * values at load.  This layer only translates: it parses, checks the
 * range and what policy.c allows, and stores.  Kept free of sysfs so that
 * KUnit can test it (tests/knobs-kunit.h, included at the end).
 */
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/string.h>
#include "luf.h"

/**
 * luf_parse_ulong - parse a knob value written to sysfs
 * @buf: the written bytes, not necessarily NUL-terminated at @count
 * @count: number of bytes written
 * @min: smallest accepted value
 * @max: largest accepted value
 * @val: where the value goes; untouched on error
 *
 * Accepts plain decimal digits with at most one trailing newline: no sign,
 * no base prefix, no blanks, nothing after the number.
 *
 * Return: 0, or -EINVAL for malformed input, overflow or a value outside
 * [@min, @max].
 */
int luf_parse_ulong(const char *buf, size_t count, unsigned long min,
		    unsigned long max, unsigned long *val)
{
	char tmp[24];
	unsigned long v;
	size_t i;

	if (count && buf[count - 1] == '\n')
		count--;
	if (!count || count >= sizeof(tmp))
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!isdigit(buf[i]))
			return -EINVAL;
	memcpy(tmp, buf, count);
	tmp[count] = '\0';
	if (kstrtoul(tmp, 10, &v) || v < min || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

/**
 * luf_knob_parse - parse and check a value for knob @k
 * @k: the knob
 * @buf: the value as written, not necessarily NUL-terminated at @count
 * @count: its length
 * @val: where the value goes; untouched on error
 *
 * Return: 0; -EINVAL for anything luf_parse_ulong() refuses in the knob's
 * range (luf_knob_range()); -EOPNOTSUPP for a value luf_knob_allowed()
 * refuses.
 */
int luf_knob_parse(unsigned int k, const char *buf, size_t count,
		   unsigned long *val)
{
	unsigned long min, max, v;
	int ret;

	luf_knob_range(k, &min, &max);
	ret = luf_parse_ulong(buf, count, min, max, &v);
	if (ret)
		return ret;
	ret = luf_knob_allowed(k, v);
	if (ret)
		return ret;
	*val = v;
	return 0;
}

/**
 * luf_knobs_init - give every knob no module parameter set its default
 *
 * Called first at module init, after the parameters were parsed.
 */
void luf_knobs_init(void)
{
	int k;

	for (k = 0; k < LUF_NR_KNOBS; k++)
		if (luf_state.knob[k] == LUF_KNOB_UNSET)
			WRITE_ONCE(luf_state.knob[k], luf_knob_default(k));
}

/*
 * The module parameters, one per knob (declared in sysfs.c from
 * LUF_KNOBS): @kp->arg points to the knob's number.
 * They are read-only once loaded (0444), so this runs only while the
 * module loads, before luf_init(): a refused value fails the load and
 * nothing has been set up or changed.
 */
static int luf_knob_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int k = *(const unsigned int *)kp->arg;
	unsigned long min, max, v;
	int ret;

	if (!val)
		return -EINVAL;
	ret = luf_knob_parse(k, val, strlen(val), &v);
	if (ret == -EOPNOTSUPP) {
		pr_err("luf: %s=%s refused: the kernel changes or checks freed pages (init_on_free, page poisoning or debug_pagealloc)\n",
		       kp->name, val);
	} else if (ret) {
		luf_knob_range(k, &min, &max);
		pr_err("luf: %s=%s invalid: a decimal number %lu-%lu expected\n",
		       kp->name, val, min, max);
	} else {
		WRITE_ONCE(luf_state.knob[k], v);
	}
	return ret;
}

/* The knob's value; its default while luf_init() has not set it yet */
static int luf_knob_param_get(char *buf, const struct kernel_param *kp)
{
	unsigned int k = *(const unsigned int *)kp->arg;
	unsigned long v = luf_knob_val(k);

	if (v == LUF_KNOB_UNSET)
		v = luf_knob_default(k);
	return scnprintf(buf, PAGE_SIZE, "%lu\n", v);
}

const struct kernel_param_ops luf_knob_param_ops = {
	.set = luf_knob_param_set,
	.get = luf_knob_param_get,
};

#ifdef LUF_KUNIT
#include "tests/knobs-kunit.h"
#endif
