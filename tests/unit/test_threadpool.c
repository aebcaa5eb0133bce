/* q8rt's thread pool: every item runs exactly once, regions complete on the caller alone when no
 * worker joins (held workers stand in for descheduled ones), workers do join when they can, and a
 * failing allocator gives a clean failure. */
#define _GNU_SOURCE /* CPU_SET, pthread_setaffinity_np, sched_getcpu */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "common/threadpool.h"
#include "test.h"

#define TP_MAX 1000

typedef struct tp_counts {
  atomic_int hits[TP_MAX];
  atomic_int on_worker;
  pthread_t caller;
  int spin_ns;
} tp_counts;

static void tp_spin(int ns) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

static void tp_item(void *ctx, size_t i) {
  tp_counts *c = ctx;
  atomic_fetch_add(&c->hits[i], 1);
  if (!pthread_equal(pthread_self(), c->caller)) atomic_store(&c->on_worker, 1);
  if (c->spin_ns) tp_spin(c->spin_ns);
}

static int tp_region(q8rt_threadpool *p, tp_counts *c, size_t n) {
  for (size_t i = 0; i < TP_MAX; i++) atomic_store(&c->hits[i], 0);
  q8rt_parallel_for(p, n, tp_item, c);
  for (size_t i = 0; i < TP_MAX; i++) {
    if (atomic_load(&c->hits[i]) != (i < n ? 1 : 0)) return 1;
  }
  return 0;
}

Q8RT_TEST(threadpool_every_item_once) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 0;
  const size_t sizes[] = {0, 1, 2, 3, 7, 64, 1000};
  for (size_t threads = 1; threads <= 4; threads++) {
    int failed = 0;
    q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), threads, &failed);
    CHECK(!failed);
    CHECK((p == NULL) == (threads == 1));
    CHECK(q8rt_threadpool_threads(p) == threads);
    for (int rep = 0; rep < 50; rep++) {
      for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) CHECK(tp_region(p, &c, sizes[k]) == 0);
    }
    q8rt_threadpool_destroy(p);
  }
  return 0;
}

/* Regions of more than 65535 items claim runs of consecutive items: still every item once. */
static atomic_uchar tp_big_hits[140001];
static void tp_big_item(void *ctx, size_t i) {
  (void)ctx;
  atomic_fetch_add(&tp_big_hits[i], 1);
}

Q8RT_TEST(threadpool_large_regions_every_item_once) {
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 3, &failed);
  CHECK(p != NULL);
  const size_t sizes[] = {65535, 65536, 65537, 140001};
  for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    for (size_t i = 0; i < 140001; i++) atomic_store(&tp_big_hits[i], 0);
    q8rt_parallel_for(p, sizes[k], tp_big_item, NULL);
    for (size_t i = 0; i < 140001; i++) CHECK(atomic_load(&tp_big_hits[i]) == (i < sizes[k] ? 1 : 0));
  }
  q8rt_threadpool_destroy(p);
  return 0;
}

/* Each thread starts at the front of its own range (the caller's the first half of a 2-thread
 * region, the worker's the second) and steals only from the back of another's, so that
 * consecutive steps split in the same order keep each thread on the data it wrote: item 0 is
 * always the caller's, and a worker that runs its own range starts it at item 32. */
typedef struct tp_owner {
  atomic_int by_worker[64];
  atomic_int first_worker_item;
  atomic_int on_worker;
  pthread_t caller;
} tp_owner;

static void tp_owner_item(void *ctx, size_t i) {
  tp_owner *c = ctx;
  const int w = !pthread_equal(pthread_self(), c->caller);
  atomic_store(&c->by_worker[i], w);
  if (w) {
    int none = -1;
    atomic_compare_exchange_strong(&c->first_worker_item, &none, (int)i);
    atomic_store(&c->on_worker, 1);
  }
  tp_spin(20000);
}

