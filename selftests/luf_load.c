// SPDX-License-Identifier: GPL-2.0
/*
 * luf_load: loading and unloading luf.ko.
 *
 * - load creates /sys/kernel/mm/luf, whose knobs are 0644, read as one
 *   decimal number and a newline and are module parameters too, and
 *   /sys/kernel/debug/luf/stat, 0444, one "<name> <value>" line per
 *   counter;
 * - a second load fails with EEXIST and leaves the loaded module alone;
 * - unload removes both directories;
 * - the knobs are module parameters that set their initial values;
 * - a load with a bad value of a parameter fails with EINVAL and leaves
 *   nothing behind;
 * - load/unload can be repeated.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "luf_test.h"

/* Knob @i of the module's list; NULL past its end */
static const char *luf_knob_name(int i)
{
	int n = 0;

#define LUF_KNOB(knob, ...)	do { if (n++ == i) return #knob; } while (0)
#include "luf_knob_defs.h"
#undef LUF_KNOB
	return NULL;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Both interface directories are there: every file of the sysfs one a
 * knob (0644, one decimal number) that is also a module parameter, and
 * the debugfs one holding the counters' stat file (0444, one
 * "<name> <decimal>" line per counter, no name twice).
 */
static void check_interfaces(struct __test_metadata *_metadata)
{
	struct luf_stat *st = malloc(sizeof(*st));
	char path[512];
	struct dirent *de;
	int knobs = 0, i, j, ret;
	uint64_t v;
	DIR *d;

	ASSERT_NE(NULL, st);
	ASSERT_TRUE(luf_is_loaded());
	ASSERT_TRUE(is_dir(LUF_SYSFS_DIR)) TH_LOG("%s missing", LUF_SYSFS_DIR);
	ASSERT_TRUE(is_dir(LUF_DEBUGFS_DIR)) TH_LOG("%s missing", LUF_DEBUGFS_DIR);

	d = opendir(LUF_SYSFS_DIR);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		knobs++;
		luf_knob_path(de->d_name, path, sizeof(path));
		ASSERT_EQ(0644, file_mode(path))
			TH_LOG("%s: mode %o, want 0644", path, file_mode(path));
		ASSERT_EQ(0, read_u64_strict(path, &v))
			TH_LOG("%s does not read as one decimal number", path);
		snprintf(path, sizeof(path), "%s/parameters/%s", LUF_MODULE_DIR,
			 de->d_name);
		ASSERT_TRUE(path_exists(path)) TH_LOG("knob %s is no module parameter",
						     de->d_name);
	}
	closedir(d);
	ASSERT_LT(0, knobs) TH_LOG("no knobs in %s", LUF_SYSFS_DIR);

	ASSERT_EQ(0444, file_mode(LUF_STAT_FILE))
		TH_LOG("%s: mode %o, want 0444", LUF_STAT_FILE, file_mode(LUF_STAT_FILE));
	ret = luf_stat_read(st);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", LUF_STAT_FILE, strerror(-ret));
	ASSERT_LT(0, st->n) TH_LOG("%s is empty", LUF_STAT_FILE);
	for (i = 0; i < st->n; i++)
		for (j = 0; j < i; j++)
			ASSERT_STRNE(st->line[i].name, st->line[j].name)
				TH_LOG("%s twice in %s", st->line[i].name, LUF_STAT_FILE);
	free(st);
}

static void check_gone(struct __test_metadata *_metadata)
{
	ASSERT_FALSE(luf_is_loaded());
	ASSERT_FALSE(path_exists(LUF_SYSFS_DIR)) TH_LOG("%s still there", LUF_SYSFS_DIR);
	ASSERT_FALSE(path_exists(LUF_DEBUGFS_DIR)) TH_LOG("%s still there", LUF_DEBUGFS_DIR);
}

FIXTURE(luf_load) {
	int unused;
};

FIXTURE_SETUP(luf_load)
{
	ASSERT_EQ(0, luf_ensure_unloaded()) TH_LOG("cannot unload a stale luf");
	check_gone(_metadata);
}

FIXTURE_TEARDOWN(luf_load)
{
	luf_ensure_unloaded();
}

TEST_F(luf_load, load_creates_interfaces)
{
	int ret = luf_load("");

	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	check_interfaces(_metadata);
}

TEST_F(luf_load, second_load_eexist)
{
	int ret;

	ASSERT_EQ(0, luf_load(""));
	ret = luf_load("");
	ASSERT_EQ(-EEXIST, ret) TH_LOG("second load returned %d (%s)", ret,
				      strerror(-ret));
	/* the first instance is untouched */
	check_interfaces(_metadata);
}

