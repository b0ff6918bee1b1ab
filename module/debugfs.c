// SPDX-License-Identifier: GPL-2.0
/*
 * Counters in /sys/kernel/debug/luf/, one decimal value per file:
 * <path>_<stat> and migrate_<reason>_<stat> (observe mode), LUF events,
 * forced_<cause>, released_<cause>, and the gauges held_pages,
 * held_pages_peak and pending_folios.  Names and sums: stats.c.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/stddef.h>
#include "luf.h"

static struct dentry *luf_dir;

static int luf_stat_get(void *data, u64 *val)
{
	*val = luf_stat_sum((size_t)data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(luf_stat_fops, luf_stat_get, NULL, "%llu\n");

static void luf_stat_file(const char *name, size_t offset)
{
	debugfs_create_file_unsafe(name, 0444, luf_dir, (void *)offset,
				   &luf_stat_fops);
}

static int luf_atomic_get(void *data, u64 *val)
{
	*val = atomic_long_read(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(luf_atomic_fops, luf_atomic_get, NULL, "%llu\n");

/**
 * luf_debugfs_init - create /sys/kernel/debug/luf/ and its counter files
 *
 * Return: 0 or a negative errno.
 */
int luf_debugfs_init(void)
{
	char name[64];
	int c, s, r;

	luf_dir = debugfs_create_dir("luf", NULL);
	if (IS_ERR(luf_dir))
		return PTR_ERR(luf_dir);

	for (c = 0; c < LUF_CTX_NR; c++)
		for (s = 0; s < LUF_PS_NR; s++) {
			snprintf(name, sizeof(name), "%s_%s", luf_ctx_name[c],
				 luf_path_stat_name[s]);
			luf_stat_file(name, offsetof(struct luf_stats, path[c][s]));
		}
	for (r = 0; r < MR_TYPES; r++)
		for (s = 0; s < LUF_RS_NR; s++) {
			snprintf(name, sizeof(name), "migrate_%s_%s",
				 luf_reason_name[r], luf_reason_stat_name[s]);
			luf_stat_file(name, offsetof(struct luf_stats, reason[r][s]));
		}
	for (s = 0; s < LUF_EV_FORCED_BASE; s++)
		luf_stat_file(luf_event_name[s], offsetof(struct luf_stats, ev[s]));
	for (c = 0; c < LUF_NR_CAUSES; c++) {
		snprintf(name, sizeof(name), "forced_%s", luf_cause_name[c]);
		luf_stat_file(name, offsetof(struct luf_stats,
					     ev[LUF_EV_FORCED_BASE + c]));
		snprintf(name, sizeof(name), "released_%s", luf_cause_name[c]);
		luf_stat_file(name, offsetof(struct luf_stats,
					     ev[LUF_EV_RELEASED_BASE + c]));
	}
	debugfs_create_file_unsafe("held_pages", 0444, luf_dir, &luf_state.held,
				   &luf_atomic_fops);
	debugfs_create_file_unsafe("held_pages_peak", 0444, luf_dir,
				   &luf_state.held_peak, &luf_atomic_fops);
	debugfs_create_file_unsafe("pending_folios", 0444, luf_dir,
				   &luf_state.pending, &luf_atomic_fops);
	return 0;
}

/**
 * luf_debugfs_exit - remove /sys/kernel/debug/luf/
 */
void luf_debugfs_exit(void)
{
	debugfs_remove_recursive(luf_dir);
}
