// SPDX-License-Identifier: GPL-2.0
/*
 * libluf: luf_quiet_cpus().  Anything run on a reader CPU flushes its TLB (a CR3 switch; a kthread,
 * as leaving lazy TLB mode sees the tlb_gen the deferred unmap moved): it hides a missing flush.
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

#define PF_KTHREAD	0x00200000	/* /proc/<pid>/stat: 7th field after the last ")" */

static pid_t moved_pid[1024];
static cpu_set_t moved_mask[1024];
/* the files written (up to 256 IRQ affinities, then three knobs) and what they held */
static char saved_path[256 + 3][64], saved_val[256 + 3][128];
static unsigned int nr_moved, nr_saved;
static pid_t quiet_owner;

void luf_quiet_restore(void)
{
	if (getpid() != quiet_owner)	/* not in a child that exits */
		return;
	for (; nr_moved; nr_moved--)
		sched_setaffinity(moved_pid[nr_moved - 1], sizeof(cpu_set_t),
				  &moved_mask[nr_moved - 1]);
	for (; nr_saved; nr_saved--)
		write_file_str(saved_path[nr_saved - 1], saved_val[nr_saved - 1]);
}

static void quiet_signal(int sig)
{
	luf_quiet_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void save_and_write(const char *path, const char *val)
{
	char *old = saved_val[nr_saved];

	if (read_file(path, old, sizeof(saved_val[0])) <= 0)
		return;
	old[strcspn(old, "\n")] = '\0';
	snprintf(saved_path[nr_saved], sizeof(saved_path[0]), "%s", path);
	if (!write_file_str(path, val) && old[0])
		nr_saved++;
}

void luf_quiet_cpus(void)
{
	char path[64], buf[1024], *p;
	unsigned long flags;
	struct dirent *de;
	cpu_set_t mask, zero;
	DIR *d;
	int id;

	if (!luf_env()->quiet || quiet_owner)
		return;
	quiet_owner = getpid();
	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	d = opendir("/proc");
	while (d && nr_moved < ARRAY_SIZE(moved_pid) && (de = readdir(d))) {
		id = atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/%d/stat", id);
		p = id > 0 && read_file(path, buf, sizeof(buf)) > 0 ? strrchr(buf, ')') : NULL;
		if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1 ||
		    !(flags & PF_KTHREAD) || sched_getaffinity(id, sizeof(mask), &mask) ||
		    CPU_COUNT(&mask) < 2 || sched_setaffinity(id, sizeof(zero), &zero))
			continue;	/* not a kthread, or a per-CPU one */
		moved_pid[nr_moved] = id;
		moved_mask[nr_moved++] = mask;
	}
	if (d)
		closedir(d);
	d = opendir("/proc/irq");	/* device IRQs, and the work their completions queue */
	while (d && nr_saved < ARRAY_SIZE(saved_path) - 3 && (de = readdir(d))) {
		id = atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity", id);
		if (id > 0 || !strcmp(de->d_name, "0"))
			save_and_write(path, "1");
	}
	if (d)
		closedir(d);
	save_and_write("/sys/devices/virtual/workqueue/cpumask", "1");
	save_and_write("/proc/sys/vm/stat_interval", "60");
	/* NUMA balancing's change_prot_numa() keeps a flush pending: luf.ko defers no unmap then */
	save_and_write("/proc/sys/kernel/numa_balancing", "0");
	atexit(luf_quiet_restore);
	signal(SIGTERM, quiet_signal);	/* what the runner's watchdog sends first */
	signal(SIGINT, quiet_signal);
}
