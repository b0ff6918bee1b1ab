// SPDX-License-Identifier: GPL-2.0
/*
 * luf_hotpath: a loop over one of the hot paths the LUF hooks sit on, for
 * measuring what the hooks cost (make bench-overhead).  Not a test.
 *
 *   luf_hotpath fault --seconds S	fault in, then unmap 2 MiB of anonymous
 *					memory: handle_mm_fault, page allocation
 *					and freeing (write_fault, free_page)
 *   luf_hotpath cow --seconds S	fork a child that writes every page of
 *					2 MiB the parent touched: copy-on-write
 *					faults (write_fault), fork and exit
 *   luf_hotpath tlb --seconds S	a thread on CPU 1 keeps the mm live there;
 *					CPU 0 maps, touches and unmaps 64 pages:
 *					a full remote TLB flush per round
 *					(flush_tlb_func: cpu_flush)
 *   luf_hotpath uffd --seconds S	UFFDIO_COPY 2 MiB into a registered
 *					range, then MADV_DONTNEED it: a page
 *					installed per copied page (write_fault)
 *   luf_hotpath write --seconds S [--dir D]
 *					4 KiB pwrite()s over a 4 MiB file in D
 *					(default /tmp): write_begin (file_change)
 *
 * --pending N (any phase): first a child maps N pages of a file in D
 * read-only, reads them, and pages them out from CPU 2 while a thread of
 * it runs on CPU 3, so that with luf.ko loaded (enabled=1,
 * max_defer_ms=60000) their flush is deferred while the phase runs; the
 * child keeps the file open until the phase is done (truncating or
 * removing it would settle the deferral).  Adds "pending_before=P
 * pending_after=Q" (pending_folios) to the line.
 *
 * Prints one line: "PHASE ops=N seconds=T ops_per_sec=R", where an op is a
 * page faulted in or copied, an unmap round or a write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "libluf.h"

#define FAULT_BYTES	(2UL << 20)
#define TLB_PAGES	64
#define WRITE_BYTES	(4UL << 20)
#define CHUNK		4096UL

static int stop_spinner;

static void die(const char *what)
{
	fprintf(stderr, "luf_hotpath: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Map @bytes of anonymous memory, write one word per page, unmap it */
static unsigned long touch_unmap(size_t bytes)
{
	size_t off, page = sysconf(_SC_PAGESIZE);
	char *p;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, bytes, MADV_NOHUGEPAGE);
	for (off = 0; off < bytes; off += page)
		p[off] = 1;
	if (munmap(p, bytes))
		die("munmap");
	return bytes / page;
}

/* Fork a child that writes one word per page of @p: COW faults; pages */
static unsigned long cow_round(char *p, size_t bytes)
{
	size_t off, page = sysconf(_SC_PAGESIZE);
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		for (off = 0; off < bytes; off += page)
			p[off] = 2;
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child");
	return bytes / page;
}

/* UFFDIO_COPY from @src into the empty registered @dst, then drop it */
static unsigned long uffd_round(int uffd, char *dst, char *src, size_t bytes)
{
	struct uffdio_copy cp = {
		.dst = (unsigned long)dst,
		.src = (unsigned long)src,
		.len = bytes,
	};

	if (ioctl(uffd, UFFDIO_COPY, &cp) || cp.copy != (long long)bytes)
		die("UFFDIO_COPY");
	if (madvise(dst, bytes, MADV_DONTNEED))
		die("MADV_DONTNEED");
	return bytes / sysconf(_SC_PAGESIZE);
}

static int uffd_setup(char **dst, char **src, size_t bytes)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int uffd;

	*src = mmap(NULL, 2 * bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*src == MAP_FAILED)
		die("mmap");
	madvise(*src, 2 * bytes, MADV_NOHUGEPAGE);
	memset(*src, 3, bytes);
	*dst = *src + bytes;
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		die("userfaultfd");
	reg.range.start = (unsigned long)*dst;
	reg.range.len = bytes;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	return uffd;
}

