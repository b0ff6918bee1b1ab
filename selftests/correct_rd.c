// SPDX-License-Identifier: GPL-2.0
/*
 * The readers of the luf correctness programs (see correct.h): libluf's
 * reader engine on CPUs 1..NREADERS, checking every word against the old
 * and new content of the test file (RD_CONTENT) or that accesses of a
 * range fault once published (RD_FAULT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* no test here: the harness itself is not needed */
#define LUF_CORRECT_NO_HARNESS
#include "correct.h"

static const char *const kind_name[] = {
	[LUF_RD_STALE] = "old content after the publication",
	[LUF_RD_CORRUPT] = "foreign content",
	[LUF_RD_BAD_FAULT] = "unexpected fault",
	[LUF_RD_READ_AFTER] = "successful read after the signal",
};

static inline const struct rd_ctl *ctl_of(const struct luf_rd *rd)
{
	return (const struct rd_ctl *)rd;	/* the first member */
}

static inline uint64_t rd_old(const struct rd_ctl *c, size_t i)
{
	return word(i, c->old_gen);
}

static inline uint64_t rd_new(const struct rd_ctl *c, size_t i)
{
	return i >= c->zlo && i < c->zhi ? 0 : word(i, c->new_gen);
}

static int rd_check(const struct luf_rd *rd, size_t i, uint64_t v, bool pub)
{
	const struct rd_ctl *c = ctl_of(rd);

	if (c->mode == RD_FAULT) {
		if (pub && i >= c->flo && i < c->fhi)
			return LUF_RD_READ_AFTER;
		return v == rd_old(c, i) ? LUF_RD_OK : LUF_RD_CORRUPT;
	}
	if (v == rd_new(c, i))
		return LUF_RD_OK;
	if (v == rd_old(c, i))
		return pub ? LUF_RD_STALE : LUF_RD_OK;
	return LUF_RD_CORRUPT;
}

static bool rd_fault_ok(const struct luf_rd *rd, size_t i, bool pub)
{
	const struct rd_ctl *c = ctl_of(rd);

	if (c->mode == RD_FAULT)
		return pub ? i >= c->flo && i < c->fhi : c->fault_ok_before;
	return !pub && c->fault_ok_before;
}

/* Fresh anonymous memory for @c, so that no write to it is a COW fault */
struct rd_ctl *rd_alloc(void)
{
	struct rd_ctl *c;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->rd.check = rd_check;
	c->rd.fault_ok = rd_fault_ok;
	c->rd.mark = POISON;
	return c;
}

void rd_stop(struct rd_ctl *c)
{
	if (c)
		luf_rd_stop(&c->rd);
}

int rd_start(struct rd_ctl *c, const void *base, size_t words)
{
	static const int cpus[NREADERS] = { 1, 2, 3 };

	return luf_rd_start(&c->rd, base, words, cpus, NREADERS);
}

/* See luf_rd_pause(): not with a signal, since x86 signal delivery
 * writes PKRU, and TCG flushes a vCPU's whole soft TLB on every PKRU
 * change.
 */
int rd_pause(struct rd_ctl *c)
{
	return luf_rd_pause(&c->rd);
}

void rd_resume(struct rd_ctl *c)
{
	luf_rd_resume(&c->rd);
}

void rd_publish(struct rd_ctl *c)
{
	mark("publish");
	luf_rd_publish(&c->rd);
}

/*
 * Let the readers check for HOLD_MS after the publication, and until each
 * has made MIN_POST_PASSES passes that began after it.  False on timeout.
 */
bool rd_hold(struct rd_ctl *c)
{
	return luf_rd_hold(&c->rd, HOLD_MS, MIN_POST_PASSES);
}

void rd_summary(struct rd_ctl *c, struct rd_sum *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < NREADERS; i++) {
		struct luf_rd_stats *st = &c->rd.st[i];
		uint64_t stale = atomic_load(&st->bad[LUF_RD_STALE]);
		uint64_t corrupt = atomic_load(&st->bad[LUF_RD_CORRUPT]);
		uint64_t bad_fault = atomic_load(&st->bad[LUF_RD_BAD_FAULT]);
		uint64_t read_after = atomic_load(&st->bad[LUF_RD_READ_AFTER]);

		s->passes += atomic_load(&st->passes);
		s->post_passes += atomic_load(&st->post_passes);
		s->faults += st->faults;
		s->post_faults += st->post_faults;
		s->stale += stale;
		s->corrupt += corrupt;
		s->poison += st->marked;
		s->bad_fault += bad_fault;
		s->read_after += read_after;
		note("reader %d (CPU %d): passes=%" PRIu64 " after=%" PRIu64
		     " faults=%" PRIu64 " stale=%" PRIu64 " corrupt=%" PRIu64
		     " read_after=%" PRIu64 " bad_fault=%" PRIu64
		     " preempted=%" PRIu64 " slept=%" PRIu64 "\n",
		     i, 1 + i, (uint64_t)atomic_load(&st->passes),
		     (uint64_t)atomic_load(&st->post_passes), st->faults,
		     stale, corrupt, read_after, bad_fault, st->preempted,
		     st->slept);
		if (st->have_first)
			note("  first: %s at word %zu (page %zu): 0x%016" PRIx64
			     " (want 0x%016" PRIx64 ", old 0x%016" PRIx64 ")\n",
			     kind_name[st->first_kind], st->first_idx,
			     st->first_idx / c->rd.wpp, st->first_val,
			     rd_new(c, st->first_idx), rd_old(c, st->first_idx));
	}
}
