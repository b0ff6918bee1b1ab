/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of luf.ko: luf:luf_defer, luf:luf_migrc_retain, luf:luf_flush,
 * luf:luf_sweep, luf:luf_release
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM luf

#if !defined(_LUF_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _LUF_TRACE_H

#include <linux/tracepoint.h>
#include "luf.h"

/*
 * Causes and migration reasons are recorded by name (the counters' names),
 * so that perf and trace-cmd print them without decoding enum values.
 */

TRACE_EVENT(luf_defer,
	    TP_PROTO(unsigned long pfn, u32 gen),
	    TP_ARGS(pfn, gen),
	    TP_STRUCT__entry(__field(unsigned long, pfn)
			     __field(u32, gen)),
	    TP_fast_assign(__entry->pfn = pfn;
			   __entry->gen = gen;),
	    TP_printk("pfn=0x%lx gen=%u", __entry->pfn, __entry->gen)
);

TRACE_EVENT(luf_migrc_retain,
	    TP_PROTO(unsigned long src, unsigned long dst, int reason),
	    TP_ARGS(src, dst, reason),
	    TP_STRUCT__entry(__field(unsigned long, src)
			     __field(unsigned long, dst)
			     __string(reason, luf_reason_str(reason))),
	    TP_fast_assign(__entry->src = src;
			   __entry->dst = dst;
			   __assign_str(reason);),
	    TP_printk("src=0x%lx dst=0x%lx reason=%s", __entry->src,
		      __entry->dst, __get_str(reason))
);

/* flush_ns: up to the sweep; sweep_ns: the sweep, 0 if left to luf_sweep */
TRACE_EVENT(luf_flush,
	    TP_PROTO(u32 gen, unsigned int entries, unsigned int cpus,
		     unsigned int pruned, int cause, u64 flush_ns, u64 sweep_ns),
	    TP_ARGS(gen, entries, cpus, pruned, cause, flush_ns, sweep_ns),
	    TP_STRUCT__entry(__field(u32, gen)
			     __field(unsigned int, entries)
			     __field(unsigned int, cpus)
			     __field(unsigned int, pruned)
			     __string(cause, luf_cause_name[cause])
			     __field(u64, flush_ns)
			     __field(u64, sweep_ns)),
	    TP_fast_assign(__entry->gen = gen;
			   __entry->entries = entries;
			   __entry->cpus = cpus;
			   __entry->pruned = pruned;
			   __assign_str(cause);
			   __entry->flush_ns = flush_ns;
			   __entry->sweep_ns = sweep_ns;),
	    TP_printk("gen=%u entries=%u cpus=%u pruned=%u cause=%s flush_ns=%llu sweep_ns=%llu",
		      __entry->gen, __entry->entries, __entry->cpus,
		      __entry->pruned, __get_str(cause), __entry->flush_ns,
		      __entry->sweep_ns)
);

TRACE_EVENT(luf_sweep,
	    TP_PROTO(u64 ns),
	    TP_ARGS(ns),
	    TP_STRUCT__entry(__field(u64, ns)),
	    TP_fast_assign(__entry->ns = ns;),
	    TP_printk("ns=%llu", __entry->ns)
);

TRACE_EVENT(luf_release,
	    TP_PROTO(unsigned long pages, int cause),
	    TP_ARGS(pages, cause),
	    TP_STRUCT__entry(__field(unsigned long, pages)
			     __string(cause, luf_cause_name[cause])),
	    TP_fast_assign(__entry->pages = pages;
			   __assign_str(cause);),
	    TP_printk("pages=%lu cause=%s", __entry->pages, __get_str(cause))
);

#endif /* _LUF_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
