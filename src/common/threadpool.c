/* q8rt's thread pool (see threadpool.h for why it exists).
 *
 * A region's items are cut into groups (a group is one item, or for regions of over 65535 items a
 * run of consecutive items) and the groups into one contiguous range per thread of the pool: the
 * caller gets the first, worker i the (i + 1)-th. Consecutive steps split their data in the same
 * order (element ranges, output rows), so each thread mostly reads what it wrote itself in the
 * step before. A line another core wrote costs ~0.25 us to fetch on this class of VM; with one
 * shared claim order, det's memory-bound elementwise steps ran 2-10x slower at 2 threads than at
 * one.
 *
 * Each thread's range is one 64-bit word on a cache line of its own, its `slot`: epoch << 32 |
 * lo << 16 | hi, the unclaimed groups [lo, hi). The owner takes groups from the front, an eighth
 * of what is left at a time, by a compare-and-swap of its slot (its own line: no other core
 * touches it while the owner is busy). A thread whose range is empty steals from the back of
 * another's: half of what is left there, moved into its own slot (where it can be stolen again).
 * So a worker the OS has not scheduled, or one descheduled holding a range, keeps the caller
 * waiting for at most the groups of its last claim: the caller takes over the rest (a worker used
 * to claim a quarter of a region at a time, and the caller waited 2-4.5 ms for a descheduled
 * worker's claim on a loaded machine).
 * Which thread runs a group never changes what the group computes.
 *
 * The region's description (fn, ctx, n) is read like a seqlock: a thread reads a slot, then the
 * description, then claims by a compare-and-swap of the slot it read. Before the caller rewrites
 * the description for the next region it stores CLOSED slots (new epoch, lo > hi) and a release
 * fence, so a thread whose claim succeeds read the description of the epoch it claimed in (the
 * swap would fail otherwise). The slot word is the whole truth about its groups (each unclaimed
 * group is in exactly one slot, a claimed one never returns), so a swap from a value read earlier
 * is right whenever it succeeds. `state` says whether a region is open (epoch << 32, or CLOSED in
 * the low half) for workers that wait for one. Every shared field is atomic, so the pool is
 * data-race free (and TSan-clean) by construction.
 *
 * Completion: a counter of finished items, to which each thread adds the items it ran when it
 * finds no more to claim or steal; the caller waits until it equals n. Only the group another
 * thread is running is waited for (or a half it is moving into its slot, an instant).
 *
 * Idle workers watch `announce` (the latest epoch, on its own cache line: watching `state` would
 * pull its line away from the claiming threads at every claim) for SPIN_IDLE_NS (regions of a plan
 * follow each other within microseconds), yielding now and then (a worker on the caller's core
 * must not hold it), then sleep on a condition variable. The caller signals only when a worker
 * sleeps (`sleepers`, checked after the state is published; both sides use sequentially
 * consistent accesses so one of them sees the other), and not again while a signalled worker has
 * not woken (`wake_pending`, cleared by the worker when it wakes, before it reads the state). The
 * caller waiting for claimed items sleeps the same way (`waiting`, done_cv) after SPIN_WAIT_NS.
 * A worker that finds itself on the caller's CPU moves to another CPU if one takes it at once; if
 * none does (the other cores are busy), it stops spinning and counts it (`crowded`): its time
 * there is the caller's (crowded_here). */
#define _GNU_SOURCE /* sched_getcpu */
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define CLOSED 0xffff0000u /* lo 0xffff, hi 0: never an open range */
#define MAX_GROUPS 0xffffu
#define SPIN_IDLE_NS 200000 /* a worker spins this long for the next region before it sleeps */
#define SPIN_WAIT_NS 50000  /* the caller spins this long for claimed items before it sleeps */
/* What sharing cost the caller beyond what the workers' items saved it (waking sleepers, waiting
 * for a worker's items far beyond their time), summed over the regions since it last paid off:
 * this much starts a solo stretch. A worker preempted briefly costs less than what it brings; one
 * that shares its core with a busy thread stalls the caller for the OS's time slice (0.75-3 ms
 * with Linux's EEVDF), and on small regions many short stalls add up to the same. */
