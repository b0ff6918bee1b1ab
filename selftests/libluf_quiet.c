// SPDX-License-Identifier: GPL-2.0
/*
 * libluf: keeping the reader CPUs of a test quiet (luf_quiet_cpus()).
 *
 * Whatever runs on a reader CPU while a test waits for a stale TLB entry
 * flushes that CPU's TLB (a CR3 switch, or a kernel thread: the deferred
 * unmap moved the mm's tlb_gen, so coming back from lazy TLB mode
 * flushes), which hides a missing flush.  A program that needs quiet
 * reader CPUs opts in by calling luf_quiet_cpus() once before its tests
 * (libluf.h).  Only the process that called it restores what it changed,
 * not a child that exits.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libluf.h"

#define PF_KTHREAD		0x00200000
#define WQ_CPUMASK		"/sys/devices/virtual/workqueue/cpumask"
#define STAT_INTERVAL		"/proc/sys/vm/stat_interval"
/*
 * A NUMA balancing scan of the test's mm (change_prot_numa()) keeps a TLB
 * flush pending while it runs, and luf.ko declines to defer an unmap then:
 * a page-out in that window defers nothing.
 */
#define NUMA_BALANCING		"/proc/sys/kernel/numa_balancing"

struct moved_kthread {
	pid_t pid;
	cpu_set_t mask;
};

struct moved_irq {
	int irq;
	char mask[64];
};

static struct moved_kthread *moved;
static int nr_moved;
static struct moved_irq *moved_irqs;
static int nr_moved_irqs;
static char saved_wq[128], saved_stat[32], saved_numa[16];

static void restore_file(const char *path, char *saved)
{
	if (saved[0])
		write_file_str(path, saved);
	saved[0] = '\0';
}

static pid_t quiet_owner;

void luf_quiet_restore(void)
{
	char path[64];
	int i;

	if (getpid() != quiet_owner)
		return;

	for (i = 0; i < nr_moved; i++)
		sched_setaffinity(moved[i].pid, sizeof(moved[i].mask), &moved[i].mask);
	nr_moved = 0;
	for (i = 0; i < nr_moved_irqs; i++) {
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity",
			 moved_irqs[i].irq);
		write_file_str(path, moved_irqs[i].mask);
	}
	nr_moved_irqs = 0;
	restore_file(WQ_CPUMASK, saved_wq);
	restore_file(STAT_INTERVAL, saved_stat);
	restore_file(NUMA_BALANCING, saved_numa);
}

static void quiet_signal(int sig)
{
	luf_quiet_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void save_and_write(const char *path, char *saved, size_t len,
			   const char *val)
{
	if (read_file(path, saved, len) <= 0) {
		saved[0] = '\0';
		return;
	}
	saved[strcspn(saved, "\n")] = '\0';
	if (write_file_str(path, val))
		saved[0] = '\0';
}

void luf_quiet_cpus(void)
{
	char path[64], buf[1024], *p;
	unsigned long flags;
	struct dirent *de;
	cpu_set_t mask, zero;
	int cap = 0;
	pid_t pid;
	DIR *d;

	if (!luf_env()->quiet || quiet_owner)
		return;
	quiet_owner = getpid();
	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		pid = (pid_t)atoi(de->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		/* flags: the 7th field after the ")" that ends comm */
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1 ||
		    !(flags & PF_KTHREAD))
			continue;
		if (sched_getaffinity(pid, sizeof(mask), &mask) || CPU_COUNT(&mask) < 2)
			continue;
		if (sched_setaffinity(pid, sizeof(zero), &zero))
			continue;	/* per-CPU kthread */
		if (nr_moved == cap) {
			struct moved_kthread *more;

			more = realloc(moved, 2 * (cap ?: 32) * sizeof(*moved));
			if (!more) {
				/* keep what was moved restorable; undo this one */
				sched_setaffinity(pid, sizeof(mask), &mask);
				break;
			}
			moved = more;
			cap = 2 * (cap ?: 32);
		}
		moved[nr_moved].pid = pid;
		moved[nr_moved].mask = mask;
		nr_moved++;
	}
	if (d)
		closedir(d);
	/* device interrupts (and the work their completions queue) too */
	cap = 0;
	d = opendir("/proc/irq");
	while (d && (de = readdir(d))) {
		struct moved_irq *m;
		int irq = atoi(de->d_name);

		if (irq <= 0 && strcmp(de->d_name, "0"))
			continue;
		if (nr_moved_irqs == cap) {
			struct moved_irq *more;

			/* not moved yet: on failure the saved ones stay restorable */
			more = realloc(moved_irqs, 2 * (cap ?: 32) * sizeof(*moved_irqs));
			if (!more)
				break;
			moved_irqs = more;
			cap = 2 * (cap ?: 32);
		}
		m = &moved_irqs[nr_moved_irqs];
		m->irq = irq;
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity", irq);
		save_and_write(path, m->mask, sizeof(m->mask), "1");
		if (m->mask[0])
			nr_moved_irqs++;
	}
	if (d)
		closedir(d);
	save_and_write(WQ_CPUMASK, saved_wq, sizeof(saved_wq), "1");
	save_and_write(STAT_INTERVAL, saved_stat, sizeof(saved_stat), "60");
	save_and_write(NUMA_BALANCING, saved_numa, sizeof(saved_numa), "0");
	atexit(luf_quiet_restore);
	/* the runner's watchdog sends SIGTERM first */
	signal(SIGTERM, quiet_signal);
	signal(SIGINT, quiet_signal);
}