Q8RT_TEST(threadpool_caller_front_worker_own_half) {
  static tp_owner c;
  c.caller = pthread_self();
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  int shared = 0, own_half = 0;
  for (int rep = 0; rep < 2000 && (shared < 3 || own_half < 1); rep++) {
    for (size_t i = 0; i < 64; i++) atomic_store(&c.by_worker[i], -1);
    atomic_store(&c.on_worker, 0);
    atomic_store(&c.first_worker_item, -1);
    q8rt_parallel_for(p, 64, tp_owner_item, &c);
    CHECK(atomic_load(&c.by_worker[0]) == 0);
    for (size_t i = 0; i < 64; i++) CHECK(atomic_load(&c.by_worker[i]) >= 0);
    /* the worker's first item is 32 whenever the caller had not stolen all of its half by then */
    if (atomic_load(&c.by_worker[32]) == 1) {
      CHECK(atomic_load(&c.first_worker_item) == 32);
      own_half++;
    }
    shared += atomic_load(&c.on_worker);
  }
  CHECK(shared >= 1 && own_half >= 1);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* A worker stopped inside an item (as one the OS deschedules) holds only its last claim (an
 * eighth of what was left of its range): the caller runs every other item of the region, the
 * unstarted rest of the worker's range included, before the stopped one finishes. Before, a
 * worker claimed a quarter of the region at a time and the caller waited for all of it. */
typedef struct tp_takeover {
  atomic_int done_items;
  atomic_int stalled; /* 1 + the item the worker is stopped in */
  pthread_t caller;
  int timed_out;
} tp_takeover;

static void tp_takeover_item(void *ctx, size_t i) {
  tp_takeover *c = ctx;
  int none = 0;
  if (!pthread_equal(pthread_self(), c->caller) && atomic_compare_exchange_strong(&c->stalled, &none, (int)i + 1)) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* until the caller ran all but the worker's first claim (an eighth of its 32: items 32-35),
     * at most 5 s */
    while (atomic_load(&c->done_items) < 60) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if (t.tv_sec - t0.tv_sec > 5) {
        c->timed_out = 1;
        break;
      }
      sched_yield();
    }
  }
  tp_spin(2000);
  atomic_fetch_add(&c->done_items, 1);
}

Q8RT_TEST(threadpool_caller_takes_over_a_stalled_workers_range) {
  static tp_takeover c;
  c.caller = pthread_self();
  c.timed_out = 0;
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  int stalls = 0;
  for (int rep = 0; rep < 2000 && stalls < 3; rep++) {
    atomic_store(&c.done_items, 0);
    atomic_store(&c.stalled, 0);
    q8rt_parallel_for(p, 64, tp_takeover_item, &c);
    CHECK(atomic_load(&c.done_items) == 64);
    CHECK(!c.timed_out);
    stalls += atomic_load(&c.stalled) != 0;
  }
  CHECK(stalls >= 1);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* Workers that never join (held) must not delay a region: the caller runs every item. A pool that
 * waited for its workers to check in would hang here. */
Q8RT_TEST(threadpool_caller_alone_when_workers_absent) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 0;
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 3, &failed);
  CHECK(p != NULL);
  q8rt_threadpool_hold(p, 1);
  atomic_store(&c.on_worker, 0);
  for (int rep = 0; rep < 2000; rep++) CHECK(tp_region(p, &c, 8) == 0);
  CHECK(atomic_load(&c.on_worker) == 0);
  q8rt_threadpool_hold(p, 0);
  for (int rep = 0; rep < 200; rep++) CHECK(tp_region(p, &c, 64) == 0);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* Workers do take items when they run: regions of slow items, until one ran on a worker. */
Q8RT_TEST(threadpool_workers_join) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 20000;
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  atomic_store(&c.on_worker, 0);
  for (int rep = 0; rep < 500 && !atomic_load(&c.on_worker); rep++) CHECK(tp_region(p, &c, 32) == 0);
  CHECK(atomic_load(&c.on_worker) == 1);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* Past 2^32 regions the epoch wraps: the region of epoch 0 had the open state 0, the value that
 * tells a worker the pool stops, and every worker that saw it left for good (regions then ran on
 * the caller alone, silently). Regions across the wrap, a few times, with items that sleep (the
 * worker gets a core to see each region), then workers must still join. */
static void tp_sleep_item(void *ctx, size_t i) {
  tp_counts *c = ctx;
  atomic_fetch_add(&c->hits[i], 1);
  if (!pthread_equal(pthread_self(), c->caller)) atomic_store(&c->on_worker, 1);
  const struct timespec t = {0, 50000};
  nanosleep(&t, NULL);
}

Q8RT_TEST(threadpool_workers_stay_across_the_epoch_wrap) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 0;
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  for (int wrap = 0; wrap < 4; wrap++) {
    q8rt_threadpool_set_epoch(p, UINT32_MAX - 2);
    for (int rep = 0; rep < 4; rep++) {
      q8rt_threadpool_fresh(p); /* no solo stretch: every region opens an epoch */
      for (size_t i = 0; i < 16; i++) atomic_store(&c.hits[i], 0);
      q8rt_parallel_for(p, 16, tp_sleep_item, &c);
      for (size_t i = 0; i < 16; i++) CHECK(atomic_load(&c.hits[i]) == 1);
    }
  }
  c.spin_ns = 20000;
  atomic_store(&c.on_worker, 0);
  for (int rep = 0; rep < 500 && !atomic_load(&c.on_worker); rep++) {
    q8rt_threadpool_fresh(p);
    CHECK(tp_region(p, &c, 32) == 0);
  }
  CHECK(atomic_load(&c.on_worker) == 1);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* force_solo: every item on the caller (workers that would join find nothing), sharing reports 0;
 * off again, workers join as before. */
