/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The knobs of luf.ko, one line each, included where a list of them is
 * made (no include guard): LUF_KNOB(name, default, min, max, description).
 *
 * /sys/kernel/mm/luf/<name> and the module parameter <name> with its
 * description (module/sysfs.c), the knob numbers (LUF_KNOB_NR(), luf.h)
 * and luf_knob_default() and luf_knob_range() (module/policy.c) come from
 * here; Documentation/ABI/testing/sysfs-kernel-mm-luf and the admin guide
 * describe them.  default, min and max are C expressions over ram_kb
 * (MemTotal) and page_kb (one page), in KiB; modinfo shows them as
 * written here.
 */
LUF_KNOB(enabled, 0, 0, 1,
	 "LUF: reclaim defers read-only TLB flushes");
LUF_KNOB(migrc_enabled, 0, 0, 1,
	 "MIGRC: NUMA migration defers read-only TLB flushes");
LUF_KNOB(observe, 1, 0, 1,
	 "count read-only unmaps and their flush cost");
LUF_KNOB(max_pending_kb, min(65536UL, ram_kb / 16), page_kb, ram_kb,
	 "bound on memory deferred plus held back, KiB; ram_kb: MemTotal, page_kb: a page");
LUF_KNOB(max_defer_ms, 5000, 1, 60000,
	 "bound on how long a flush may wait, ms");
LUF_KNOB(aging_pct, 75, 0, 100,
	 "x86 reclaim flushes once this % of a memcg is deferred, for page aging; 0: never");
