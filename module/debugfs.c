// SPDX-License-Identifier: GPL-2.0
/*
 * Counters in /sys/kernel/debug/luf/stat, one "<name> <value>" line each
 * in the way of /proc/vmstat: <path>_<stat> and migrate_<reason>_<stat>
 * (observe mode), the LUF events, deferred_order<N> (folios deferred by
 * order), forced_<cause> and released_<cause>, and the gauges held_pages,
 * held_pages_peak, pending_folios and pending_pages.  Names
 * and sums: stats.c.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/stddef.h>
#include "luf.h"

static struct dentry *luf_dir;

/* The lines that are values now, not counts */
static const struct {
	const char *name;
	atomic_long_t *val;
} luf_gauges[] = {
#define LUF_GAUGE(name, field)	{ #name, &luf_state.field },
#include "luf_stat_defs.h"
};

/* The value of the line whose name was just printed */
static void luf_stat_line(struct seq_file *m, size_t offset)
{
	seq_printf(m, " %llu\n", luf_stat_sum(offset));
}

static int luf_stat_show(struct seq_file *m, void *unused)
{
	int c, s, r;

	for (c = 0; c < LUF_CTX_NR; c++)
		for (s = 0; s < LUF_PS_NR; s++) {
			seq_printf(m, "%s_%s", luf_ctx_name[c],
				   luf_path_stat_name[s]);
			luf_stat_line(m, offsetof(struct luf_stats, path[c][s]));
		}
	for (r = 0; r < MR_TYPES; r++)
		for (s = 0; s < LUF_RS_NR; s++) {
			seq_printf(m, "migrate_%s_%s", luf_reason_name[r],
				   luf_reason_stat_name[s]);
			luf_stat_line(m, offsetof(struct luf_stats, reason[r][s]));
		}
	for (s = 0; s < LUF_EV_FORCED_BASE; s++) {
		seq_puts(m, luf_event_name[s]);
		luf_stat_line(m, offsetof(struct luf_stats, ev[s]));
	}
	for (s = 0; s < LUF_NR_ORDERS; s++) {
		seq_printf(m, "deferred_order%d", s);
		luf_stat_line(m, offsetof(struct luf_stats, order[s]));
	}
	for (c = 0; c < LUF_NR_CAUSES; c++) {
		seq_printf(m, "forced_%s", luf_cause_name[c]);
		luf_stat_line(m, offsetof(struct luf_stats,
					  ev[LUF_EV_FORCED_BASE + c]));
	}
	for (c = 0; c < LUF_NR_CAUSES; c++) {
		seq_printf(m, "released_%s", luf_cause_name[c]);
		luf_stat_line(m, offsetof(struct luf_stats,
					  ev[LUF_EV_RELEASED_BASE + c]));
	}
	for (s = 0; s < ARRAY_SIZE(luf_gauges); s++)
		seq_printf(m, "%s %ld\n", luf_gauges[s].name,
			   atomic_long_read(luf_gauges[s].val));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(luf_stat);

/**
 * luf_debugfs_init - create /sys/kernel/debug/luf/stat
 *
 * Return: 0 or a negative errno.
 */
int luf_debugfs_init(void)
{
	luf_dir = debugfs_create_dir("luf", NULL);
	if (IS_ERR(luf_dir))
		return PTR_ERR(luf_dir);
	debugfs_create_file("stat", 0444, luf_dir, NULL, &luf_stat_fops);
	return 0;
}

/**
 * luf_debugfs_exit - remove /sys/kernel/debug/luf/
 */
void luf_debugfs_exit(void)
{
	debugfs_remove_recursive(luf_dir);
}
