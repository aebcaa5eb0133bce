/* q8rt's thread pool (see threadpool.h for why it exists).
 *
 * One 64-bit word says everything a thread needs to claim work: `state` = epoch << 32 | next
 * item. The region's description (fn, ctx, n) sits beside it and is read like a seqlock: a
 * thread reads the state, then the description, then claims item i by a compare-and-swap of the
 * state it read to state + 1. Before the caller rewrites the description for the next region it
 * stores a CLOSED state (new epoch, item index CLOSED) and a release fence, so a thread whose
 * claim succeeds read the description of the epoch it claimed in (the swap would fail
 * otherwise). A thread whose claim fails re-reads; one that finds next >= n has nothing to do.
 * Every shared field is atomic, so the pool is data-race free (and TSan-clean) by construction.
 *
 * Completion: a counter of finished items; the caller waits until it equals n. Only items some
 * thread has claimed are waited for: a claim is made by a running thread.
 *
 * Idle workers spin briefly on the state (regions of a plan follow each other within
 * microseconds), then sleep on a condition variable. The caller signals only when a worker
 * sleeps (`sleepers`, checked after the state is published; both sides use sequentially
 * consistent accesses so one of them sees the other). */
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define CLOSED 0xffffffffu
#define SPIN_IDLE 4000 /* pause iterations a worker spins for the next region before sleeping */
#define SPIN_WAIT 2000 /* pause iterations the caller spins for claimed items before yielding */
#define STALL_NS 30000 /* a wait for claimed items this much beyond their expected time is a stall */
#define SOLO_MIN 32    /* regions run on the caller alone after a first stall */
#define SOLO_MAX 4096  /* ... and at most, while stalls repeat */

