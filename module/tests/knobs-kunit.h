/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit cases of knobs.c, included at its end when it is built into
 * luf_kunit.ko (tests/luf_kunit.c): the strict parser, and the module
 * parameters, which take exactly what the sysfs files take.
 */
#ifndef _LUF_KNOBS_KUNIT_H
#define _LUF_KNOBS_KUNIT_H

#include <kunit/test.h>
#include <linux/limits.h>

struct luf_parse_case {
	const char *in;
	unsigned long min, max;
	int ret;
	unsigned long val;
};

static const struct luf_parse_case luf_parse_cases[] = {
	{ "0", 0, 1, 0, 0 },
	{ "1", 0, 1, 0, 1 },
	{ "1\n", 0, 1, 0, 1 },
	{ "60000\n", 1, 60000, 0, 60000 },
	{ "18446744073709551615", 0, ULONG_MAX, 0, ULONG_MAX },
	{ "2", 0, 1, -EINVAL },
	{ "0", 1, 60000, -EINVAL },
	{ "60001", 1, 60000, -EINVAL },
	{ "", 0, 1, -EINVAL },
	{ "\n", 0, 1, -EINVAL },
	{ "1\n\n", 0, 1, -EINVAL },
	{ "abc", 0, 1, -EINVAL },
	{ "1x", 0, 1, -EINVAL },
	{ " 1", 0, 1, -EINVAL },
	{ "1 ", 0, 1, -EINVAL },
	{ "+1", 0, 1, -EINVAL },
	{ "-1", 0, 1, -EINVAL },
	{ "0x10", 0, 100, -EINVAL },
	{ "1 2", 0, 100, -EINVAL },
	{ "18446744073709551616", 0, ULONG_MAX, -EINVAL },
	{ "99999999999999999999999", 0, ULONG_MAX, -EINVAL },
};

static void luf_parse_table(struct kunit *test)
{
	const struct luf_parse_case *c;
	unsigned long v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(luf_parse_cases); i++) {
		c = &luf_parse_cases[i];
		v = 12345;
		KUNIT_EXPECT_EQ_MSG(test, luf_parse_ulong(c->in, strlen(c->in),
							  c->min, c->max, &v),
				    c->ret, "input \"%s\"", c->in);
		KUNIT_EXPECT_EQ_MSG(test, v, c->ret ? 12345UL : c->val,
				    "input \"%s\"", c->in);
	}
}

