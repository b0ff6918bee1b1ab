// SPDX-License-Identifier: GPL-2.0
/*
 * luf_knobs: the /sys/kernel/mm/luf knobs, one fixture variant per knob of
 * the module's list (luf_knob_defs.h, with its defaults and ranges).
 *
 * - the default after a fresh load;
 * - accepted values (range ends, a middle value, with and without one
 *   trailing newline) read back exactly as "<decimal>\n";
 * - malformed or out-of-range writes fail with EINVAL and leave the value
 *   unchanged; a zero-byte write (which sysfs never passes to the module)
 *   changes nothing either;
 * - an unprivileged writer (uid/gid 65534) gets EACCES/EPERM and changes
 *   nothing, while it can still read the knob;
 * - the debugfs counters cannot be written, not even by root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "luf_test.h"

FIXTURE(knob) {
	uint64_t lo, hi, def;	/* resolved for this machine */
	char path[256];
};

FIXTURE_VARIANT(knob) {
	const char *name;
};

#define LUF_KNOB(n, ...)	FIXTURE_VARIANT_ADD(knob, n) { .name = #n }
#include "luf_knob_defs.h"
#undef LUF_KNOB

FIXTURE_SETUP(knob)
{
	int ret;

	ASSERT_EQ(0, luf_knob_limits(variant->name, &self->def, &self->lo, &self->hi));
	ret = luf_module_fresh("");
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
	luf_knob_path(variant->name, self->path, sizeof(self->path));
}

FIXTURE_TEARDOWN(knob)
{
	luf_ensure_unloaded();
}

static uint64_t knob_get(struct __test_metadata *_metadata, const char *path)
{
	uint64_t v = 0;

	ASSERT_EQ(0, read_u64_strict(path, &v))
		TH_LOG("%s does not read as \"<decimal>\\n\"", path);
	return v;
}

/* Set the knob to @v (decimal, no newline) and check it took. */
static void knob_set(struct __test_metadata *_metadata, const char *path,
		     uint64_t v)
{
	char buf[32];
	int ret;

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	ret = write_file_str(path, buf);
	ASSERT_EQ(0, ret) TH_LOG("writing \"%s\" to %s: %s", buf, path, strerror(-ret));
	ASSERT_EQ(v, knob_get(_metadata, path));
}

/* A valid value other than the default. */
static uint64_t other_value(FIXTURE_DATA(knob) *self)
{
	return self->def == self->hi ? self->lo : self->hi;
}

TEST_F(knob, default_value)
{
	uint64_t v = knob_get(_metadata, self->path);

	ASSERT_EQ(self->def, v) TH_LOG("%s: default %" PRIu64 ", want %" PRIu64,
				      variant->name, v, self->def);
}

TEST_F(knob, accepts_valid)
{
	uint64_t mid = self->lo + (self->hi - self->lo) / 2;
	uint64_t vals[] = { self->lo, self->hi, mid, self->hi, self->lo };
	char buf[32];
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		/* alternate: without and with the optional trailing newline */
		snprintf(buf, sizeof(buf), "%" PRIu64 "%s", vals[i], i % 2 ? "\n" : "");
		ret = write_file_str(self->path, buf);
		ASSERT_EQ(0, ret) TH_LOG("%s: writing \"%" PRIu64 "%s\": %s",
					 variant->name, vals[i], i % 2 ? "\\n" : "",
					 strerror(-ret));
		ASSERT_EQ(vals[i], knob_get(_metadata, self->path));
	}
}

