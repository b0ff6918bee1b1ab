/* SPDX-License-Identifier: GPL-2.0 */
/*
 * luf.ko internal interfaces, shared by the files under module/.
 */
#ifndef _LUF_H
#define _LUF_H

#include <linux/luf_hooks.h>
#include <linux/migrate_mode.h>
#include <linux/percpu.h>
#include <linux/types.h>

/* Tunables, /sys/kernel/mm/luf/ (module/sysfs.c) */
enum luf_knob {
	LUF_KNOB_ENABLED,
	LUF_KNOB_MIGRC_ENABLED,
	LUF_KNOB_OBSERVE,
	LUF_KNOB_MAX_PENDING_KB,
	LUF_KNOB_MAX_DEFER_MS,
	LUF_NR_KNOBS,
};

extern unsigned long luf_knob_val[LUF_NR_KNOBS];

static inline unsigned long luf_knob(enum luf_knob k)
{
	return READ_ONCE(luf_knob_val[k]);
}

int luf_parse_ulong(const char *buf, size_t count, unsigned long min,
		    unsigned long max, unsigned long *val);

int luf_sysfs_init(void);
void luf_sysfs_exit(void);

/* Per-path observation counters (module/observe.c) */
enum luf_path_stat {
	LUF_PS_UNMAPS,
	LUF_PS_RO_FOLIOS,
	LUF_PS_FLUSH_ROUNDS,
	LUF_PS_FLUSH_ROUNDS_RO_ONLY,
	LUF_PS_FLUSH_CPUS,
	LUF_PS_NR,
};

enum luf_reason_stat {
	LUF_RS_UNMAPS,
	LUF_RS_RO_FOLIOS,
	LUF_RS_NR,
};

struct luf_stats {
	u64 path[LUF_CTX_NR][LUF_PS_NR];
	u64 reason[MR_TYPES][LUF_RS_NR];
};

DECLARE_PER_CPU(struct luf_stats, luf_stats);

extern const char * const luf_ctx_name[LUF_CTX_NR];
extern const char * const luf_path_stat_name[LUF_PS_NR];
extern const char * const luf_reason_name[MR_TYPES];
extern const char * const luf_reason_stat_name[LUF_RS_NR];

u64 luf_stat_sum(size_t offset);

bool luf_observe_defer_ok(enum luf_ctx ctx, int reason);
void luf_observe_unmap_done(const struct tlbflush_unmap_batch *ro);
void luf_observe_flush(const struct tlbflush_unmap_batch *ubc);

int luf_debugfs_init(void);
void luf_debugfs_exit(void);

/* Architecture batch helpers (module/arch_*.c) */
unsigned int luf_arch_batch_remote_cpus(const struct tlbflush_unmap_batch *ubc);

#endif /* _LUF_H */
