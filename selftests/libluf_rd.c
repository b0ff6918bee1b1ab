// SPDX-License-Identifier: GPL-2.0
/*
 * libluf: the reader engine.  Threads pinned one per CPU spin over a
 * mapping and hand every word they read to a check callback (struct
 * luf_rd); optionally a read that faults is caught (SIGSEGV/SIGBUS with
 * sigsetjmp()) and judged by a second callback.  Each pass reads every
 * word, or with @sample one word of each page (a different one each
 * pass).  The workload drivers (luf_readers_start(): luf_pattern()
 * content) and the correctness oracles (oracle.h: old, new, zeroed or
 * faulting content around a publication) use it.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "libluf.h"

static __thread sigjmp_buf rd_env;
static __thread volatile sig_atomic_t rd_armed;

static void rd_signal(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (rd_armed)
		siglongjmp(rd_env, sig);
	/* not a reader: the faulting access runs again and kills us */
	signal(sig, SIG_DFL);
}

static int rd_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = rd_signal;
	/* no mask change, so siglongjmp needs no sigprocmask */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL))
		return -errno;
	return 0;
}

__attribute__((noinline)) void luf_prefault_stack(size_t bytes)
{
	char *buf = alloca(bytes);

	memset(buf, 0, bytes);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static void rd_note(struct luf_rd_stats *st, int kind, size_t i, uint64_t v)
{
	if (st->have_first)
		return;
	st->have_first = 1;
	st->first_kind = kind;
	st->first_idx = i;
	st->first_val = v;
}

static void rd_bad(const struct luf_rd *c, struct luf_rd_stats *st, int kind,
		   size_t i, uint64_t v)
{
	atomic_fetch_add_explicit(&st->bad[kind], 1, memory_order_relaxed);
	if (kind == LUF_RD_CORRUPT && c->mark && v == c->mark)
		st->marked++;
	rd_note(st, kind, i, v);
}

/*
 * ->active_time: the time the reader's loop ran, without the gaps in which
 * its CPU did something else (under single-threaded TCG: QEMU running the
 * other vCPUs; a reader blocked in a fault).  A gap is a step between two
 * looks at the clock longer than LUF_RD_GAP_NS; the loop looks every 64
 * pages read (sampled) and at the end of every pass.
 */
#define LUF_RD_GAP_NS	2000000ULL

static inline void rd_tick(struct luf_rd_stats *st)
{
	struct timespec ts;
	uint64_t now, d;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	d = now - st->tick_ns;
	if (st->tick_ns && d < LUF_RD_GAP_NS)
		st->active_ns += d;
	st->tick_ns = now;
}

static inline bool rd_pausing(struct luf_rd *c)
{
	return atomic_load_explicit(&c->pause, memory_order_acquire) &&
	       !atomic_load_explicit(&c->stop, memory_order_relaxed);
}

/*
 * How long to wait for the readers, for @s seconds at 4 CPUs: under
 * single-threaded TCG every vCPU is a time slice of one host thread, so
 * with more vCPUs each reader gets proportionally less of a second, and
 * there are proportionally more readers faulting the same pages in
 * through one memcg: the wait grows with the square of the CPUs (16:
 * 16 times).  It only bounds a hang.
 */
static double rd_wait_s(double s)
{
	double f = sysconf(_SC_NPROCESSORS_ONLN) / 4.0;

	return f > 1 ? s * f * f : s;
}

static void *rd_fn(void *arg)
{
	struct luf_rd_slot *slot = arg;
	struct luf_rd *c = slot->c;
	struct luf_rd_stats *st = &c->st[slot->idx];
	volatile size_t i, first_i;
	volatile uint64_t pass = 0;
	volatile int pub;
	size_t step = c->sample ? c->wpp : 1, end;
	struct rusage ru0, ru1;
	int err;

	err = pin_to_cpu(c->cpus[slot->idx]);
	if (err) {
		int zero = 0;

		atomic_compare_exchange_strong(&c->err, &zero, err);
		atomic_fetch_add(&c->ready, 1);
		return NULL;
	}
	luf_prefault_stack(128 << 10);
	getrusage(RUSAGE_THREAD, &ru0);
	rd_armed = !!c->fault_ok;
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		if (rd_pausing(c)) {
			atomic_fetch_add(&c->paused, 1);
			while (rd_pausing(c))
				;
			atomic_fetch_sub(&c->paused, 1);
			continue;
		}
		pub = atomic_load_explicit(&c->published, memory_order_acquire);
		first_i = c->sample ? (pass * 7 + slot->idx) % c->wpp : 0;
		i = first_i;
		if (c->fault_ok && sigsetjmp(rd_env, 0)) {
			size_t at = i;

			st->faults++;
			if (pub)
				st->post_faults++;
			if (!c->fault_ok(c, at, pub))
				rd_bad(c, st, LUF_RD_BAD_FAULT, at, 0);
			/* the rest of the page has the same translation */
			i = (at / c->wpp + 1) * c->wpp + (c->sample ? first_i : 0);
		}
		for (; i < c->words; i += step) {
			uint64_t v = c->base[i];
			int k = c->check(c, i, v, pub);

			if (k != LUF_RD_OK)
				rd_bad(c, st, k, i, v);
			if (c->sample && (i / step & 63) == 63) {
				if (c->active_time)
					rd_tick(st);
				if (atomic_load_explicit(&c->stop, memory_order_relaxed))
					break;
			}
		}
		if (c->active_time)
			rd_tick(st);
		end = i < c->words ? i : c->words;
		if (end > first_i)
			atomic_fetch_add_explicit(&st->words,
						  (end - first_i + step - 1) / step,
						  memory_order_relaxed);
		if (i < c->words)
			continue;	/* stopped in the middle */
		atomic_fetch_add_explicit(&st->passes, 1, memory_order_relaxed);
		if (pub)
			atomic_fetch_add_explicit(&st->post_passes, 1,
						  memory_order_relaxed);
		if (!pass)
			atomic_fetch_add(&c->ready, 1);
		pass++;
		if (c->pause_us)
			usleep(c->pause_us);
	}
	rd_armed = 0;
	getrusage(RUSAGE_THREAD, &ru1);
	st->preempted = ru1.ru_nivcsw - ru0.ru_nivcsw;
	st->slept = ru1.ru_nvcsw - ru0.ru_nvcsw;
	if (!pass)
		atomic_fetch_add(&c->ready, 1);
	return NULL;
}

