/* Concurrency through the public API, the cases `make test-tsan` runs under ThreadSanitizer
 * (names start with "threads_"): one model shared by sessions in several threads, every session
 * thread count 1-4 (q8rt's pool and, for XNNPACK steps, pthreadpool), re-binding shapes, and
 * concurrent loads (one-time CPU detection and XNNPACK initialization). Every output must equal
 * the single-thread reference byte for byte. */
#include <pthread.h>
#include <stdlib.h>

#include "model_builder.h"
#include "q8rt.h"
#include "test.h"

enum { TH_C = 24, TH_H = 13, TH_W = 11, TH_WORKERS = 4 };
#define TH_BYTES(n) ((size_t)(n)*TH_C * TH_H * TH_W)

typedef struct th_shared {
  const uint8_t *bytes; /* model bytes, for the loading threads */
  size_t size;
  const q8rt_model *model; /* the shared model, for the others */
  q8rt_backend backend;
  const uint8_t *x;   /* input for batch 2 (batch 1 is its first half) */
  const uint8_t *ref; /* reference output for batch 2 */
} th_shared;

typedef struct th_job {
  const th_shared *sh;
  int first_threads;
  int load_own; /* load the model in this thread instead of using the shared one */
  int rounds;
  int rc;
  char msg[512];
} th_job;

/* Run batch n through s and compare with the reference's first n images. */
static int th_run(q8rt_session *s, const th_shared *sh, int64_t n, q8rt_error *err) {
  const int64_t shape[4] = {n, TH_C, TH_H, TH_W};
  if (q8rt_session_set_input(s, 0, shape, 4, sh->x, TH_BYTES(n), err) != Q8RT_OK) return 1;
  if (q8rt_session_run(s, err) != Q8RT_OK) return 1;
  const void *y;
  size_t yb;
  if (q8rt_session_get_output(s, 0, NULL, &y, &yb, err) != Q8RT_OK) return 1;
  if (yb != TH_BYTES(n) || memcmp(y, sh->ref, yb) != 0) {
    snprintf(err->message, sizeof(err->message), "output differs from the reference (batch %lld)", (long long)n);
    return 1;
  }
  return 0;
}

static void *th_main(void *arg) {
  th_job *j = arg;
  const th_shared *sh = j->sh;
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  j->rc = 0;
  for (int round = 0; round < j->rounds && !j->rc; round++) {
    const q8rt_model *m = sh->model;
    q8rt_model *own = NULL;
    if (j->load_own) {
      q8rt_model_options mo;
      q8rt_model_options_init(&mo);
      mo.backend = sh->backend;
      j->rc = q8rt_model_load_memory(sh->bytes, sh->size, &mo, &own, &err) != Q8RT_OK;
      m = own;
    }
    /* every thread count, starting at a different one in each thread */
    for (int k = 0; k < 4 && !j->rc; k++) {
      q8rt_session_options so;
      q8rt_session_options_init(&so);
      so.threads = 1 + (j->first_threads + k + round) % 4;
      q8rt_session *s = NULL;
      j->rc = q8rt_session_create(m, &so, &s, &err) != Q8RT_OK;
      /* batch 1, 2, 1: re-binding re-plans the arena of this session only */
      for (int b = 0; b < 3 && !j->rc; b++) j->rc = th_run(s, sh, b == 1 ? 2 : 1, &err);
      q8rt_session_free(s);
    }
    q8rt_model_free(own);
  }
  if (j->rc) memcpy(j->msg, err.message, sizeof(j->msg));
  return NULL;
}

/* XNNPACK steps run on pthreadpool, whose workers spin while waiting: on a loaded machine (and
 * under TSan) with 4 x 4 threads that costs seconds per round, hence fewer rounds there. */
static int th_case(q8rt_backend backend, int load_own, int rounds) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(3, -1, TH_C, TH_H, TH_W, &size);
  uint8_t *x = malloc(TH_BYTES(2)), *ref = malloc(TH_BYTES(2));
  CHECK(bytes != NULL && x != NULL && ref != NULL);
  for (size_t i = 0; i < TH_BYTES(2); i++) x[i] = (uint8_t)((i * 2654435761u) >> 11);
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.backend = backend;
  q8rt_model *m = NULL;
  q8rt_error err;
  if (q8rt_model_load_memory(bytes, size, &mo, &m, &err) != Q8RT_OK) {
    /* a backend this CPU lacks: only AUTO must always load */
    free(bytes);
    free(x);
    free(ref);
    CHECK(backend != Q8RT_BACKEND_AUTO);
    printf("  (backend %s not available: %s)\n", q8rt_backend_name(backend), err.message);
    return 0;
  }
  /* the reference: the same model, one thread, on the main thread */
  {
    q8rt_session *s = NULL;
    const int64_t shape[4] = {2, TH_C, TH_H, TH_W};
    const void *y;
    size_t yb;
    CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
    CHECK_OK(q8rt_session_set_input(s, 0, shape, 4, x, TH_BYTES(2), NULL));
    CHECK_OK(q8rt_session_run(s, NULL));
    CHECK_OK(q8rt_session_get_output(s, 0, NULL, &y, &yb, NULL));
    CHECK(yb == TH_BYTES(2));
    memcpy(ref, y, yb);
    q8rt_session_free(s);
  }
  th_shared sh = {bytes, size, m, backend, x, ref};
  th_job jobs[TH_WORKERS];
  pthread_t th[TH_WORKERS];
  for (int i = 0; i < TH_WORKERS; i++) {
    memset(&jobs[i], 0, sizeof(jobs[i]));
    jobs[i].sh = &sh;
    jobs[i].first_threads = i;
    jobs[i].load_own = load_own;
    jobs[i].rounds = rounds;
    CHECK(pthread_create(&th[i], NULL, th_main, &jobs[i]) == 0);
  }
  for (int i = 0; i < TH_WORKERS; i++) pthread_join(th[i], NULL);
  int rc = 0;
  for (int i = 0; i < TH_WORKERS; i++) {
    if (jobs[i].rc) {
      fprintf(stderr, "  thread %d (%s): %s\n", i, q8rt_backend_name(backend), jobs[i].msg);
      rc = 1;
    }
  }
  q8rt_model_free(m);
  free(bytes);
  free(x);
  free(ref);
  return rc;
}

Q8RT_TEST(threads_shared_model_every_thread_count) { return th_case(Q8RT_BACKEND_AUTO, 0, 3); }
Q8RT_TEST(threads_shared_model_reference) { return th_case(Q8RT_BACKEND_REFERENCE, 0, 2); }
Q8RT_TEST(threads_shared_model_xnnpack) { return th_case(Q8RT_BACKEND_XNNPACK, 0, 1); }
Q8RT_TEST(threads_concurrent_loads) { return th_case(Q8RT_BACKEND_AUTO, 1, 2); }
Q8RT_TEST(threads_concurrent_loads_xnnpack) { return th_case(Q8RT_BACKEND_XNNPACK, 1, 1); }