TEST_F(knob, rejects_invalid)
{
	static const char *const bad[] = {
		"\n", "abc", "1x", " 1", "1 ", "-1", "+1x", "0x10", "1 2",
		"1\n\n", "\n1", "1.0", "99999999999999999999",
		"18446744073709551616", "184467440737095516161",
	};
	uint64_t keep = other_value(self);
	char range[4][32];
	int nrange = 0, i, ret;

	knob_set(_metadata, self->path, keep);

	for (i = 0; i < (int)ARRAY_SIZE(bad); i++) {
		ret = write_file_str(self->path, bad[i]);
		ASSERT_EQ(-EINVAL, ret) TH_LOG("%s: input #%d (\"%s\") returned %d",
					       variant->name, i, bad[i], ret);
		ASSERT_EQ(keep, knob_get(_metadata, self->path))
			TH_LOG("%s: input #%d (\"%s\") changed the value",
			       variant->name, i, bad[i]);
	}

	/* out of range, including values that only fit after truncation */
	if (self->lo > 0)
		snprintf(range[nrange++], 32, "%" PRIu64, self->lo - 1);
	snprintf(range[nrange++], 32, "%" PRIu64, self->hi + 1);
	snprintf(range[nrange++], 32, "%" PRIu64 "\n", self->hi + 1);
	snprintf(range[nrange++], 32, "%" PRIu64, self->lo + ((uint64_t)1 << 32));
	for (i = 0; i < nrange; i++) {
		ret = write_file_str(self->path, range[i]);
		ASSERT_EQ(-EINVAL, ret) TH_LOG("%s: out-of-range \"%s\" returned %d",
					       variant->name, range[i], ret);
		ASSERT_EQ(keep, knob_get(_metadata, self->path))
			TH_LOG("%s: \"%s\" changed the value", variant->name, range[i]);
	}

	/* sysfs never hands an empty write to the module: nothing changes */
	ret = write_file(self->path, "", 0);
	ASSERT_TRUE(ret == 0 || ret == -EINVAL) TH_LOG("empty write: %d", ret);
	ASSERT_EQ(keep, knob_get(_metadata, self->path));
}

/* exit codes of the unprivileged child */
enum { NR_DENIED = 0, NR_WROTE = 1, NR_OTHER_ERR = 2, NR_SETUP = 3, NR_NOREAD = 4 };

TEST_F(knob, nonroot_write_denied)
{
	uint64_t before = knob_get(_metadata, self->path);
	uint64_t want = before == self->hi ? self->lo : self->hi;
	char buf[32];
	int status, fd;
	pid_t pid;

	snprintf(buf, sizeof(buf), "%" PRIu64, want);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char rd[64];
		ssize_t n;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(NR_SETUP);
		/* world readable */
		if (read_file(self->path, rd, sizeof(rd)) <= 0)
			_exit(NR_NOREAD);
		fd = open(self->path, O_WRONLY);
		if (fd < 0)
			_exit(errno == EACCES || errno == EPERM ? NR_DENIED : NR_OTHER_ERR);
		n = write(fd, buf, strlen(buf));
		if (n >= 0)
			_exit(NR_WROTE);
		_exit(errno == EACCES || errno == EPERM ? NR_DENIED : NR_OTHER_ERR);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_NE(NR_SETUP, WEXITSTATUS(status)) TH_LOG("cannot drop privileges");
	ASSERT_NE(NR_NOREAD, WEXITSTATUS(status)) TH_LOG("knob not readable by others");
	ASSERT_EQ(NR_DENIED, WEXITSTATUS(status))
		TH_LOG("unprivileged write of \"%s\": %s", buf,
		       WEXITSTATUS(status) == NR_WROTE ? "accepted" : "unexpected error");
	ASSERT_EQ(before, knob_get(_metadata, self->path));
	/* the same write as root does take effect */
	knob_set(_metadata, self->path, want);
}

FIXTURE(counters_ro) {
	int unused;
};

FIXTURE_SETUP(counters_ro)
{
	int ret = luf_module_fresh("");

	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", luf_ko_path(), strerror(-ret));
}

FIXTURE_TEARDOWN(counters_ro)
{
	luf_ensure_unloaded();
}

TEST_F(counters_ro, root_cannot_write)
{
	struct luf_stat *before = malloc(sizeof(*before));
	uint64_t v;
	int ret;

	ASSERT_NE(NULL, before);
	ASSERT_EQ(0, luf_stat_read(before));
	ASSERT_LT(0, before->n);
	ret = write_file_str(LUF_STAT_FILE, "deferred_folios 12345\n");
	ASSERT_NE(0, ret) TH_LOG("%s accepted a write", LUF_STAT_FILE);
	ASSERT_EQ(0, luf_counter_read(CTR(deferred_folios), &v));
	ASSERT_NE((uint64_t)12345, v) TH_LOG("%s took the written value", LUF_STAT_FILE);
	free(before);
}

LUF_MAIN(LUF_NEED_MODULE)