TEST_F(luf_load, unload_removes_interfaces)
{
	ASSERT_EQ(0, luf_load(""));
	check_interfaces(_metadata);
	ASSERT_EQ(0, luf_unload());
	check_gone(_metadata);
	ASSERT_EQ(-ENOENT, luf_unload());
}

/*
 * The kernel only warns about unknown parameter names; the module's own
 * parameters must refuse what they do not allow: debug_break any broken
 * mode without allow_unsafe=1 given first, values out of range, junk; the
 * knobs exactly what their sysfs files refuse.
 */
TEST_F(luf_load, bad_params_rejected)
{
	static const char * const bad[] = {
		"debug_break=1",
		"debug_break=3 allow_unsafe=1",
		"allow_unsafe=1 debug_break=8",
		"allow_unsafe=1 debug_break=-1",
		"allow_unsafe=1 debug_break=1x",
		"allow_unsafe=1 debug_break=",
	};
	/*
	 * Parsed by the sysfs files' parser: EINVAL like a bad write.  Junk
	 * here; each knob just outside its range (the module's list) below.
	 */
	static const char * const junk[] = {
		"enabled=-1",
		"observe=0x1",
		"enabled=1 max_pending_kb=1x",
	};
	char bad_knob[ARRAY_SIZE(junk) + 2 * 16][64];
	uint64_t def, lo, hi;
	unsigned int i, n = 0;
	const char *knob;
	int ret;

	for (i = 0; i < ARRAY_SIZE(junk); i++)
		snprintf(bad_knob[n++], sizeof(bad_knob[0]), "%s", junk[i]);
	for (i = 0; (knob = luf_knob_name(i)); i++) {
		ASSERT_GE(ARRAY_SIZE(bad_knob), n + 2);
		ASSERT_EQ(0, luf_knob_limits(knob, &def, &lo, &hi));
		if (lo > 0)
			snprintf(bad_knob[n++], sizeof(bad_knob[0]), "%s=%" PRIu64,
				 knob, lo - 1);
		snprintf(bad_knob[n++], sizeof(bad_knob[0]), "%s=%" PRIu64, knob, hi + 1);
	}

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = luf_load(bad[i]);
		ASSERT_NE(0, ret) TH_LOG("load with \"%s\" succeeded", bad[i]);
		TH_LOG("\"%s\": %s", bad[i], strerror(-ret));
		check_gone(_metadata);
	}
	for (i = 0; i < n; i++) {
		ret = luf_load(bad_knob[i]);
		ASSERT_EQ(-EINVAL, ret)
			TH_LOG("load with \"%s\": %d (%s), want EINVAL",
			       bad_knob[i], ret, strerror(-ret));
		check_gone(_metadata);
	}
	/* a rejected load leaves nothing that blocks the next one */
	ASSERT_EQ(0, luf_load(""));
	check_interfaces(_metadata);
}

/* modprobe luf enabled=1 ...: the parameters are the knobs' first values */
TEST_F(luf_load, knob_params_set_initial_values)
{
	static const struct { const char *name; uint64_t want; } set[] = {
		{ KNOB(enabled), 1 }, { KNOB(migrc_enabled), 1 }, { KNOB(observe), 0 },
		{ KNOB(max_defer_ms), 1234 }, { KNOB(max_pending_kb), 2048 },
	};
	char path[128];
	unsigned int i;
	uint64_t v;

	ASSERT_EQ(0, luf_load("enabled=1 migrc_enabled=1 observe=0 "
			      "max_defer_ms=1234 max_pending_kb=2048"));
	for (i = 0; i < ARRAY_SIZE(set); i++) {
		ASSERT_EQ(0, luf_knob_read(set[i].name, &v))
			TH_LOG("%s", set[i].name);
		ASSERT_EQ(set[i].want, v) TH_LOG("knob %s", set[i].name);
		snprintf(path, sizeof(path), "/sys/module/luf/parameters/%s",
			 set[i].name);
		ASSERT_EQ(0, read_u64_strict(path, &v)) TH_LOG("%s", path);
		ASSERT_EQ(set[i].want, v) TH_LOG("%s", path);
	}
}

TEST_F(luf_load, reload)
{
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, luf_load("")) TH_LOG("load #%d", i + 1);
		check_interfaces(_metadata);
		ASSERT_EQ(0, luf_unload()) TH_LOG("unload #%d", i + 1);
		check_gone(_metadata);
	}
}

LUF_MAIN(LUF_NEED_MODULE)
