// SPDX-License-Identifier: GPL-2.0
/*
 * Strict parsing of knob values and the deferral policy they set, kept
 * free of sysfs so KUnit can test them.
 */
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/migrate_mode.h>
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
 * luf_may_defer - may an unmap of @ctx for @reason defer its flush now?
 * @ctx: reclaim or migration
 * @reason: the migrate_reason of a migration
 *
 * Reclaim defers with enabled; migration (MIGRC) with migrc_enabled, for
 * the reasons that move pages between NUMA nodes.  Compaction, contiguous
 * allocation, hotplug, memory failure and long-term pinning need the
 * source page back at once and never defer; nor does DAMON.
 *
 * Return: true if the flush may be deferred.
 */
bool luf_may_defer(enum luf_ctx ctx, int reason)
{
	if (ctx == LUF_CTX_RECLAIM)
		return luf_knob(LUF_KNOB_ENABLED);
	if (!luf_knob(LUF_KNOB_MIGRC_ENABLED))
		return false;
	switch (reason) {
	case MR_DEMOTION:
	case MR_NUMA_MISPLACED:
	case MR_SYSCALL:
	case MR_MEMPOLICY_MBIND:
		return true;
	default:
		return false;
	}
}