static void *spinner(void *arg)
{
	(void)arg;
	pin_to_cpu(1);
	while (!__atomic_load_n(&stop_spinner, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* The --pending child's thread: keeps the mm live on CPU 3 */
static void *holder_spin(void *arg)
{
	volatile const char *p = arg;
	size_t i, page = sysconf(_SC_PAGESIZE);

	pin_to_cpu(3);
	while (!__atomic_load_n(&stop_spinner, __ATOMIC_RELAXED))
		for (i = 0; i < 64; i++)
			(void)p[i * page];
	return NULL;
}

/* The --pending child: see the top of the file; its exit code says why */
static int holder(const char *dir, size_t pages, int go, int st)
{
	size_t page = sysconf(_SC_PAGESIZE), len = pages * page, i;
	char path[4096], c = 'k', *buf;
	volatile const char *m;
	pthread_t th;
	int fd;

	if (pin_to_cpu(2))
		return 2;
	snprintf(path, sizeof(path), "%s/luf_hotpath.XXXXXX", dir);
	fd = mkstemp(path);
	buf = calloc(1, len);
	if (fd < 0 || !buf)
		return 3;
	unlink(path);
	memset(buf, 0x5a, len);
	/* written back and dropped: read back, the pages are clean */
	if (pwrite(fd, buf, len, 0) != (ssize_t)len || fsync(fd) ||
	    posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED))
		return 4;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 5;
	for (i = 0; i < pages; i++)
		(void)m[i * page];
	if (pthread_create(&th, NULL, holder_spin, (void *)m))
		return 6;
	usleep(100000);
	if (madvise((void *)m, len, MADV_PAGEOUT))
		return 7;
	__atomic_store_n(&stop_spinner, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	if (write(st, &c, 1) != 1)
		return 8;
	while (read(go, &c, 1) > 0)
		;
	return 0;
}

/* Start the --pending child; its pid, *@go the pipe that keeps it */
static pid_t hold_pending(const char *dir, size_t pages, int *go)
{
	int gp[2], sp[2], st;
	pid_t pid;
	char c;

	if (pipe(gp) || pipe(sp))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(gp[1]);
		close(sp[0]);
		_exit(holder(dir, pages, gp[0], sp[1]));
	}
	close(gp[0]);
	close(sp[1]);
	if (read(sp[0], &c, 1) != 1) {
		waitpid(pid, &st, 0);
		fprintf(stderr, "luf_hotpath: --pending child failed (%d)\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		exit(1);
	}
	close(sp[0]);
	*go = gp[1];
	return pid;
}

static unsigned long run(const char *phase, double secs, const char *dir)
{
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned long ops = 0;
	double end = luf_now() + secs;
	char path[4096], buf[CHUNK];
	pthread_t th;
	off_t off = 0;
	int fd;

	if (!strcmp(phase, "fault")) {
		pin_to_cpu(0);
		while (luf_now() < end)
			ops += touch_unmap(FAULT_BYTES);
	} else if (!strcmp(phase, "cow")) {
		char *p = mmap(NULL, FAULT_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		madvise(p, FAULT_BYTES, MADV_NOHUGEPAGE);
		memset(p, 1, FAULT_BYTES);
		pin_to_cpu(0);
		while (luf_now() < end)
			ops += cow_round(p, FAULT_BYTES);
		munmap(p, FAULT_BYTES);
	} else if (!strcmp(phase, "tlb")) {
		pin_to_cpu(0);
		if (pthread_create(&th, NULL, spinner, NULL))
			die("pthread_create");
		while (luf_now() < end) {
			touch_unmap(TLB_PAGES * page);
			ops++;
		}
		__atomic_store_n(&stop_spinner, 1, __ATOMIC_RELAXED);
		pthread_join(th, NULL);
	} else if (!strcmp(phase, "uffd")) {
		char *dst, *src;

		fd = uffd_setup(&dst, &src, FAULT_BYTES);
		pin_to_cpu(0);
		while (luf_now() < end)
			ops += uffd_round(fd, dst, src, FAULT_BYTES);
		close(fd);
		munmap(src, 2 * FAULT_BYTES);
	} else if (!strcmp(phase, "write")) {
		pin_to_cpu(0);
		snprintf(path, sizeof(path), "%s/luf_hotpath.XXXXXX", dir);
		fd = mkstemp(path);
		if (fd < 0)
			die(path);
		unlink(path);
		memset(buf, 0x5a, sizeof(buf));
		while (luf_now() < end) {
			if (pwrite(fd, buf, sizeof(buf), off) != sizeof(buf))
				die("pwrite");
			off = (off + CHUNK) % WRITE_BYTES;
			ops++;
		}
		close(fd);
	} else {
		return -1UL;
	}
	return ops;
}

int main(int argc, char **argv)
{
	uint64_t before = 0, after = 0;
	const char *dir = "/tmp";
	double secs = 3, t0;
	long pending = 0;
	unsigned long ops;
	pid_t holder_pid = 0;
	int i, go = -1, st;

	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--pending"))
			pending = atol(argv[i + 1]);
		else
			break;
	}
	if (argc < 2 || i != argc || secs <= 0 || pending < 0) {
		fprintf(stderr,
			"usage: %s fault|cow|tlb|uffd|write --seconds S [--dir D] [--pending N]\n",
			argv[0]);
		return 2;
	}
	if (pending) {
		holder_pid = hold_pending(dir, pending, &go);
		if (luf_counter_read(CTR(pending_folios), &before))
			die(CTR(pending_folios));
	}
	t0 = luf_now();
	ops = run(argv[1], secs, dir);
	if (ops == -1UL) {
		fprintf(stderr, "luf_hotpath: unknown phase '%s'\n", argv[1]);
		return 2;
	}
	t0 = luf_now() - t0;
	if (pending) {
		if (luf_counter_read(CTR(pending_folios), &after))
			die(CTR(pending_folios));
		close(go);
		waitpid(holder_pid, &st, 0);
	}
	printf("%s ops=%lu seconds=%.3f ops_per_sec=%.1f", argv[1], ops, t0,
	       ops / t0);
	if (pending)
		printf(" pending_before=%llu pending_after=%llu",
		       (unsigned long long)before, (unsigned long long)after);
	printf("\n");
	return 0;
}