Q8RT_TEST(threadpool_force_solo) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 20000;
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  q8rt_threadpool_force_solo(p, 1);
  CHECK(q8rt_threadpool_sharing(p) == 0);
  atomic_store(&c.on_worker, 0);
  for (int rep = 0; rep < 200; rep++) CHECK(tp_region(p, &c, 32) == 0);
  CHECK(atomic_load(&c.on_worker) == 0);
  q8rt_threadpool_force_solo(p, 0);
  for (int rep = 0; rep < 500 && !atomic_load(&c.on_worker); rep++) CHECK(tp_region(p, &c, 32) == 0);
  CHECK(atomic_load(&c.on_worker) == 1);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* A worker stopped in the middle of an item (as one the OS took off its core) stalls the region:
 * the caller sleeps until the item is done (woken by the worker that finishes it), the region
 * still runs every item once, and the pool then runs regions on the caller alone for a while. */
typedef struct tp_stall {
  atomic_int hits[64];
  atomic_int stalled;
  pthread_t caller;
} tp_stall;

static void tp_stall_item(void *ctx, size_t i) {
  tp_stall *c = ctx;
  atomic_fetch_add(&c->hits[i], 1);
  tp_spin(2000);
  if (!pthread_equal(pthread_self(), c->caller) && !atomic_exchange(&c->stalled, 1)) {
    /* 20 ms: the caller runs out of items long before (64 items of 2 us) and waits */
    const struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
}

Q8RT_TEST(threadpool_stalled_worker_goes_solo) {
  static tp_stall c;
  c.caller = pthread_self();
  atomic_store(&c.stalled, 0);
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  CHECK(q8rt_threadpool_solo_stretches(p) == 0);
  /* up to 5 stalls: on a loaded machine the caller itself can be off its CPU for the whole stall
   * (then it did not wait, and rightly counts nothing) */
  for (int stall = 0; stall < 5 && q8rt_threadpool_solo_stretches(p) == 0; stall++) {
    atomic_store(&c.stalled, 0);
    for (int rep = 0; rep < 2000 && !atomic_load(&c.stalled); rep++) {
      for (size_t i = 0; i < 64; i++) atomic_store(&c.hits[i], 0);
      q8rt_parallel_for(p, 64, tp_stall_item, &c);
      for (size_t i = 0; i < 64; i++) CHECK(atomic_load(&c.hits[i]) == 1);
    }
    CHECK(atomic_load(&c.stalled) == 1);
  }
  CHECK(q8rt_threadpool_solo_stretches(p) >= 1);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* Workers that are woken for region after region and never take an item (held: as workers with
 * no core would) make the pool stop waking them once the wakes' system calls add up (0.5 ms): a
 * solo stretch. */
Q8RT_TEST(threadpool_absent_worker_goes_solo) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 20000; /* regions of 160 us: long enough for a worker with a core to join */
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  q8rt_threadpool_hold(p, 1);
  for (int rep = 0; rep < 5000 && q8rt_threadpool_solo_stretches(p) == 0; rep++) {
    const struct timespec ts = {0, 400000}; /* the worker spins 0.2 ms, then sleeps */
    nanosleep(&ts, NULL);
    CHECK(tp_region(p, &c, 8) == 0);
  }
  CHECK(q8rt_threadpool_solo_stretches(p) >= 1);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* A thread on CPU c (pinned there, then given its whole mask back) moves off c and keeps its
 * whole mask; pinned to c alone, it cannot (and says so). What a worker the OS woke on the
 * caller's CPU does. */
Q8RT_TEST(threadpool_move_off_cpu) {
  cpu_set_t all, one, now;
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof(all), &all) == 0);
  int c = 0;
  while (c < CPU_SETSIZE && !CPU_ISSET(c, &all)) c++;
  CHECK(c < CPU_SETSIZE);
  CPU_ZERO(&one);
  CPU_SET(c, &one);
  CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
  CHECK(sched_getcpu() == c);
  CHECK(q8rt_thread_move_off(c) == 0); /* no other CPU allowed */
  CHECK(sched_getcpu() == c);
  if (CPU_COUNT(&all) >= 2) {
    int moved = 0;
    for (int attempt = 0; attempt < 10 && !moved; attempt++) {
      CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
      CHECK(pthread_setaffinity_np(pthread_self(), sizeof(all), &all) == 0);
      if (sched_getcpu() != c) continue; /* the OS moved it already */
      moved = q8rt_thread_move_off(c);
      CHECK(!moved || sched_getcpu() != c);
    }
    CHECK(moved);
  }
  CHECK(pthread_setaffinity_np(pthread_self(), sizeof(all), &all) == 0);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof(now), &now) == 0);
  CHECK(CPU_EQUAL(&now, &all));
  return 0;
}