/* sysfs hands over exactly count bytes: nothing past them may matter */
static void luf_parse_not_terminated(struct kunit *test)
{
	unsigned long v = 0;

	KUNIT_EXPECT_EQ(test, luf_parse_ulong("15junk", 2, 0, 100, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 15UL);
	KUNIT_EXPECT_EQ(test, luf_parse_ulong("7\nx", 2, 0, 100, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 7UL);
	KUNIT_EXPECT_EQ(test, luf_parse_ulong("7\nx", 3, 0, 100, &v), -EINVAL);
}

struct luf_param_case {
	unsigned int knob;
	const char *val;
	int ret;
};

/*
 * modprobe luf <knob>=<value>: the same parser and ranges as the sysfs
 * files.  A refused value fails with -EINVAL (the load fails) and leaves
 * the knob as it was.  Junk here; each knob's range ends and the values
 * just outside them come from the list (luf_knob_range()).
 */
static const struct luf_param_case luf_param_cases[] = {
	{ LUF_KNOB_NR(enabled), "-1", -EINVAL },
	{ LUF_KNOB_NR(enabled), "y", -EINVAL },
	{ LUF_KNOB_NR(enabled), "", -EINVAL },
	{ LUF_KNOB_NR(migrc_enabled), "0x1", -EINVAL },
	{ LUF_KNOB_NR(observe), "1 ", -EINVAL },
};

static const char *luf_kunit_knob_name(unsigned int k)
{
	static const char *name[LUF_NR_KNOBS];

#define LUF_KNOB(n, ...)	(name[LUF_KNOB_NR(n)] = #n)
#include "luf_knob_defs.h"
#undef LUF_KNOB
	return name[k];
}

static void luf_param_check(struct kunit *test, unsigned int k,
			    const char *val, int want)
{
	struct kernel_param kp = { .name = luf_kunit_knob_name(k), .arg = &k };
	unsigned long *slot = &luf_state.knob[k];

	*slot = 12345;
	KUNIT_EXPECT_EQ_MSG(test, luf_knob_param_ops.set(val, &kp), want,
			    "%s=%s", kp.name, val);
	if (want)
		KUNIT_EXPECT_EQ_MSG(test, *slot, 12345UL, "%s=%s", kp.name, val);
	else
		KUNIT_EXPECT_NE_MSG(test, *slot, 12345UL, "%s=%s", kp.name, val);
}

static void luf_param_table(struct kunit *test)
{
	unsigned int enabled = LUF_KNOB_NR(enabled), k;
	struct kernel_param none = { .name = "enabled", .arg = &enabled };
	unsigned long lo, hi;
	char v[24];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(luf_param_cases); i++)
		luf_param_check(test, luf_param_cases[i].knob,
				luf_param_cases[i].val, luf_param_cases[i].ret);
	for (k = 0; k < LUF_NR_KNOBS; k++) {
		luf_knob_range(k, &lo, &hi);
		snprintf(v, sizeof(v), "%lu", lo);
		luf_param_check(test, k, v, luf_knob_allowed(k, lo));
		snprintf(v, sizeof(v), "%lu\n", hi);
		luf_param_check(test, k, v, luf_knob_allowed(k, hi));
		if (lo) {
			snprintf(v, sizeof(v), "%lu", lo - 1);
			luf_param_check(test, k, v, -EINVAL);
		}
		if (hi < ULONG_MAX) {
			snprintf(v, sizeof(v), "%lu", hi + 1);
			luf_param_check(test, k, v, -EINVAL);
		}
	}
	/* "modprobe luf enabled" (no value) */
	KUNIT_EXPECT_EQ(test, luf_knob_param_ops.set(NULL, &none), -EINVAL);
}

/* enabled=1 and migrc_enabled=1: what sysfs would answer */
static void luf_param_enable(struct kunit *test)
{
	unsigned int k;
	int want;

	for (k = LUF_KNOB_NR(enabled); k <= LUF_KNOB_NR(migrc_enabled); k++) {
		struct kernel_param kp = { .name = "enabled", .arg = &k };

		want = luf_knob_allowed(k, 1);
		luf_state.knob[k] = 0;
		KUNIT_EXPECT_EQ(test, luf_knob_param_ops.set("1\n", &kp), want);
		KUNIT_EXPECT_EQ(test, luf_state.knob[k], want ? 0UL : 1UL);
		luf_state.knob[k] = 0;
	}
}

/*
 * Knobs no parameter set get their defaults at init, the others stay;
 * until then a parameter reads as its default.
 */
static void luf_knobs_defaults(struct kunit *test)
{
	unsigned int k = LUF_KNOB_NR(max_defer_ms);
	struct kernel_param kp = { .name = "max_defer_ms", .arg = &k };
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	char want[24];

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (k = 0; k < LUF_NR_KNOBS; k++)
		luf_state.knob[k] = LUF_KNOB_UNSET;
	k = LUF_KNOB_NR(max_defer_ms);
	snprintf(want, sizeof(want), "%lu\n", luf_knob_default(k));
	KUNIT_EXPECT_EQ(test, luf_knob_param_ops.get(buf, &kp), strlen(want));
	KUNIT_EXPECT_STREQ(test, buf, want);
	luf_state.knob[LUF_KNOB_NR(max_defer_ms)] = 7;
	KUNIT_EXPECT_EQ(test, luf_knob_param_ops.get(buf, &kp), 2);
	KUNIT_EXPECT_STREQ(test, buf, "7\n");
	luf_knobs_init();
	for (k = 0; k < LUF_NR_KNOBS; k++)
		KUNIT_EXPECT_EQ(test, luf_state.knob[k],
				k == LUF_KNOB_NR(max_defer_ms) ? 7 :
				luf_knob_default(k));
	for (k = 0; k < LUF_NR_KNOBS; k++)
		luf_state.knob[k] = 0;
}

LUF_KUNIT_SUITE(luf_knobs,
		KUNIT_CASE(luf_parse_table),
		KUNIT_CASE(luf_parse_not_terminated),
		KUNIT_CASE(luf_param_table),
		KUNIT_CASE(luf_param_enable),
		KUNIT_CASE(luf_knobs_defaults));

#endif /* _LUF_KNOBS_KUNIT_H */
