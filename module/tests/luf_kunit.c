// SPDX-License-Identifier: GPL-2.0
/*
 * luf_kunit.ko: the KUnit suites of luf.ko's pure logic.  knobs.c,
 * policy.c and ugen.c are compiled into this module, each with its test
 * cases included at its end (tests/<file>-kunit.h, as mm/damon does),
 * rather than exported from luf.ko: luf_knobs (parsing, module
 * parameters), luf_policy (every policy decision) and luf_generations
 * (generation arithmetic across the u32 wrap, table keys, pruning of a
 * batch by CPU flush records).
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

MODULE_DESCRIPTION("KUnit tests for luf.ko");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(LUF);
