/* q8rt's thread pool: parallel regions that end when their work items are done, not when every
 * worker has checked in.
 *
 * Why not pthreadpool or OpenMP: both end a region at a barrier that every thread of the pool
 * must reach. A worker the OS has not scheduled yet (a busy core, an oversubscribed machine)
 * stalls the whole region, and a plan runs hundreds of regions per inference: with a busy loop on
 * the other core, pthreadpool made two threads 1.6x slower than one.
 *
 * Here a region's items are cut into one contiguous range per thread (the caller's first). Each
 * thread runs its own range from the front, claiming an eighth of what is left of it at a time
 * with a compare-and-swap of a word only it touches while busy, and when done takes half of what
 * is left of another's range from the back (work stealing); the caller returns when every item is
 * claimed and the claimed ones are finished. A worker that has not started, or that the OS took
 * off its core holding a range, keeps the caller waiting for at most its last claim (an eighth of
 * the rest of its range): the caller takes over the rest. The caller never waits for a worker that has not started.
 * Items are small (the ops size them), so the wait for a started one is short.
 *
 * A busy core: a worker that shares its core with another busy thread gets it only part of the
 * time, and when it loses it inside an item the caller waits for the OS's time slice. The caller
 * keeps an account of what sharing costs it (the system calls waking sleeping workers, waits
 * for claimed items beyond their expected time) against what the workers' items saved it; when the
 * cost is ahead by 0.5 ms, a "solo stretch": regions of the next 2 ms run on the caller alone,
 * doubling up to 128 ms while sharing fails again right after each stretch. A worker signalled
 * once is not signalled again until it has woken.
 *
 * Results do not depend on who runs an item: the ops split their work into items fixed by the
 * shapes alone, never by the thread count or by timing. */
#ifndef Q8RT_THREADPOOL_H
#define Q8RT_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

typedef struct q8rt_threadpool q8rt_threadpool;

/* fn(ctx, item) for one item in [0, n). Must not call q8rt_parallel_for on the same pool. */
typedef void (*q8rt_task_fn)(void *ctx, size_t item);

/* A pool for `threads` threads in all: the caller plus threads - 1 workers. NULL when threads < 2
 * or on failure (out of memory, no threads: *failed set). Workers sleep until the first region. */
q8rt_threadpool *q8rt_threadpool_create(const q8rt_allocator *a, size_t threads, int *failed);

/* Counting what the regions do, for profiles (q8rt_session_profile_threads). */
enum {
  Q8RT_POOL_RUN = 0,   /* plain */
  Q8RT_POOL_COUNT = 1, /* also count regions, items, the caller's items and the time in regions */
  /* No worker is started: every item of every region runs on the caller, in order, each timed,
   * while the pool still says `threads` (so the ops split exactly as they would). `ideal_ns` is
   * then what each region would take on `threads` threads with nothing but the items' own time:
   * items claimed in order, each by the thread free first. The serial part of a plan (steps or
   * parts of steps outside regions) and the granularity of its regions, measured on one core
   * whatever the other cores are doing. */
  Q8RT_POOL_ANALYZE = 2
};
q8rt_threadpool *q8rt_threadpool_create_mode(const q8rt_allocator *a, size_t threads, int mode, int *failed);

/* Totals since the pool was made (modes COUNT and ANALYZE; zero otherwise). Regions are the
 * calls of q8rt_parallel_for with n >= 2, including those a solo stretch ran on the caller. */
typedef struct q8rt_pool_stats {
  size_t regions, items, caller_items;
  int64_t region_ns, ideal_ns; /* ideal_ns: ANALYZE only */
} q8rt_pool_stats;
void q8rt_threadpool_stats(const q8rt_threadpool *p, q8rt_pool_stats *out);
void q8rt_threadpool_destroy(q8rt_threadpool *p);

/* What the regions found, counted in every mode (caller-side counters, no atomics): regions
 * (n >= 2, forced solo ones not counted), of which a solo stretch ran on the caller alone, of
 * which the workers ran no item although the region was shared, the solo stretches started, and
 * the time the caller waited for items a worker had claimed (summed over the regions). Totals
 * since the pool was made; for the session's q8rt_session_run_stats. */
typedef struct q8rt_pool_counts {
  size_t regions, solo_regions, unhelped_regions, solo_stretches;
  int64_t wait_ns;
} q8rt_pool_counts;
void q8rt_threadpool_counts(const q8rt_threadpool *p, q8rt_pool_counts *out);

/* Threads of the pool, caller included (1 for NULL). */
size_t q8rt_threadpool_threads(const q8rt_threadpool *p);

/* Run fn(ctx, i) for every i in [0, n) on the caller and whichever workers join; returns when all
 * are done. p NULL or n < 2: on the caller, in order. Never allocates. Not reentrant: one region
 * at a time per pool (a session runs one step at a time). */
void q8rt_parallel_for(q8rt_threadpool *p, size_t n, q8rt_task_fn fn, void *ctx);

/* Whether regions now share their items (0: a solo stretch runs them on the caller alone, or no
 * pool). For ops whose split itself costs work (a per-block copy one thread would not make): call
 * from the thread that runs the regions. */
int q8rt_threadpool_sharing(const q8rt_threadpool *p);

/* While on, every region runs on the caller alone and no worker is woken (the session's choice
 * for whole runs that sharing would slow down: src/runtime/session.c). Call from the thread that
 * runs the regions, between regions. */
void q8rt_threadpool_force_solo(q8rt_threadpool *p, int on);

/* Forget the account of what sharing cost and any solo stretch (the next region shares). For the
 * first shared run after runs the session ran alone: a stretch started before them says how the
 * workers did back then, and one of up to 128 ms would make that run (a probe of sharing) alone too.
 * Call from the thread that runs the regions, between regions. */
void q8rt_threadpool_fresh(q8rt_threadpool *p);

/* For tests: while held, workers stay out of regions as descheduled threads would (they still
 * wake and sleep). Regions must then complete on the caller alone. */
void q8rt_threadpool_hold(q8rt_threadpool *p, int hold);

/* For tests: the epoch of the latest region (regions count up from it), to cross its wrap. Call
 * from the thread that runs the regions, between regions. */
void q8rt_threadpool_set_epoch(q8rt_threadpool *p, uint32_t epoch);

/* For tests: how many times the pool has started running regions on the caller alone (a worker
 * found descheduled). Call from the thread that runs the regions. */
size_t q8rt_threadpool_solo_stretches(const q8rt_threadpool *p);

/* Move the calling thread off CPU `cpu` to another CPU of its affinity mask, leaving the mask as
 * it was. Returns whether it now runs elsewhere (0: no other CPU allowed, or the system refused).
 * What a worker does when it finds itself on the caller's CPU; public for tests. */
int q8rt_thread_move_off(int cpu);

#endif