#define DEBT_NS 500000
/* the fuzz build never goes solo (Q8RT_FIXED_SCHEDULE, see Makefile) */
#ifdef Q8RT_FIXED_SCHEDULE
#define FIXED_SCHEDULE 1
#else
#define FIXED_SCHEDULE 0
#endif
#define SOLO_MIN_NS 2000000   /* a solo stretch: regions run on the caller alone this long */
#define SOLO_MAX_NS 128000000 /* ... doubling up to this while sharing keeps failing right after */
/* A stretch doubles only when sharing fails again within this (plus a quarter of the stretch)
 * after it ended: the first regions after a stretch are the probe. Occasional stalls far apart
 * (a preempted vCPU on an otherwise quiet machine) restart at SOLO_MIN_NS. */
#define RECUR_NS 8000000
/* A worker woken onto the caller's CPU costs the caller the switches to it and back (and its
 * spinning until it notices): charged this much each, so that a few in a row start a stretch. */
#define CROWDED_NS 150000
#define MOVE_FREE_NS 200000 /* a worker's move to another CPU this quick: that CPU was free */

/* A thread's range of the region's groups (see above), alone on its cache line. */
typedef struct pool_slot {
  _Alignas(64) _Atomic uint64_t range;
} pool_slot;

struct q8rt_threadpool {
  _Alignas(64) _Atomic uint64_t state;
  _Atomic(q8rt_task_fn) fn;
  _Atomic(void *) ctx;
  atomic_size_t n;
  _Alignas(64) atomic_uint announce; /* the epoch of the latest region, for idle workers to watch */
  atomic_int caller_cpu;             /* the CPU the caller ran the latest region on */
  atomic_uint crowded;               /* times a worker found itself on the caller's CPU */
  _Alignas(64) atomic_size_t done;
  atomic_int waiting; /* the caller sleeps on done_cv until done == n */
  _Alignas(64) atomic_int sleepers;
  atomic_int wake_pending; /* sleepers were signalled and none has woken since: no second signal */
  atomic_int stop;
  atomic_int hold;             /* tests only: workers stay out of regions */
  atomic_size_t next_self;     /* slot index of the next worker that starts */
  pool_slot *slots;            /* [nominal]: the caller's, then each worker's */
  _Alignas(64) uint32_t epoch; /* caller only, as the fields below */
  int64_t solo_until, solo_ns; /* regions before solo_until run on the caller alone */
  int64_t debt;                /* see DEBT_NS */
  unsigned crowded_seen;       /* `crowded` as last charged */
  q8rt_pool_counts counts;
  int forced_solo; /* q8rt_threadpool_force_solo */
  int mode;        /* Q8RT_POOL_* */
  q8rt_pool_stats stats;
  size_t nominal; /* threads the pool says it has (ANALYZE starts no worker) */
  pthread_mutex_t mu;
  pthread_cond_t cv, done_cv;
  const q8rt_allocator *allocator;
  size_t n_workers, capacity; /* workers started, slots allocated */
  pthread_t *workers;
};

static inline int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Items per group of a region of n items: at most MAX_GROUPS groups. */
static inline size_t group_items(size_t n) { return n <= MAX_GROUPS ? 1 : (n + MAX_GROUPS - 1) / MAX_GROUPS; }

/* The owner of a range claims 1/OWN_SHARE of what is left of it at a time: a claim is a locked
 * instruction, which waits for the stores of the item before it (one claim per item cost det ~3%
 * at 2 threads: ~3200 items a run), and a descheduled owner holds an eighth of its rest at most. */
#define OWN_SHARE 8

/* Claims groups of slot `t` in epoch e: from the front (`back` 0) 1/OWN_SHARE of what is left or,
 * stealing, half of it from the back (*k groups either way). Returns the first group claimed, or SIZE_MAX when the
 * slot has none in epoch e. The description is read before each claim (see above). */
