// SPDX-License-Identifier: GPL-2.0
/*
 * luf_workload: the demo's workload driver (not a test).
 *
 *   luf_workload reclaim --seconds N [--readers K]	MADV_PAGEOUT rounds
 *   luf_workload migrate --seconds N [--readers K]	move_pages node 0 <-> 1
 *   luf_workload memcg   --seconds N [--readers K]	memcg memory.max reclaim
 *   luf_workload demote  --seconds N [--readers K]	memcg demotion to node 1
 *
 * --rounds R instead of --seconds N: exactly R rounds (the same work in
 * every run).
 * Options: --size-mb M (file size), --dir D (where the file lives),
 * --hot-pages H (readers spin over the first H pages only; 0 = all),
 * --chunk P (migrate: at most P pages per move_pages(2) call; 0 = all),
 * --anon-mb A (migrate, reclaim: also A MiB of read-only anonymous memory,
 * which the readers read and move_pages(2) moves or MADV_PAGEOUT swaps out
 * too; needs swap on),
 * --anon-mthp (that memory 64 KiB-aligned and THP-eligible, so that a
 * 64 KiB mTHP setting makes it of 64 KiB folios).
 * The initiator runs on CPU 0 and reader i on CPU i+1.
 *
 * Output, one key=value per line:
 *   workload, seconds, readers, rounds, pages_read (reader progress),
 *   readers_active_s (seconds the readers' loops ran, summed: without the
 *   gaps in which their CPUs ran something else, e.g. other vCPUs under
 *   single-threaded TCG),
 *   bad_words (must be 0), and
 *   reclaim: pageouts (pages MADV_PAGEOUT took: PFN gone or replaced),
 *            pageout_calls
 *   migrate: pages_migrated, migrate_calls, migrate_failed
 *   memcg:   pgsteal (memcg memory.stat)
 *   demote:  pgdemote, reclaim_writes
 *   always:  nr_tlb_remote_flush, nr_tlb_remote_flush_received, tlb_irqs
 *            (deltas over the run; -1 if the kernel does not count them)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libluf.h"

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s reclaim|migrate|memcg|demote --seconds N|--rounds R [--readers K]\n"
		"          [--size-mb M] [--dir D] [--hot-pages H] [--chunk P] [--anon-mb A]\n"
		"          [--anon-mthp]\n", argv0);
	exit(2);
}

static unsigned long parse_num(const char *argv0, const char *opt, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "%s: bad value '%s' for %s\n", argv0, s, opt);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct luf_run_opts o;
	struct luf_run_res r;
	enum luf_wl kind;
	long seconds = -1, readers = -1, rounds = 0;
	int i, ret, ncpu = nr_cpus();

	if (argc < 2)
		usage(argv[0]);
	if (!strcmp(argv[1], "reclaim"))
		kind = LUF_WL_PAGEOUT;
	else if (!strcmp(argv[1], "migrate"))
		kind = LUF_WL_MIGRATE;
	else if (!strcmp(argv[1], "memcg"))
		kind = LUF_WL_MEMCG;
	else if (!strcmp(argv[1], "demote"))
		kind = LUF_WL_DEMOTE;
	else
		usage(argv[0]);
	luf_run_opts_default(&o, kind);

	for (i = 2; i < argc; i++) {
		const char *opt = argv[i];

		if (!strcmp(opt, "--anon-mthp")) {
			o.anon_mthp = true;
			continue;
		}
		if (i + 1 >= argc)
			usage(argv[0]);
		if (!strcmp(opt, "--seconds"))
			seconds = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--readers"))
			readers = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--size-mb"))
			o.size = parse_num(argv[0], opt, argv[++i]) << 20;
		else if (!strcmp(opt, "--dir"))
			o.dir = argv[++i];
		else if (!strcmp(opt, "--hot-pages"))
			o.hot_pages = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--rounds"))
			rounds = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--chunk"))
			o.migrate_chunk = parse_num(argv[0], opt, argv[++i]);
		else if (!strcmp(opt, "--anon-mb"))
			o.anon_size = parse_num(argv[0], opt, argv[++i]) << 20;
		else
			usage(argv[0]);
	}
	if ((seconds < 0) == !rounds)
		usage(argv[0]);
	if (readers >= 0) {
		if (readers > LUF_MAX_READERS || readers > ncpu - 1) {
			fprintf(stderr, "%s: --readers %ld: need 1 + %ld CPUs, have %d (max %d readers)\n",
				argv[0], readers, readers, ncpu, LUF_MAX_READERS);
			return 2;
		}
		o.nr_readers = readers;
		for (i = 0; i < readers; i++)
			o.reader_cpus[i] = i + 1;
	}
	/* a fixed amount of work, or at least @seconds of it */
	o.seconds = rounds ? 0 : seconds;
	o.min_rounds = rounds ? rounds : 1;
	o.max_rounds = rounds;
	o.memcg_max = o.size / 2;
	o.reclaim_bytes = o.size / 2;

	ret = luf_run(kind, &o, &r);
	if (ret) {
		fprintf(stderr, "%s: %s\n", argv[0], r.err);
		return 1;
	}
	printf("workload=%s\n", argv[1]);
	printf("seconds=%.2f\n", r.elapsed);
	printf("readers=%d\n", o.nr_readers);
	printf("rounds=%" PRIu64 "\n", r.rounds);
	printf("pages_read=%" PRIu64 "\n", r.pages_read);
	printf("readers_active_s=%.3f\n", r.readers_active);
	printf("bad_words=%" PRIu64 "\n", r.bad_words);
	switch (kind) {
	case LUF_WL_PAGEOUT:
		printf("pageouts=%" PRIu64 "\n", r.pages_evicted);
		printf("pageout_calls=%" PRIu64 "\n", r.pageout_calls);
		break;
	case LUF_WL_MIGRATE:
		printf("pages_migrated=%" PRIu64 "\n", r.pages_migrated);
		printf("migrate_calls=%" PRIu64 "\n", r.migrate_calls);
		printf("migrate_failed=%" PRIu64 "\n", r.migrate_failed);
		break;
	case LUF_WL_MEMCG:
		printf("pgsteal=%" PRIu64 "\n", r.memcg_pgsteal);
		printf("memcg_other_kb=%" PRIu64 "\n", r.memcg_other >> 10);
		break;
	case LUF_WL_DEMOTE:
		printf("pgdemote=%" PRIu64 "\n", r.sys.pgdemote);
		printf("reclaim_writes=%" PRIu64 "\n", r.reclaim_writes);
		break;
	}
	if (r.sys.has_tlb_vmstat) {
		printf("nr_tlb_remote_flush=%" PRIu64 "\n", r.sys.tlb_remote_flush);
		printf("nr_tlb_remote_flush_received=%" PRIu64 "\n",
		       r.sys.tlb_remote_received);
	} else {
		printf("nr_tlb_remote_flush=-1\n");
		printf("nr_tlb_remote_flush_received=-1\n");
	}
	printf("tlb_irqs=%" PRIu64 "\n", r.sys.tlb_irqs);
	return r.bad_words ? 1 : 0;
}