void luf_rd_stop(struct luf_rd *c)
{
	int i;

	if (!c)
		return;
	atomic_store(&c->stop, 1);
	for (i = 0; i < c->n; i++)
		pthread_join(c->th[i], NULL);
	c->n = 0;
}

int luf_rd_start(struct luf_rd *c, const void *base, size_t words,
		 const int *cpus, int n)
{
	double t0 = luf_now();
	int i, err;

	if (n < 1 || n > LUF_MAX_READERS || !c->check)
		return -EINVAL;
	c->base = base;
	c->words = words;
	c->wpp = luf_page_size() / 8;
	if (c->fault_ok) {
		err = rd_handlers();
		if (err)
			return err;
	}
	for (i = 0; i < n; i++) {
		c->cpus[i] = cpus ? cpus[i] : 1 + i;
		c->slot[i].c = c;
		c->slot[i].idx = i;
		err = pthread_create(&c->th[i], NULL, rd_fn, &c->slot[i]);
		if (err) {
			luf_rd_stop(c);
			return -err;
		}
		c->n++;
	}
	while (atomic_load(&c->ready) < n) {
		if (luf_now() - t0 > rd_wait_s(30)) {
			luf_rd_stop(c);
			return -ETIMEDOUT;
		}
		luf_msleep(1);
	}
	err = atomic_load(&c->err);
	if (err)
		luf_rd_stop(c);
	return err;
}

int luf_rd_pause(struct luf_rd *c)
{
	double t0 = luf_now();

	atomic_store_explicit(&c->pause, 1, memory_order_release);
	while (atomic_load(&c->paused) < c->n) {
		if (luf_now() - t0 > rd_wait_s(10))
			return -ETIMEDOUT;
		luf_msleep(1);
	}
	return 0;
}

void luf_rd_resume(struct luf_rd *c)
{
	atomic_store_explicit(&c->pause, 0, memory_order_release);
}

void luf_rd_publish(struct luf_rd *c)
{
	c->t_pub = luf_now();
	atomic_store_explicit(&c->published, 1, memory_order_release);
}

bool luf_rd_hold(struct luf_rd *c, unsigned int ms, uint64_t passes)
{
	int i;

	for (;;) {
		double el = luf_now() - c->t_pub;
		bool done = el * 1000 >= ms;

		for (i = 0; i < c->n; i++)
			if (atomic_load_explicit(&c->st[i].post_passes,
						 memory_order_relaxed) < passes)
				done = false;
		if (done)
			return true;
		if (el > 60)
			return false;
		luf_msleep(10);
	}
}

double luf_rd_active_s(const struct luf_rd *c)
{
	uint64_t ns = 0;
	int i;

	for (i = 0; i < LUF_MAX_READERS; i++)
		ns += c->st[i].active_ns;
	return ns / 1e9;
}

uint64_t luf_rd_count(const struct luf_rd *c, enum luf_rd_kind kind)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < LUF_MAX_READERS; i++)
		n += kind == LUF_RD_OK ?
		     atomic_load(&c->st[i].words) : atomic_load(&c->st[i].bad[kind]);
	return n;
}

/* ---- the workload readers -------------------------------------------- */

static int check_pattern(const struct luf_rd *c, size_t i, uint64_t v,
			 bool pub)
{
	(void)c;
	(void)pub;
	return v == luf_pattern((uint64_t)i * 8) ? LUF_RD_OK : LUF_RD_CORRUPT;
}

int luf_readers_start(struct luf_rd *r, const char *base, size_t npages,
		      const int *cpus, int n, unsigned int pause_us)
{
	memset(r, 0, sizeof(*r));
	r->check = check_pattern;
	r->sample = true;
	r->active_time = true;
	r->pause_us = pause_us;
	return luf_rd_start(r, base, npages * (luf_page_size() / 8),
			    cpus, n);
}