static size_t claim(q8rt_threadpool *p, size_t t, uint32_t e, int back, size_t *k, q8rt_task_fn *fn, void **ctx,
                    size_t *n) {
  _Atomic uint64_t *slot = &p->slots[t].range;
  uint64_t s = atomic_load_explicit(slot, memory_order_acquire);
  for (;;) {
    const size_t lo = (size_t)(s >> 16 & 0xffff), hi = (size_t)(s & 0xffff);
    if ((uint32_t)(s >> 32) != e || lo >= hi) return SIZE_MAX;
    *fn = atomic_load_explicit(&p->fn, memory_order_relaxed);
    *ctx = atomic_load_explicit(&p->ctx, memory_order_relaxed);
    *n = atomic_load_explicit(&p->n, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    *k = back ? (hi - lo + 1) / 2 : (hi - lo + OWN_SHARE - 1) / OWN_SHARE;
    const uint64_t next = back ? s - *k : s + ((uint64_t)*k << 16);
    if (atomic_compare_exchange_weak_explicit(slot, &s, next, memory_order_acq_rel, memory_order_acquire))
      return back ? hi - *k : lo;
  }
}

/* Runs the groups of this thread's slot `self` in epoch e, stealing from the other slots when its
 * own are done, until no slot has any; adds what it ran to `done`. Returns the items it ran. */
static size_t run_items(q8rt_threadpool *p, uint32_t e, size_t self) {
  const size_t threads = p->nominal;
  size_t ran = 0, region_n = 0, k, n, g;
  q8rt_task_fn fn;
  void *ctx;
  for (;;) {
    while ((g = claim(p, self, e, 0, &k, &fn, &ctx, &n)) != SIZE_MAX) {
      const size_t per = group_items(n), end = (g + k) * per < n ? (g + k) * per : n;
      for (size_t i = g * per; i < end; i++) fn(ctx, i);
      ran += end - g * per;
      region_n = n;
    }
    /* own range done: half of another's rest into the own slot (own empty: no one else writes it
     * but through a swap that now fails) */
    size_t v = 1;
    while (v < threads && (g = claim(p, (self + v) % threads, e, 1, &k, &fn, &ctx, &n)) == SIZE_MAX) v++;
    if (v >= threads) break;
    atomic_store_explicit(&p->slots[self].range, (uint64_t)e << 32 | (uint64_t)g << 16 | (uint64_t)(g + k),
                          memory_order_release);
  }
  /* The items this thread ran count as done at once, when it has no more to claim: one atomic
   * add per thread and region rather than per item. seq_cst, as the caller's `waiting`: one of the
   * two sees the other. */
  if (ran > 0 && atomic_fetch_add(&p->done, ran) + ran == region_n && atomic_load(&p->waiting)) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->done_cv);
    pthread_mutex_unlock(&p->mu);
  }
  return ran;
}

/* Moves the calling thread off `cpu`: for a moment its affinity excludes `cpu` (the kernel
 * migrates it at once), then it gets its mask back, so that the OS keeps placing it freely. */
int q8rt_thread_move_off(int cpu) {
  cpu_set_t mask, others;
  if (cpu < 0 || cpu >= CPU_SETSIZE || pthread_getaffinity_np(pthread_self(), sizeof(mask), &mask) != 0) return 0;
  others = mask;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0 || pthread_setaffinity_np(pthread_self(), sizeof(others), &others) != 0) return 0;
  pthread_setaffinity_np(pthread_self(), sizeof(mask), &mask);
  return sched_getcpu() != cpu;
}

/* Whether this worker is crowded: on the caller's CPU with no free CPU to go to. The OS wakes a
 * worker on the caller's CPU when the other CPUs are busy, but also when they were lately (the
 * idle-CPU search is skipped while the cores' recent use is high), and a worker that then sleeps
 * there is woken there again: once a busy spell had put it there, every probe after a solo stretch
 * failed and two threads ran at one's speed for seconds after the spell was over. So the worker
 * moves off (q8rt_thread_move_off) and times it: a free CPU takes it at once (25-50 us on this
 * class of VM), a busy one only after the running thread's time slice (~2 ms with a busy loop
 * there). A slow or impossible move is crowding: the worker leaves the region to the caller and
 * sleeps, and the caller is charged CROWDED_NS (the account then runs it solo, as for a busy
 * core). */
static int crowded_here(q8rt_threadpool *p) {
  const int cpu = sched_getcpu();
  if (cpu < 0 || cpu != atomic_load_explicit(&p->caller_cpu, memory_order_relaxed)) return 0;
  const int64_t t = now_ns();
  if (q8rt_thread_move_off(cpu) && now_ns() - t < MOVE_FREE_NS) return 0;
  atomic_fetch_add_explicit(&p->crowded, 1, memory_order_relaxed);
  return 1;
}

