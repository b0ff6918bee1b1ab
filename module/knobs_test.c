// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the pure logic of luf.ko.  Built as luf_kunit.ko; the
 * code under test is compiled into this module rather than exported.
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include "luf.h"

#include "knobs.c"

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

static struct kunit_case luf_knob_cases[] = {
	KUNIT_CASE(luf_parse_table),
	KUNIT_CASE(luf_parse_not_terminated),
	{}
};

static struct kunit_suite luf_knob_suite = {
	.name = "luf_knobs",
	.test_cases = luf_knob_cases,
};

kunit_test_suite(luf_knob_suite);

MODULE_DESCRIPTION("KUnit tests for luf.ko");
MODULE_LICENSE("GPL");