struct q8rt_threadpool {
  _Alignas(64) _Atomic uint64_t state;
  _Atomic(q8rt_task_fn) fn;
  _Atomic(void *) ctx;
  atomic_size_t n;
  _Alignas(64) atomic_size_t done;
  _Alignas(64) atomic_int sleepers;
  atomic_int stop;
  atomic_int hold;    /* tests only: workers stay out of regions */
  uint32_t epoch;     /* caller only, as the two below */
  uint32_t solo_left; /* regions still to run on the caller alone */
  uint32_t solo_len;  /* length of the next solo stretch */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  const q8rt_allocator *allocator;
  size_t n_workers, capacity; /* workers started, slots allocated */
  pthread_t *workers;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Claim and run items of the region whose state was read as `s`, until none is left. Returns how
 * many this thread ran. */
static size_t run_items(q8rt_threadpool *p, uint64_t s) {
  const uint32_t epoch = (uint32_t)(s >> 32);
  size_t ran = 0;
  for (;;) {
    const uint32_t i = (uint32_t)s;
    const q8rt_task_fn fn = atomic_load_explicit(&p->fn, memory_order_relaxed);
    void *ctx = atomic_load_explicit(&p->ctx, memory_order_relaxed);
    const size_t n = atomic_load_explicit(&p->n, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (i >= n) return ran; /* all claimed, or CLOSED */
    if (atomic_compare_exchange_weak_explicit(&p->state, &s, s + 1, memory_order_acq_rel, memory_order_acquire)) {
      fn(ctx, i);
      ran++;
      atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
      s = atomic_load_explicit(&p->state, memory_order_acquire);
    }
    if ((uint32_t)(s >> 32) != epoch) return ran;
  }
}

/* A region worth joining: a new epoch that is open. */
static inline int is_new(uint64_t s, uint32_t seen) { return (uint32_t)(s >> 32) != seen && (uint32_t)s != CLOSED; }

static void *worker_main(void *arg) {
  q8rt_threadpool *p = arg;
  uint32_t seen = 0;
  for (;;) {
    uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
    for (int spins = 0; !is_new(s, seen); spins++) {
      if (atomic_load_explicit(&p->stop, memory_order_acquire)) return NULL;
      if (spins < SPIN_IDLE) {
        cpu_relax();
      } else {
        pthread_mutex_lock(&p->mu);
        atomic_fetch_add(&p->sleepers, 1);
        while (!is_new(s = atomic_load(&p->state), seen) && !atomic_load(&p->stop)) pthread_cond_wait(&p->cv, &p->mu);
        atomic_fetch_sub(&p->sleepers, 1);
        pthread_mutex_unlock(&p->mu);
        spins = 0;
      }
      s = atomic_load_explicit(&p->state, memory_order_acquire);
    }
    seen = (uint32_t)(s >> 32);
    if (!atomic_load_explicit(&p->hold, memory_order_relaxed)) run_items(p, s);
  }
}

static void wake_all(q8rt_threadpool *p) {
  pthread_mutex_lock(&p->mu);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

q8rt_threadpool *q8rt_threadpool_create(const q8rt_allocator *a, size_t threads, int *failed) {
  *failed = 0;
  if (threads < 2) return NULL;
  q8rt_threadpool *p = q8rt_alloc(a, sizeof(*p), 64);
  pthread_t *w = q8rt_alloc(a, (threads - 1) * sizeof(pthread_t), 16);
  if (p == NULL || w == NULL) {
    q8rt_free(a, p, sizeof(*p));
    q8rt_free(a, w, (threads - 1) * sizeof(pthread_t));
    *failed = 1;
    return NULL;
  }
  atomic_init(&p->state, (uint64_t)CLOSED);
  atomic_init(&p->fn, NULL);
  atomic_init(&p->ctx, NULL);
  atomic_init(&p->n, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->stop, 0);
  atomic_init(&p->hold, 0);
  p->epoch = 0;
  p->solo_left = p->solo_len = 0;
  p->allocator = a;
  p->workers = w;
  p->n_workers = 0;
  p->capacity = threads - 1;
  if (pthread_mutex_init(&p->mu, NULL) != 0) {
    q8rt_free(a, w, (threads - 1) * sizeof(pthread_t));
    q8rt_free(a, p, sizeof(*p));
    *failed = 1;
    return NULL;
  }
  if (pthread_cond_init(&p->cv, NULL) != 0) {
    pthread_mutex_destroy(&p->mu);
    q8rt_free(a, w, (threads - 1) * sizeof(pthread_t));
    q8rt_free(a, p, sizeof(*p));
    *failed = 1;
    return NULL;
  }
  for (size_t i = 0; i + 1 < threads; i++) {
    if (pthread_create(&w[i], NULL, worker_main, p) != 0) {
      p->n_workers = i;
      q8rt_threadpool_destroy(p);
      *failed = 1;
      return NULL;
    }
  }
  p->n_workers = threads - 1;
  return p;
}

void q8rt_threadpool_destroy(q8rt_threadpool *p) {
  if (p == NULL) return;
  atomic_store(&p->stop, 1);
  wake_all(p);
  for (size_t i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  const q8rt_allocator *a = p->allocator;
  q8rt_free(a, p->workers, p->capacity * sizeof(pthread_t));
  q8rt_free(a, p, sizeof(*p));
}

size_t q8rt_threadpool_threads(const q8rt_threadpool *p) { return p == NULL ? 1 : p->n_workers + 1; }

static inline int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void q8rt_parallel_for(q8rt_threadpool *p, size_t n, q8rt_task_fn fn, void *ctx) {
  if (p == NULL || n < 2 || n >= CLOSED || p->solo_left > 0) {
    if (p != NULL && n >= 2) p->solo_left--;
    for (size_t i = 0; i < n; i++) fn(ctx, i);
    return;
  }
  const uint32_t e = ++p->epoch;
  /* close: claims of the previous epoch fail from here on, before the description changes */
  atomic_store_explicit(&p->state, (uint64_t)e << 32 | CLOSED, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&p->fn, fn, memory_order_relaxed);
  atomic_store_explicit(&p->ctx, ctx, memory_order_relaxed);
  atomic_store_explicit(&p->n, n, memory_order_relaxed);
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  const uint64_t open = (uint64_t)e << 32;
  const int64_t t0 = now_ns();
  atomic_store(&p->state, open); /* seq_cst: pairs with the sleepers count */
  if (atomic_load(&p->sleepers) > 0) wake_all(p);
  const size_t ran = run_items(p, open);
  if (atomic_load_explicit(&p->done, memory_order_acquire) == n) {
    p->solo_len = p->solo_len < 4 ? 0 : p->solo_len - p->solo_len / 4;
    return;
  }
  const int64_t t1 = now_ns();
  for (int spins = 0; atomic_load_explicit(&p->done, memory_order_acquire) < n; spins++) {
    if (spins < SPIN_WAIT) {
      cpu_relax();
    } else {
      sched_yield(); /* a claimed item runs on a thread that may share this core */
    }
  }
  /* The wait is normally at most one item's time (a worker took the last one just before the
   * caller ran out). Much longer means the worker was descheduled holding an item: the core is
   * shared with other work. Then run the next regions on the caller alone, a stretch that doubles
   * while stalls repeat (up to SOLO_MAX regions) and shrinks by a quarter with every region that did
   * not stall (slowly: on a shared core the next stall is likely to come). */
  const int64_t wait = now_ns() - t1, per_item = ran > 0 ? (t1 - t0) / (int64_t)ran : 0;
  if (wait > 4 * per_item + STALL_NS) {
    p->solo_len = p->solo_len == 0 ? SOLO_MIN : p->solo_len * 2 > SOLO_MAX ? SOLO_MAX : p->solo_len * 2;
    p->solo_left = p->solo_len;
  } else {
    p->solo_len = p->solo_len < 4 ? 0 : p->solo_len - p->solo_len / 4;
  }
}

void q8rt_threadpool_hold(q8rt_threadpool *p, int hold) {
  if (p != NULL) atomic_store(&p->hold, hold);
}