/* A region worth joining: a new epoch that is open. */
static inline int is_new(uint64_t s, uint32_t seen) { return (uint32_t)(s >> 32) != seen && (uint32_t)s != CLOSED; }

/* Wait for a new region: spin SPIN_IDLE_NS (the regions of a plan follow each other within
 * microseconds), then sleep. Returns the new region's state, or 0 when the pool stops. */
static uint64_t await_region(q8rt_threadpool *p, uint32_t seen, int rest) {
  /* Spin on `announce`, written once per region, and read `state` only when it changes: spinning
   * on `state` would take its cache line away from the threads claiming items at every claim. */
  unsigned heard = seen;
  int64_t idle_from = now_ns();
  for (unsigned spins = 1;; spins++) {
    const unsigned a = atomic_load_explicit(&p->announce, memory_order_acquire);
    if (a != heard && !rest) {
      const uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
      if (is_new(s, seen)) return s;
      heard = a;
    }
    cpu_relax();
    if (spins % 32 != 0 && !rest) continue;
    /* on a core shared with the caller (a busy machine), let the caller have it */
    sched_yield();
    if (atomic_load_explicit(&p->stop, memory_order_acquire)) return 0;
    if (rest || crowded_here(p) || now_ns() - idle_from > SPIN_IDLE_NS) {
      rest = 0;
      uint64_t s;
      pthread_mutex_lock(&p->mu);
      atomic_fetch_add(&p->sleepers, 1);
      while (!is_new(s = atomic_load(&p->state), seen) && !atomic_load(&p->stop)) {
        pthread_cond_wait(&p->cv, &p->mu);
        /* before the state is read again (seq_cst, as the caller's store of the state and load of
         * wake_pending): a region published after this either sees 0 and signals, or is seen */
        atomic_store(&p->wake_pending, 0);
      }
      atomic_fetch_sub(&p->sleepers, 1);
      pthread_mutex_unlock(&p->mu);
      if (is_new(s, seen)) return s;
      if (atomic_load(&p->stop)) return 0;
      idle_from = now_ns();
    }
  }
}

static void *worker_main(void *arg) {
  q8rt_threadpool *p = arg;
  const size_t self = atomic_fetch_add_explicit(&p->next_self, 1, memory_order_relaxed);
  uint32_t seen = 0;
  int rest = 0;
  for (;;) {
    const uint64_t s = await_region(p, seen, rest);
    if (s == 0) return NULL;
    seen = (uint32_t)(s >> 32);
    /* woken on the caller's CPU: move before taking items, or leave them to the caller */
    rest = crowded_here(p);
    if (!rest && !atomic_load_explicit(&p->hold, memory_order_relaxed)) run_items(p, seen, self);
  }
}

