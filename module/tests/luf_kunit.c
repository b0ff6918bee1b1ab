// SPDX-License-Identifier: GPL-2.0
/*
 * luf_kunit.ko: the KUnit suites of luf.ko's pure logic.  knobs.c,
 * policy.c, ugen.c and batch.c are compiled into this module, each with
 * its test cases included at its end (tests/<file>-kunit.h, as mm/damon
 * does), rather than exported from luf.ko: luf_knobs (parsing, module
 * parameters), luf_policy (every policy decision), luf_generations
 * (generation arithmetic across the u32 wrap, table keys, pruning of a
 * batch by CPU flush records) and luf_side_table (large folios in the
 * pfn side table and its filters).
 */
#define LUF_KUNIT
#include <kunit/test.h>
#include <linux/module.h>
#include "luf.h"

/* luf.ko's state lives in main.c; here it is the tests' */
struct luf_state luf_state;

#include "../knobs.c"
#include "../policy.c"
#include "../ugen.c"

/* The tracepoints are luf.ko's: none here */
#define _LUF_TRACE_H
static inline void trace_luf_defer(unsigned long pfn, u32 gen) { }
static inline void trace_luf_flush(u32 gen, unsigned int entries,
				   unsigned int cpus, unsigned int pruned,
				   enum luf_cause cause, u64 flush_ns,
				   u64 sweep_ns) { }
static inline void trace_luf_sweep(u64 sweep_ns) { }
#include "../stats.c"
#include "../batch.c"

MODULE_DESCRIPTION("KUnit tests for luf.ko");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(LUF);
