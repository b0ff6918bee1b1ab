// SPDX-License-Identifier: GPL-2.0
/* libluf: the pinned reader engine (struct luf_rd); faults are caught with sigsetjmp() */
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

__attribute__((noinline)) void luf_prefault_stack(size_t bytes)
{
	char *buf = alloca(bytes);

	memset(buf, 0, bytes);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static void rd_bad(const struct luf_rd *c, struct luf_rd_stats *st, int kind,
		   size_t i, uint64_t v)
{
	atomic_fetch_add_explicit(&st->bad[kind], 1, memory_order_relaxed);
	if (kind == LUF_RD_CORRUPT && c->mark && v == c->mark)
		st->marked++;
	if (!st->have_first) {
		st->have_first = 1;
		st->first_kind = kind;
		st->first_idx = i;
		st->first_val = v;
	}
}

/* ->active_time leaves out steps over 2 ms between looks at the clock (the CPU ran others) */
static inline void rd_tick(struct luf_rd_stats *st)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	if (st->tick_ns && now - st->tick_ns < 2000000ULL)
		st->active_ns += now - st->tick_ns;
	st->tick_ns = now;
}

static inline bool rd_pausing(struct luf_rd *c)
{
	return atomic_load_explicit(&c->pause, memory_order_acquire) &&
	       !atomic_load_explicit(&c->stop, memory_order_relaxed);
}

/*
 * 0 once *@cnt >= @n; -ETIMEDOUT @s s after @t0 at 4 CPUs, (CPUs/4)^2 times that beyond (under
 * single-threaded TCG a reader gets less time, and more readers fault pages in through one memcg)
 */
static int rd_wait(atomic_int *cnt, int n, double t0, double s)
{
	while (atomic_load(cnt) < n) {
		double f = sysconf(_SC_NPROCESSORS_ONLN) / 4.0;

		if (luf_now() - t0 > (f > 1 ? s * f * f : s))
			return -ETIMEDOUT;
		luf_msleep(1);
	}
	return 0;
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
	int err = pin_to_cpu(c->cpus[slot->idx]);

	if (err) {
		atomic_compare_exchange_strong(&c->err, &(int){ 0 }, err);
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
			atomic_fetch_add_explicit(&st->words, (end - first_i + step - 1) / step,
						  memory_order_relaxed);
		if (i < c->words)
			continue;	/* stopped in the middle */
		atomic_fetch_add_explicit(&st->passes, 1, memory_order_relaxed);
		if (pub)
			atomic_fetch_add_explicit(&st->post_passes, 1, memory_order_relaxed);
		if (!pass++)
			atomic_fetch_add(&c->ready, 1);
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
	/* SA_NODEFER: no mask change, so siglongjmp needs no sigprocmask */
	struct sigaction sa = { .sa_sigaction = rd_signal, .sa_flags = SA_SIGINFO | SA_NODEFER };
	double t0 = luf_now();
	int i, err;

	if (n < 1 || n > LUF_MAX_READERS || !c->check)
		return -EINVAL;
	c->base = base;
	c->words = words;
	c->wpp = luf_page_size() / 8;
	if (c->fault_ok && (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL)))
		return -errno;
	for (i = 0; i < n; i++) {
		c->cpus[i] = cpus ? cpus[i] : 1 + i;
		c->slot[i] = (struct luf_rd_slot){ .c = c, .idx = i };
		err = pthread_create(&c->th[i], NULL, rd_fn, &c->slot[i]);
		if (err) {
			luf_rd_stop(c);
			return -err;
		}
		c->n++;
	}
	err = rd_wait(&c->ready, n, t0, 30);
	if (!err)
		err = atomic_load(&c->err);
	if (err)
		luf_rd_stop(c);
	return err;
}

int luf_rd_pause(struct luf_rd *c)
{
	double t0 = luf_now();

	atomic_store_explicit(&c->pause, 1, memory_order_release);
	return rd_wait(&c->paused, c->n, t0, 10);
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
		if (done || el > 60)
			return done;
		luf_msleep(10);
	}
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

static int check_pattern(const struct luf_rd *c, size_t i, uint64_t v, bool pub)
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
	r->sample = r->active_time = true;
	r->pause_us = pause_us;
	return luf_rd_start(r, base, npages * (luf_page_size() / 8), cpus, n);
}