static void wake_all(q8rt_threadpool *p) {
  pthread_mutex_lock(&p->mu);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

/* Wake sleeping workers for a region just published, unless they were signalled already and none
 * has woken since (a worker whose core is busy can take milliseconds to wake: signalling it again
 * at every region would cost a system call each for nothing). Returns whether it signalled.
 * Under the mutex, sleepers > 0 means a worker is in (or just woken from) pthread_cond_wait and
 * will clear wake_pending before it sleeps again. */
static int wake_sleepers(q8rt_threadpool *p) {
  if (atomic_load(&p->sleepers) == 0 || atomic_load(&p->wake_pending)) return 0;
  int woke = 0;
  pthread_mutex_lock(&p->mu);
  if (atomic_load(&p->sleepers) > 0) {
    atomic_store(&p->wake_pending, 1);
    pthread_cond_broadcast(&p->cv);
    woke = 1;
  }
  pthread_mutex_unlock(&p->mu);
  return woke;
}

static void free_pool(q8rt_threadpool *p, int sync_made) {
  const q8rt_allocator *a = p->allocator;
  if (sync_made > 0) pthread_mutex_destroy(&p->mu);
  if (sync_made > 1) pthread_cond_destroy(&p->cv);
  if (sync_made > 2) pthread_cond_destroy(&p->done_cv);
  q8rt_free(a, p->workers, p->capacity * sizeof(pthread_t));
  q8rt_free(a, p->slots, p->nominal * sizeof(pool_slot));
  q8rt_free(a, p, sizeof(*p));
}

q8rt_threadpool *q8rt_threadpool_create(const q8rt_allocator *a, size_t threads, int *failed) {
  return q8rt_threadpool_create_mode(a, threads, Q8RT_POOL_RUN, failed);
}

q8rt_threadpool *q8rt_threadpool_create_mode(const q8rt_allocator *a, size_t threads, int mode, int *failed) {
  *failed = 0;
  if (threads < 2) return NULL;
  q8rt_threadpool *p = q8rt_alloc(a, sizeof(*p), 64);
  pthread_t *w = q8rt_alloc(a, (threads - 1) * sizeof(pthread_t), 16);
  pool_slot *slots = q8rt_alloc(a, threads * sizeof(pool_slot), 64);
  if (p == NULL || w == NULL || slots == NULL) {
    q8rt_free(a, p, sizeof(*p));
    q8rt_free(a, w, (threads - 1) * sizeof(pthread_t));
    q8rt_free(a, slots, threads * sizeof(pool_slot));
    *failed = 1;
    return NULL;
  }
  for (size_t t = 0; t < threads; t++) atomic_init(&slots[t].range, 1ull << 32 | CLOSED);
  atomic_init(&p->state, 1ull << 32 | CLOSED); /* epoch 1 closed: workers wait for epoch 2 */
  atomic_init(&p->fn, NULL);
  atomic_init(&p->ctx, NULL);
  atomic_init(&p->n, 0);
  atomic_init(&p->announce, 1);
  atomic_init(&p->caller_cpu, -1);
  atomic_init(&p->crowded, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->waiting, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->wake_pending, 0);
  atomic_init(&p->stop, 0);
  atomic_init(&p->hold, 0);
  atomic_init(&p->next_self, 1); /* slot 0 is the caller's */
  p->slots = slots;
  p->epoch = 1;
  p->solo_until = p->solo_ns = p->debt = 0;
  p->crowded_seen = 0;
  memset(&p->counts, 0, sizeof(p->counts));
  p->forced_solo = 0;
  p->mode = mode;
  memset(&p->stats, 0, sizeof(p->stats));
  p->nominal = threads;
  p->allocator = a;
  p->workers = w;
  p->n_workers = 0;
  p->capacity = threads - 1;
  int made = 0;
  if (pthread_mutex_init(&p->mu, NULL) == 0 && ++made && pthread_cond_init(&p->cv, NULL) == 0 && ++made &&
      pthread_cond_init(&p->done_cv, NULL) == 0 && ++made) {
    for (size_t i = 0; i + 1 < threads && mode != Q8RT_POOL_ANALYZE; i++) {
      if (pthread_create(&w[i], NULL, worker_main, p) != 0) {
        p->n_workers = i;
        q8rt_threadpool_destroy(p);
        *failed = 1;
        return NULL;
      }
    }
    p->n_workers = mode != Q8RT_POOL_ANALYZE ? threads - 1 : 0;
    return p;
  }
  free_pool(p, made);
  *failed = 1;
  return NULL;
}

void q8rt_threadpool_destroy(q8rt_threadpool *p) {
  if (p == NULL) return;
  atomic_store(&p->stop, 1);
  wake_all(p);
  for (size_t i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
  free_pool(p, 3);
}

size_t q8rt_threadpool_threads(const q8rt_threadpool *p) { return p == NULL ? 1 : p->nominal; }

void q8rt_threadpool_stats(const q8rt_threadpool *p, q8rt_pool_stats *out) {
  if (p != NULL) {
    *out = p->stats;
  } else {
    memset(out, 0, sizeof(*out));
  }
}

#define ANALYZE_MAX_THREADS 64

/* ANALYZE: every item on the caller, timed; the region's makespan on p->nominal threads that
 * claim the items in order, each item going to the thread that is free first. */
static void analyze_region(q8rt_threadpool *p, size_t n, q8rt_task_fn fn, void *ctx, int64_t t0) {
  int64_t free_at[ANALYZE_MAX_THREADS] = {0};
  const size_t th = p->nominal < ANALYZE_MAX_THREADS ? p->nominal : ANALYZE_MAX_THREADS;
  int64_t t = t0, makespan = 0;
  for (size_t i = 0; i < n; i++) {
    fn(ctx, i);
    const int64_t u = now_ns();
    size_t k = 0;
    for (size_t j = 1; j < th; j++)
      if (free_at[j] < free_at[k]) k = j;
    free_at[k] += u - t;
    if (free_at[k] > makespan) makespan = free_at[k];
    t = u;
  }
  p->stats.regions++;
  p->stats.items += n;
  p->stats.caller_items += n;
  p->stats.region_ns += t - t0;
  p->stats.ideal_ns += makespan;
}

/* Sharing cost the caller more than it brought (DEBT_NS): run regions on the caller alone for
 * SOLO_MIN_NS, doubling while sharing fails again right after each stretch (RECUR_NS), up to
 * SOLO_MAX_NS. The first regions after a stretch share again (and wake the workers). */
static void go_solo(q8rt_threadpool *p, int64_t t) {
  const int recurs = p->solo_ns > 0 && t - p->solo_until < RECUR_NS + p->solo_ns / 4;
  p->solo_ns = !recurs ? SOLO_MIN_NS : p->solo_ns * 2 > SOLO_MAX_NS ? SOLO_MAX_NS : p->solo_ns * 2;
  p->solo_until = t + p->solo_ns;
  p->debt = 0;
  p->counts.solo_stretches++;
}

/* Runs a region of n >= 2 items that started at t0; returns how many the caller ran. Not inlined:
 * GCC refuses atomic_thread_fence under -fsanitize=thread (-Wtsan) in an inlined copy. */
__attribute__((noinline)) static size_t run_region(q8rt_threadpool *p, size_t n, q8rt_task_fn fn, void *ctx,
                                                   int64_t t0) {
  if (p->forced_solo || t0 < p->solo_until) {
    if (!p->forced_solo) {
      p->counts.regions++;
      p->counts.solo_regions++;
    }
    for (size_t i = 0; i < n; i++) fn(ctx, i);
    return n;
  }
  p->counts.regions++;
  /* epoch 0 never opens a region: its open state would be the word 0, which await_region returns
   * for a stopping pool (every worker would leave after 2^32 regions, ~12 h of det runs at 2T) */
  if (++p->epoch == 0) p->epoch = 1;
  const uint32_t e = p->epoch;
  const size_t threads = p->nominal;
  /* close: claims of the previous epoch fail from here on, before the description changes */
  atomic_store_explicit(&p->state, (uint64_t)e << 32 | CLOSED, memory_order_relaxed);
  for (size_t t = 0; t < threads; t++)
    atomic_store_explicit(&p->slots[t].range, (uint64_t)e << 32 | CLOSED, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&p->fn, fn, memory_order_relaxed);
  atomic_store_explicit(&p->ctx, ctx, memory_order_relaxed);
  atomic_store_explicit(&p->n, n, memory_order_relaxed);
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  const size_t per = group_items(n), groups = (n + per - 1) / per;
  for (size_t t = 0; t < threads; t++) /* published with the state */
    atomic_store_explicit(
        &p->slots[t].range,
        (uint64_t)e << 32 | (uint64_t)(t * groups / threads) << 16 | (uint64_t)((t + 1) * groups / threads),
        memory_order_relaxed);
  atomic_store_explicit(&p->caller_cpu, sched_getcpu(), memory_order_relaxed); /* published with the state */
  atomic_store(&p->state, (uint64_t)e << 32); /* seq_cst: pairs with sleepers and wake_pending */
  atomic_store_explicit(&p->announce, e, memory_order_release);
  /* the system call of a wake is a cost of sharing (20-90 us on a busy machine) */
  const unsigned crowded = atomic_load_explicit(&p->crowded, memory_order_relaxed);
  int64_t cost = (int64_t)(crowded - p->crowded_seen) * CROWDED_NS, wake_ns = 0;
  p->crowded_seen = crowded;
  if (atomic_load(&p->sleepers) > 0) {
    const int64_t tw = now_ns();
    if (wake_sleepers(p)) wake_ns = now_ns() - tw;
    cost += wake_ns;
  }
  size_t ran = run_items(p, e, 0);
  size_t done = ran;
  int64_t t1 = 0, t2 = 0;
  if (ran < n) {
    done = atomic_load_explicit(&p->done, memory_order_acquire);
    t1 = t2 = now_ns();
  }
  if (done < n) {
    /* A worker runs the last group (or is moving a stolen half into its slot: steal from it then).
     * Spin briefly (it normally finishes within a group's time), then sleep: a core left idle lets
     * the OS move a worker that was descheduled over to it. */
    for (unsigned spins = 1; atomic_load_explicit(&p->done, memory_order_acquire) < n; spins++) {
      cpu_relax();
      if (spins % 32 == 0) ran += run_items(p, e, 0);
      if (spins % 32 == 0 && now_ns() - t1 > SPIN_WAIT_NS) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->waiting, 1);
        while (atomic_load(&p->done) < n) pthread_cond_wait(&p->done_cv, &p->mu);
        atomic_store(&p->waiting, 0);
        pthread_mutex_unlock(&p->mu);
      }
    }
    t2 = now_ns();
    p->counts.wait_ns += t2 - t1;
  }
  if (ran == n) p->counts.unhelped_regions++;
  /* What the workers' items saved (at the caller's time per item) against the wait for them
   * beyond a couple of items (normally the wait is at most the last claim of a worker that took
   * it just before the caller ran out; much longer: the worker was descheduled holding it). */
  if (ran < n) {
    const int64_t per_item = ran > 0 ? (t1 - t0 - wake_ns) / (int64_t)ran : t2 - t0;
    const int64_t gain = ran > 0 ? per_item * (int64_t)(n - ran) : t2 - t0;
    const int64_t wait = t2 - t1 - 2 * per_item;
    cost += wait > 0 ? wait : 0;
    p->debt = p->debt + cost > gain ? p->debt + cost - gain : 0;
  } else {
    p->debt += cost;
  }
  if (!FIXED_SCHEDULE && p->debt > DEBT_NS) go_solo(p, t2 > 0 ? t2 : now_ns());
  return ran;
}