/* A pool whose threads may all run on one CPU only (a process pinned with taskset): the worker
 * finds itself on the caller's CPU and cannot move, takes no item, and the pool goes solo. */
Q8RT_TEST(threadpool_one_cpu_goes_solo) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 20000;
  cpu_set_t all, one;
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof(all), &all) == 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &all)) cpu++;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0); /* the worker inherits it */
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create(q8rt_default_allocator(), 2, &failed);
  CHECK(p != NULL);
  atomic_store(&c.on_worker, 0);
  for (int rep = 0; rep < 5000 && q8rt_threadpool_solo_stretches(p) == 0; rep++) CHECK(tp_region(p, &c, 8) == 0);
  CHECK(q8rt_threadpool_solo_stretches(p) >= 1);
  CHECK(atomic_load(&c.on_worker) == 0);
  q8rt_threadpool_destroy(p);
  CHECK(pthread_setaffinity_np(pthread_self(), sizeof(all), &all) == 0);
  return 0;
}

static void *tp_fail_alloc(void *ud, size_t size, size_t alignment) {
  (void)ud, (void)size, (void)alignment;
  return NULL;
}
static void tp_free(void *ud, void *ptr, size_t size) { (void)ud, (void)ptr, (void)size; }

Q8RT_TEST(threadpool_allocation_failure) {
  const q8rt_allocator a = {tp_fail_alloc, tp_free, NULL};
  int failed = 0;
  CHECK(q8rt_threadpool_create(&a, 4, &failed) == NULL);
  CHECK(failed == 1);
  q8rt_threadpool_destroy(NULL);
  return 0;
}

/* ANALYZE: no worker runs, yet the pool says `threads` (ops split as they would); every item runs
 * once, on the caller; the counts add up; the ideal time on 3 threads of equal items is about a
 * third of the region's (at least a third, and below two thirds even on a loaded machine, where
 * preemption only lengthens single items). Regions of fewer than 2 items are not counted. */
Q8RT_TEST(threadpool_analyze_runs_on_caller_and_counts) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 20000;
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create_mode(q8rt_default_allocator(), 3, Q8RT_POOL_ANALYZE, &failed);
  CHECK(p != NULL);
  CHECK(q8rt_threadpool_threads(p) == 3);
  atomic_store(&c.on_worker, 0);
  q8rt_pool_stats st;
  int fair = 0;
  for (int rep = 0; rep < 20 && !fair; rep++) {
    q8rt_pool_stats before;
    q8rt_threadpool_stats(p, &before);
    CHECK(tp_region(p, &c, 30) == 0);
    CHECK(tp_region(p, &c, 1) == 0);
    q8rt_threadpool_stats(p, &st);
    CHECK(st.regions == before.regions + 1);
    CHECK(st.items == before.items + 30 && st.caller_items == before.caller_items + 30);
    const int64_t region = st.region_ns - before.region_ns, ideal = st.ideal_ns - before.ideal_ns;
    CHECK(region >= 30 * 20000 && ideal * 3 >= region - 30000 && ideal <= region);
    fair = ideal * 3 < region * 2;
  }
  CHECK(fair);
  CHECK(atomic_load(&c.on_worker) == 0);
  q8rt_threadpool_destroy(p);
  return 0;
}

/* COUNT: workers run as usual; the items the caller ran are counted, the others ran on workers. */
Q8RT_TEST(threadpool_count_mode) {
  static tp_counts c;
  c.caller = pthread_self();
  c.spin_ns = 20000;
  int failed = 0;
  q8rt_threadpool *p = q8rt_threadpool_create_mode(q8rt_default_allocator(), 2, Q8RT_POOL_COUNT, &failed);
  CHECK(p != NULL);
  q8rt_pool_stats st = {0, 0, 0, 0, 0};
  int regions = 0;
  atomic_store(&c.on_worker, 0);
  for (; regions < 500 && (regions < 3 || st.caller_items == st.items); regions++) {
    CHECK(tp_region(p, &c, 32) == 0);
    q8rt_threadpool_stats(p, &st);
  }
  CHECK(st.regions == (size_t)regions && st.items == 32 * (size_t)regions);
  CHECK(st.caller_items < st.items && atomic_load(&c.on_worker) == 1);
  CHECK(st.region_ns >= (int64_t)regions * 16 * 20000 && st.ideal_ns == 0);
  q8rt_threadpool_destroy(p);
  q8rt_threadpool_stats(NULL, &st);
  CHECK(st.regions == 0 && st.items == 0);
  return 0;
}