void q8rt_parallel_for(q8rt_threadpool *p, size_t n, q8rt_task_fn fn, void *ctx) {
  if (p == NULL || n < 2) {
    for (size_t i = 0; i < n; i++) fn(ctx, i);
    return;
  }
  const int64_t t0 = now_ns();
  if (p->mode == Q8RT_POOL_ANALYZE) {
    analyze_region(p, n, fn, ctx, t0);
    return;
  }
  const size_t ran = run_region(p, n, fn, ctx, t0);
  if (p->mode == Q8RT_POOL_COUNT) {
    p->stats.regions++;
    p->stats.items += n;
    p->stats.caller_items += ran;
    p->stats.region_ns += now_ns() - t0;
  }
}

void q8rt_threadpool_hold(q8rt_threadpool *p, int hold) {
  if (p != NULL) atomic_store(&p->hold, hold);
}

int q8rt_threadpool_sharing(const q8rt_threadpool *p) {
  if (p != NULL && p->forced_solo) return 0;
  return p != NULL && p->mode != Q8RT_POOL_ANALYZE ? now_ns() >= p->solo_until : p != NULL;
}

void q8rt_threadpool_force_solo(q8rt_threadpool *p, int on) {
  if (p != NULL) p->forced_solo = on != 0;
}

void q8rt_threadpool_fresh(q8rt_threadpool *p) {
  if (p == NULL) return;
  p->solo_until = p->solo_ns = p->debt = 0;
}

size_t q8rt_threadpool_solo_stretches(const q8rt_threadpool *p) { return p == NULL ? 0 : p->counts.solo_stretches; }

void q8rt_threadpool_counts(const q8rt_threadpool *p, q8rt_pool_counts *out) {
  if (p != NULL) {
    *out = p->counts;
  } else {
    memset(out, 0, sizeof(*out));
  }
}

void q8rt_threadpool_set_epoch(q8rt_threadpool *p, uint32_t epoch) {
  if (p != NULL) p->epoch = epoch;
}
