/* Planner, arena, sessions and API behaviour through the public API. */
#include <pthread.h>
#include <stdlib.h>

#include "model_builder.h"
#include "runtime/internal.h"
#include "q8rt.h"
#include "test.h"

/* ---- a counting allocator that can be told to fail at the k-th allocation ---- */
typedef struct counting {
  long allocs, frees;
  long live_bytes;
  long fail_at; /* -1: never */
} counting;

static void *c_alloc(void *ud, size_t size, size_t alignment) {
  counting *c = ud;
  if (c->fail_at >= 0 && c->allocs >= c->fail_at) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size ? size : 1) != 0) return NULL;
  c->allocs++;
  c->live_bytes += (long)size;
  return p;
}

static void c_free(void *ud, void *ptr, size_t size) {
  counting *c = ud;
  c->frees++;
  c->live_bytes -= (long)size;
  free(ptr);
}

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

static int run_chain(const q8rt_model *m, int64_t n, uint8_t seed, uint8_t *out, size_t out_cap) {
  q8rt_session *s = NULL;
  if (q8rt_session_create(m, NULL, &s, NULL) != Q8RT_OK) return 1;
  q8rt_tensor_info info;
  q8rt_model_input_info(m, 0, &info, NULL);
  int64_t shape[4] = {n, info.shape[1], info.shape[2], info.shape[3]};
  size_t bytes = (size_t)(n * shape[1] * shape[2] * shape[3]);
  uint8_t *x = malloc(bytes);
  for (size_t i = 0; i < bytes; i++) x[i] = (uint8_t)(i * 7 + seed);
  int rc = q8rt_session_set_input(s, 0, shape, 4, x, bytes, NULL) != Q8RT_OK || q8rt_session_run(s, NULL) != Q8RT_OK;
  const void *y = NULL;
  size_t ybytes = 0;
  if (!rc) rc = q8rt_session_get_output(s, 0, NULL, &y, &ybytes, NULL) != Q8RT_OK || ybytes > out_cap;
  if (!rc) memcpy(out, y, ybytes);
  free(x);
  q8rt_session_free(s);
  return rc;
}

Q8RT_TEST(arena_reuses_dead_buffers) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(4, 1, 8, 16, 16, &size);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_model_options mo; /* the reference kernels: no layout transposes, no workspaces */
  q8rt_model_options_init(&mo);
  mo.backend = Q8RT_BACKEND_REFERENCE;
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  free(bytes);
  CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
  /* x0..x4 are 2 KiB each. The input x0 and the output x4 live through the run; x1 dies after
   * conv1, so x3 can take its place: four buffers for five values. */
  const size_t buf = align64(8 * 16 * 16);
  CHECK(q8rt_session_arena_size(s) > 0);
  CHECK(q8rt_session_arena_size(s) <= 4 * buf + 64);
  q8rt_session_free(s);
  q8rt_model_free(m);
  return 0;
}

Q8RT_TEST(repeated_runs_keep_inputs) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(4, 1, 3, 9, 9, &size);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, NULL, &m, NULL));
  free(bytes);
  CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
  uint8_t x[3 * 9 * 9], first[3 * 9 * 9];
  for (size_t i = 0; i < sizeof(x); i++) x[i] = (uint8_t)(i * 13 + 1);
  const int64_t shape[4] = {1, 3, 9, 9};
  CHECK_OK(q8rt_session_set_input(s, 0, shape, 4, x, sizeof(x), NULL));
  const void *y;
  size_t yb;
  for (int r = 0; r < 3; r++) {
    CHECK_OK(q8rt_session_run(s, NULL));
    CHECK_OK(q8rt_session_get_output(s, 0, NULL, &y, &yb, NULL));
    CHECK(yb == sizeof(first));
    if (r == 0)
      memcpy(first, y, yb);
    else
      CHECK(memcmp(first, y, yb) == 0);
  }
  q8rt_session_free(s);
  q8rt_model_free(m);
  return 0;
}

Q8RT_TEST(run_does_not_allocate) {
  counting c = {0, 0, 0, -1};
  q8rt_allocator a = {c_alloc, c_free, &c};
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.allocator = &a;
  size_t size;
  uint8_t *bytes = mb_conv_chain(3, 1, 4, 8, 8, &size);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  free(bytes);
  CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
  uint8_t x[4 * 8 * 8];
  memset(x, 3, sizeof(x));
  const int64_t shape[4] = {1, 4, 8, 8};
  CHECK_OK(q8rt_session_set_input(s, 0, shape, 4, x, sizeof(x), NULL));
  const long before = c.allocs;
  for (int i = 0; i < 10; i++) {
    CHECK_OK(q8rt_session_set_input(s, 0, shape, 4, x, sizeof(x), NULL));
    CHECK_OK(q8rt_session_run(s, NULL));
  }
  CHECK(c.allocs == before);
  CHECK(c.allocs > 0); /* the allocator really was used */
  q8rt_session_free(s);
  q8rt_model_free(m);
  CHECK(c.live_bytes == 0);
  CHECK(c.allocs == c.frees);
  return 0;
}

/* Every allocation made by load, session creation and binding fails once in turn: each must
 * give OUT_OF_MEMORY and leave nothing allocated (as Lua's ltests do). */
Q8RT_TEST(every_allocation_failure_is_reported) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(2, -1, 3, 6, 6, &size);
  int succeeded = 0;
  for (long k = 0; k < 2000 && !succeeded; k++) {
    counting c = {0, 0, 0, k};
    q8rt_allocator a = {c_alloc, c_free, &c};
    q8rt_model_options mo;
    q8rt_model_options_init(&mo);
    mo.allocator = &a;
    q8rt_model *m = NULL;
    q8rt_session *s = NULL;
    q8rt_error err;
    q8rt_status st = q8rt_model_load_memory(bytes, size, &mo, &m, &err);
    if (st == Q8RT_OK) st = q8rt_session_create(m, NULL, &s, &err);
    if (st == Q8RT_OK) {
      uint8_t x[2 * 3 * 6 * 6] = {0};
      const int64_t shape[4] = {2, 3, 6, 6};
      st = q8rt_session_set_input(s, 0, shape, 4, x, sizeof(x), &err);
      if (st == Q8RT_OK) st = q8rt_session_run(s, &err);
    }
    if (st == Q8RT_OK) {
      succeeded = 1;
    } else if (st != Q8RT_ERROR_OUT_OF_MEMORY || err.status != st) {
      fprintf(stderr, "  allocation %ld failing gave status %d: %s\n", k, (int)st, err.message);
      free(bytes);
      return 1;
    }
    q8rt_session_free(s);
    q8rt_model_free(m);
    if (c.live_bytes != 0) {
      fprintf(stderr, "  allocation %ld failing leaked %ld bytes\n", k, c.live_bytes);
      free(bytes);
      return 1;
    }
  }
  free(bytes);
  CHECK(succeeded);
  return 0;
}

Q8RT_TEST(symbolic_batch_binds_at_set_input) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(2, -1, 4, 5, 7, &size);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_error err;
  CHECK_OK(q8rt_model_load_memory(bytes, size, NULL, &m, NULL));
  free(bytes);
  q8rt_tensor_info info;
  CHECK_OK(q8rt_model_input_info(m, 0, &info, NULL));
  CHECK(info.rank == 4 && info.shape[0] == -1 && info.shape[1] == 4);
  CHECK(info.has_quantization && info.scale == 0.05f && info.zero_point == 128);
  CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
  CHECK(q8rt_session_arena_size(s) == 0);
  CHECK(q8rt_session_run(s, &err) == Q8RT_ERROR_STATE);
  CHECK(strstr(err.message, "x0") != NULL);
  /* results for batch 3 equal three batch-1 runs */
  uint8_t one[3][4 * 5 * 7], three[3 * 4 * 5 * 7];
  for (int b = 0; b < 3; b++) CHECK(run_chain(m, 1, (uint8_t)(b * 4 * 5 * 7 * 7), one[b], sizeof(one[b])) == 0);
  CHECK(run_chain(m, 3, 0, three, sizeof(three)) == 0);
  for (int b = 0; b < 3; b++) CHECK(memcmp(one[b], three + b * sizeof(one[b]), sizeof(one[b])) == 0);
  /* rebinding to another batch in the same session */
  const int64_t shape2[4] = {2, 4, 5, 7};
  uint8_t x[2 * 4 * 5 * 7] = {0};
  CHECK_OK(q8rt_session_set_input(s, 0, shape2, 4, x, sizeof(x), NULL));
  CHECK_OK(q8rt_session_run(s, NULL));
  CHECK_OK(q8rt_session_get_output(s, 0, &info, NULL, NULL, NULL));
  CHECK(info.shape[0] == 2 && info.shape[1] == 4 && info.shape[2] == 5 && info.shape[3] == 7);
  q8rt_session_free(s);
  q8rt_model_free(m);
  return 0;
}

Q8RT_TEST(api_misuse_is_reported) {
  q8rt_error err;
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_model_free(NULL);
  q8rt_session_free(NULL);
  CHECK(q8rt_model_load_memory(NULL, 10, NULL, &m, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK(q8rt_model_load_memory("x", 1, NULL, NULL, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK(q8rt_model_load_file("/nonexistent/model.onnx", NULL, &m, &err) == Q8RT_ERROR_IO);
  CHECK(strstr(err.message, "/nonexistent/model.onnx") != NULL);
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.size = 3;
  size_t size;
  uint8_t *bytes = mb_conv_chain(1, 1, 2, 4, 4, &size);
  CHECK(q8rt_model_load_memory(bytes, size, &mo, &m, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(err.message, "size") != NULL);
  q8rt_model_options_init(&mo);
#if defined(__x86_64__)
  mo.backend = Q8RT_BACKEND_NEON; /* a backend this CPU cannot have */
  CHECK(q8rt_model_load_memory(bytes, size, &mo, &m, &err) == Q8RT_ERROR_UNSUPPORTED);
  CHECK(strstr(err.message, "neon") != NULL && strstr(err.message, "conv0") != NULL);
#endif
  mo.backend = (q8rt_backend)42;
  CHECK(q8rt_model_load_memory(bytes, size, &mo, &m, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK_OK(q8rt_model_load_memory(bytes, size, NULL, &m, NULL));
  free(bytes);
  CHECK(q8rt_session_create(NULL, NULL, &s, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
  CHECK(q8rt_session_get_output(s, 0, NULL, NULL, NULL, &err) == Q8RT_ERROR_STATE);
  uint8_t x[2 * 4 * 4] = {0};
  const int64_t good[4] = {1, 2, 4, 4}, bad[4] = {1, 3, 4, 4};
  CHECK(q8rt_session_set_input(s, 1, good, 4, x, sizeof(x), &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK(q8rt_session_set_input(s, 0, bad, 4, x, sizeof(x), &err) == Q8RT_ERROR_SHAPE);
  CHECK(strstr(err.message, "x0") != NULL);
  CHECK(q8rt_session_set_input(s, 0, good, 3, x, sizeof(x), &err) == Q8RT_ERROR_SHAPE);
  CHECK(q8rt_session_set_input(s, 0, good, 4, x, sizeof(x) - 1, &err) == Q8RT_ERROR_SHAPE);
  CHECK_OK(q8rt_session_set_input(s, 0, good, 4, x, sizeof(x), NULL));
  CHECK_OK(q8rt_session_run(s, NULL));
  CHECK(q8rt_session_get_output(s, 5, NULL, NULL, NULL, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  q8rt_tensor_info info;
  CHECK(q8rt_model_output_info(m, 1, &info, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK(q8rt_model_find_input(m, "x0") == 0 && q8rt_model_find_input(m, "nope") == -1);
  CHECK(q8rt_model_find_output(m, "x1") == 0);
  char text[4096];
  size_t need = q8rt_model_explain(m, NULL, 0);
  CHECK(need > 0 && need < sizeof(text));
  CHECK(q8rt_model_explain(m, text, sizeof(text)) == need);
  CHECK(strstr(text, "QLinearConv") != NULL && strstr(text, "conv0") != NULL);
  q8rt_session_free(s);
  q8rt_model_free(m);
  return 0;
}

Q8RT_TEST(caller_arena) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(3, 1, 4, 8, 8, &size);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_error err;
  CHECK_OK(q8rt_model_load_memory(bytes, size, NULL, &m, NULL));
  free(bytes);
  uint8_t expect[4 * 8 * 8], got[4 * 8 * 8];
  CHECK(run_chain(m, 1, 5, expect, sizeof(expect)) == 0);
  CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
  const size_t need = q8rt_session_arena_size(s);
  void *arena = NULL;
  CHECK(posix_memalign(&arena, 64, need) == 0);
  CHECK(q8rt_session_set_arena(s, arena, need - 64, &err) == Q8RT_ERROR_OUT_OF_MEMORY);
  CHECK_OK(q8rt_session_set_arena(s, arena, need, NULL));
  uint8_t x[4 * 8 * 8];
  for (size_t i = 0; i < sizeof(x); i++) x[i] = (uint8_t)(i * 7 + 5);
  const int64_t shape[4] = {1, 4, 8, 8};
  CHECK_OK(q8rt_session_set_input(s, 0, shape, 4, x, sizeof(x), NULL));
  CHECK_OK(q8rt_session_run(s, NULL));
  const void *y;
  size_t yb;
  CHECK_OK(q8rt_session_get_output(s, 0, NULL, &y, &yb, NULL));
  CHECK((const char *)y >= (const char *)arena && (const char *)y < (const char *)arena + need);
  memcpy(got, y, yb);
  CHECK(yb == sizeof(got) && memcmp(got, expect, yb) == 0);
  q8rt_session_free(s);
  free(arena);
  q8rt_model_free(m);
  return 0;
}

typedef struct thread_job {
  const q8rt_model *m;
  uint8_t out[6 * 10 * 10];
  int rc;
} thread_job;

static void *thread_main(void *arg) {
  thread_job *j = arg;
  j->rc = 0;
  for (int i = 0; i < 20 && !j->rc; i++) j->rc = run_chain(j->m, 1, 9, j->out, sizeof(j->out));
  return NULL;
}

Q8RT_TEST(model_is_shared_by_threads) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(3, 1, 6, 10, 10, &size);
  q8rt_model *m = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, NULL, &m, NULL));
  free(bytes);
  thread_job jobs[3];
  pthread_t th[3];
  for (int i = 0; i < 3; i++) {
    jobs[i].m = m;
    CHECK(pthread_create(&th[i], NULL, thread_main, &jobs[i]) == 0);
  }
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 3; i++) CHECK(jobs[i].rc == 0);
  CHECK(memcmp(jobs[0].out, jobs[1].out, sizeof(jobs[0].out)) == 0);
  CHECK(memcmp(jobs[0].out, jobs[2].out, sizeof(jobs[0].out)) == 0);
  q8rt_model_free(m);
  return 0;
}

Q8RT_TEST(profile_reports_every_step) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(3, 1, 2, 4, 4, &size);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.backend = Q8RT_BACKEND_REFERENCE; /* one step per node */
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  free(bytes);
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.profile = 1;
  CHECK_OK(q8rt_session_create(m, &so, &s, NULL));
  CHECK_OK(q8rt_session_run(s, NULL));
  q8rt_step_profile steps[8];
  CHECK(q8rt_session_profile(s, steps, 8) == 3);
  CHECK(strcmp(steps[2].node_name, "conv2") == 0 && steps[2].milliseconds >= 0.0);
  q8rt_session_free(s);
  q8rt_model_free(m);
  return 0;
}

/* The fast paths split rows into tiles over threads: every thread count and every backend must
 * give the reference's bytes. */
static int run_with(const uint8_t *bytes, size_t size, q8rt_backend backend, int threads, const uint8_t *x,
                    size_t xbytes, const int64_t *shape, uint8_t *out, size_t cap) {
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.backend = backend;
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.threads = threads;
  q8rt_error err;
  if (q8rt_model_load_memory(bytes, size, &mo, &m, &err) != Q8RT_OK) return -1; /* backend refused */
  int rc = q8rt_session_create(m, &so, &s, &err) != Q8RT_OK ||
           q8rt_session_set_input(s, 0, shape, 4, x, xbytes, &err) != Q8RT_OK || q8rt_session_run(s, &err) != Q8RT_OK;
  const void *y = NULL;
  size_t yb = 0;
  if (!rc) rc = q8rt_session_get_output(s, 0, NULL, &y, &yb, &err) != Q8RT_OK || yb != cap;
  if (!rc) memcpy(out, y, yb);
  if (rc) fprintf(stderr, "  backend %s threads %d: %s\n", q8rt_backend_name(backend), threads, err.message);
  q8rt_session_free(s);
  q8rt_model_free(m);
  return rc;
}

Q8RT_TEST(threads_and_backends_agree) {
  const int64_t c = 40, h = 23, w = 29;
  size_t size;
  uint8_t *bytes = mb_conv_chain(3, 2, c, h, w, &size);
  const int64_t shape[4] = {2, c, h, w};
  const size_t n = (size_t)(2 * c * h * w);
  uint8_t *x = malloc(n), *ref = malloc(n), *got = malloc(n);
  for (size_t i = 0; i < n; i++) x[i] = (uint8_t)((i * 2654435761u) >> 13);
  CHECK(run_with(bytes, size, Q8RT_BACKEND_REFERENCE, 1, x, n, shape, ref, n) == 0);
  const q8rt_backend backends[] = {Q8RT_BACKEND_AUTO, Q8RT_BACKEND_AVX2, Q8RT_BACKEND_AVX512, Q8RT_BACKEND_XNNPACK};
  int ran = 0;
  for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
    for (int t = 1; t <= 3; t++) {
      memset(got, 0, n);
      int rc = run_with(bytes, size, backends[b], t, x, n, shape, got, n);
      if (rc < 0) continue; /* this CPU or build has no such backend for these nodes */
      CHECK(rc == 0);
      if (memcmp(got, ref, n) != 0) {
        fprintf(stderr, "  backend %s with %d threads differs from the reference\n", q8rt_backend_name(backends[b]), t);
        return 1;
      }
      ran++;
    }
  }
  CHECK(ran >= 3); /* at least auto ran with 1..3 threads */
  free(x);
  free(ref);
  free(got);
  free(bytes);
  return 0;
}

/* Weights in [-64, 63]: every adjacent pair has |w0| + |w1| <= 128, so --backend avx2 may take the
 * vpmaddubsw route; it must say so and stay exact. */
Q8RT_TEST(avx2_pairs_route_when_proven) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2")) return 0;
  mb_weight_limit = 63;
  const int64_t c = 24, h = 15, w = 17;
  size_t size;
  uint8_t *bytes = mb_conv_chain(2, 1, c, h, w, &size);
  mb_weight_limit = 127;
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.backend = Q8RT_BACKEND_AVX2;
  q8rt_model *m = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  char text[4096];
  q8rt_model_explain(m, text, sizeof(text));
  q8rt_model_free(m);
  CHECK(strstr(text, "vpmaddubsw") != NULL);
  const int64_t shape[4] = {1, c, h, w};
  const size_t n = (size_t)(c * h * w);
  uint8_t *x = malloc(n), *ref = malloc(n), *got = malloc(n);
  for (size_t i = 0; i < n; i++) x[i] = (uint8_t)(i % 3 == 0 ? 255 : (i * 2654435761u) >> 11);
  CHECK(run_with(bytes, size, Q8RT_BACKEND_REFERENCE, 1, x, n, shape, ref, n) == 0);
  CHECK(run_with(bytes, size, Q8RT_BACKEND_AVX2, 2, x, n, shape, got, n) == 0);
  CHECK(memcmp(ref, got, n) == 0);
  free(x);
  free(ref);
  free(got);
  free(bytes);
#endif
  return 0;
}

/* The session's choice of whole runs alone or shared: the schedule (warm-up shared, then shared
 * and alone alternately Q8RT_RUN_HIST times each, then the choice with a probe of the other mode
 * every 64 runs while shared, about every 20 ms (8..256 runs) while alone), the rule (shared's
 * median and alone's best recent time: alone only 5% ahead of shared, shared back as soon as it
 * is faster) and
 * contention (the caller on a CPU less than 3/4 of a run's time: alone, no probe). */
Q8RT_TEST(run_mode_schedule_and_choice) {
  const int first[7] = {0, 0, 1, 0, 1, 0, 1};
  for (unsigned k = 0; k < 7; k++)
    CHECK(q8rt_run_mode_pick(k, 0, 0, 0, 1.0) == first[k] && q8rt_run_mode_pick(k, 0, 1, 1, 1.0) == first[k]);
  /* shared: an alone probe after 64 runs without one */
  CHECK(q8rt_run_mode_pick(7, 0, 0, 0, 1.0) == 0 && q8rt_run_mode_pick(70, 63, 0, 0, 1.0) == 0);
  CHECK(q8rt_run_mode_pick(71, 64, 0, 0, 1.0) == 1 && q8rt_run_mode_pick(71, 64, 0, 1, 1.0) == 1);
  /* alone: a shared probe every 20 ms of alone runs, 8 runs at least apart, 256 at most */
  CHECK(q8rt_run_mode_pick(20, 7, 1, 0, 5.0) == 1 && q8rt_run_mode_pick(20, 8, 1, 0, 5.0) == 0);
  CHECK(q8rt_run_mode_pick(60, 39, 1, 0, 0.5) == 1 && q8rt_run_mode_pick(60, 40, 1, 0, 0.5) == 0);
  CHECK(q8rt_run_mode_pick(900, 255, 1, 0, 0.02) == 1 && q8rt_run_mode_pick(900, 256, 1, 0, 0.02) == 0);
  CHECK(q8rt_run_mode_pick(20, 8, 1, 0, 0.0) == 0); /* no alone time yet: the shortest gap */
  /* contended alone runs: no shared probe, however long since the last */
  CHECK(q8rt_run_mode_pick(900, 800, 1, 1, 5.0) == 1 && q8rt_run_mode_pick(900, 800, 1, 1, 0.02) == 1);
  CHECK(q8rt_run_contended(10.0, 7.0) && !q8rt_run_contended(10.0, 8.0) && !q8rt_run_contended(0.05, 0.05));
  CHECK(!q8rt_run_contended(10.0, 0.0)); /* no thread CPU clock: no verdict */
  /* the typical time: the median of three, the mean of two, none */
  const double t3[Q8RT_RUN_HIST] = {0.9, 0.45, 0.5}, t2[Q8RT_RUN_HIST] = {1.0, 2.0, 0.0};
  const double t0[Q8RT_RUN_HIST] = {0.0, 0.0, 0.0}, t1[Q8RT_RUN_HIST] = {0.0, 0.7, 0.0};
  CHECK(q8rt_run_mode_typical(t3) == 0.5 && q8rt_run_mode_typical(t2) == 1.5);
  CHECK(q8rt_run_mode_typical(t0) == 0.0 && q8rt_run_mode_typical(t1) == 0.7);
  CHECK(q8rt_run_mode_best(t3) == 0.45 && q8rt_run_mode_best(t2) == 1.0);
  CHECK(q8rt_run_mode_best(t0) == 0.0 && q8rt_run_mode_best(t1) == 0.7);
  const double none[2][Q8RT_RUN_HIST] = {{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
  CHECK(q8rt_run_mode_choose(0, none) == 0 && q8rt_run_mode_choose(1, none) == 1);
  const double close[2][Q8RT_RUN_HIST] = {{1.0, 1.2, 0.99}, {0.97, 0.99, 0.96}}; /* alone 3% ahead: stay shared */
  CHECK(q8rt_run_mode_choose(0, close) == 0);
  CHECK(q8rt_run_mode_choose(1, close) == 1); /* ... but alone stays while it is not slower */
  const double alone[2][Q8RT_RUN_HIST] = {{2.3, 2.0, 2.1}, {1.0, 1.1, 1.2}};
  CHECK(q8rt_run_mode_choose(0, alone) == 1);
  const double shared[2][Q8RT_RUN_HIST] = {{0.55, 0.9, 0.5}, {0.6, 0.58, 0.62}};
  CHECK(q8rt_run_mode_choose(1, shared) == 0);
  /* PP-OCR cls: one lucky shared run as fast as alone's does not make shared the choice (the
   * best of the last two did), nor do two noisy alone runs */
  const double lucky[2][Q8RT_RUN_HIST] = {{0.43, 0.69, 0.71}, {0.44, 0.9, 0.8}};
  CHECK(q8rt_run_mode_choose(1, lucky) == 1 && q8rt_run_mode_choose(0, lucky) == 1);
  /* det on a quiet machine: shared's median well ahead */
  const double det[2][Q8RT_RUN_HIST] = {{3.6, 3.5, 5.9}, {6.1, 6.2, 6.3}};
  CHECK(q8rt_run_mode_choose(1, det) == 0 && q8rt_run_mode_choose(0, det) == 0);
  return 0;
}

/* Drives the run-mode choice through `runs` runs whose time is shared_ms(k) or alone_ms; returns
 * how many of runs [from, runs) were alone, and in *fresh how many times the pool was told to
 * start afresh. */
static int rm_simulate(int runs, int from, double (*shared_ms)(int), double alone_ms, int *fresh, int *first_alone) {
  q8rt_run_mode m;
  memset(&m, 0, sizeof(m));
  int alone = 0, prev = 0;
  *fresh = 0;
  *first_alone = -1;
  for (int k = 0; k < runs; k++) {
    const int f = q8rt_run_mode_start(&m);
    if (f != (m.cur == 0 && prev == 1)) return -1; /* afresh exactly when sharing follows alone */
    *fresh += f;
    if (k >= from && m.cur == 1) {
      alone++;
      if (*first_alone < 0) *first_alone = k;
    }
    q8rt_run_mode_finish(&m, m.cur ? alone_ms : shared_ms(k), 0);
    prev = m.cur;
  }
  return alone;
}

/* det on a quiet machine (shared 3.5 ms, alone 6.0) with a short spell right after the first
 * alternation: three shared runs at 7.5 ms. Alone is chosen, and the first probe that is fast
 * brings shared back (8 alone runs): its time alone judges shared. With the stale times kept it
 * took a second probe (17 alone runs). */
static double det_spell(int k) { return k >= 7 && k <= 9 ? 7.5 : 3.5; }
static double det_quiet(int k) { return k == 1 ? 4.5 : 3.5; }
/* cls-like: shared 1.4x alone's time, every fifth shared run lucky (as fast as alone) */
static double cls_shared(int k) { return k % 5 == 0 ? 0.40 : 0.56; }

Q8RT_TEST(run_mode_recovers_after_a_spell) {
  int fresh = 0, first = 0;
  /* quiet: shared from the alternation on, alone only as the probes every 64 runs */
  CHECK(rm_simulate(200, 7, det_quiet, 6.0, &fresh, &first) == 2 && first == 71 && fresh == 3 + 2);
  /* the spell: alone after its second slow run, shared again at the first probe */
  CHECK(rm_simulate(60, 7, det_spell, 6.0, &fresh, &first) == 8 && first == 9 && fresh == 3 + 1);
  /* a lucky probe of a losing shared mode brings it back for a run or two only */
  CHECK(rm_simulate(1000, 7, cls_shared, 0.40, &fresh, &first) >= 950);
  return 0;
}

/* q8rt_session_run_stats: every successful run counted once, as shared or alone (warm-up and the
 * first alternation: 4 shared, 3 alone at least), failed runs not at all; regions only in shared
 * runs; with the workers held out, every region of a shared run is one the workers did not help
 * (or a solo stretch ran); one thread: runs only. */
Q8RT_TEST(session_run_stats) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(3, -1, 16, 48, 48, &size); /* batch symbolic */
  q8rt_model *m = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, NULL, &m, NULL));
  free(bytes);
  q8rt_run_stats st;
  memset(&st, 0xff, sizeof(st));
  q8rt_session_run_stats(NULL, &st);
  CHECK(st.runs == 0 && st.shared_runs == 0 && st.alone_runs == 0 && st.regions == 0 && st.wait_ms == 0.0);
  uint8_t *x = malloc(2 * 16 * 48 * 48);
  for (size_t i = 0; i < 2 * 16 * 48 * 48; i++) x[i] = (uint8_t)(i * 29 + 5);
  const int64_t shape[4] = {1, 16, 48, 48};
  for (int threads = 1; threads <= 2; threads++) {
    q8rt_session_options so;
    q8rt_session_options_init(&so);
    so.threads = threads;
    q8rt_session *s = NULL;
    CHECK_OK(q8rt_session_create(m, &so, &s, NULL));
    CHECK(q8rt_session_run(s, NULL) == Q8RT_ERROR_STATE); /* no shape bound yet: not counted */
    CHECK_OK(q8rt_session_set_input(s, 0, shape, 4, x, 16 * 48 * 48, NULL));
    for (int r = 0; r < 12; r++) CHECK_OK(q8rt_session_run(s, NULL));
    q8rt_session_run_stats(s, &st);
    CHECK(st.runs == 12);
    if (threads == 1) {
      CHECK(st.shared_runs == 0 && st.alone_runs == 0 && st.regions == 0 && st.solo_stretches == 0);
    } else {
      CHECK(st.shared_runs + st.alone_runs == 12 && st.shared_runs >= 4 && st.alone_runs >= 3);
      CHECK(st.contended_runs <= 11); /* the warm-up run is not judged */
      CHECK(st.regions > 0 && st.solo_regions <= st.regions && st.unhelped_regions <= st.regions);
      CHECK(st.wait_ms >= 0.0);
      /* workers held out: each region of a shared run ran on the caller alone. A new shape
       * measures both modes again: the next 7 runs hold 4 shared ones. */
      q8rt_run_stats before, after;
      const int64_t shape2[4] = {2, 16, 48, 48};
      q8rt_threadpool_hold(s->pool, 1);
      CHECK_OK(q8rt_session_set_input(s, 0, shape2, 4, x, 2 * 16 * 48 * 48, NULL));
      for (int r = 0; r < 12; r++) CHECK_OK(q8rt_session_run(s, NULL));
      q8rt_threadpool_hold(s->pool, 0);
      q8rt_session_run_stats(s, &before);
      CHECK(before.runs == 24 && before.shared_runs + before.alone_runs == 24);
      CHECK(before.shared_runs >= st.shared_runs + 4 && before.regions > st.regions);
      CHECK(before.regions - st.regions ==
            (before.unhelped_regions - st.unhelped_regions) + (before.solo_regions - st.solo_regions));
      q8rt_session_run_stats(s, &after);
      CHECK(memcmp(&before, &after, sizeof(after)) == 0); /* a query changes nothing */
    }
    q8rt_session_free(s);
  }
  free(x);
  q8rt_model_free(m);
  return 0;
}

/* An empty tensor whose other dims multiply past Q8RT_MAX_ELEMENTS ([0, 2^62, 4]) is refused, as a
 * bound input and as a step's output: the ops reading it compute its strides from those dims
 * (Reduce, Transpose, Slice and Expand overflowed int64 on them; found by a random-seed fuzz-run). */
Q8RT_TEST(empty_tensor_with_huge_dims_refused) {
  const int64_t sym[3] = {-1, -1, -1}, hostile[3] = {0, INT64_MAX / 2, 4}, fine[3] = {0, 1 << 20, 4};
  mb_model *m = mb_create(18);
  mb_input(m, "x", 1, 3, sym);
  mb_output(m, "y", 1);
  const char *in[] = {"x", NULL}, *out[] = {"y", NULL};
  mb_node(m, "ReduceMax", "rmax", in, out);
  size_t size;
  uint8_t *bytes = mb_pack(m, &size);
  mb_free(m);
  q8rt_model *model = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, NULL, &model, NULL));
  free(bytes);
  q8rt_session *s = NULL;
  CHECK_OK(q8rt_session_create(model, NULL, &s, NULL));
  q8rt_error e;
  memset(&e, 0, sizeof(e));
  CHECK(q8rt_session_set_input_shape(s, 0, hostile, 3, &e) == Q8RT_ERROR_SHAPE);
  CHECK(strstr(e.message, "too large") != NULL);
  CHECK_OK(q8rt_session_set_input_shape(s, 0, fine, 3, NULL)); /* empty, its other dims within bounds */
  CHECK_OK(q8rt_session_run(s, NULL));
  q8rt_session_free(s);
  q8rt_model_free(model);

  /* ConstantOfShape([0, 2^62, 4]) -> Transpose: refused naming the node */
  m = mb_create(18);
  const int64_t three = 3, shape[3] = {0, INT64_MAX / 2, 4};
  mb_initializer(m, "s", 7 /* int64 */, 1, &three, shape, sizeof(shape));
  mb_output(m, "y", 1);
  const char *cin[] = {"s", NULL}, *cout[] = {"c", NULL}, *tin[] = {"c", NULL};
  mb_node(m, "ConstantOfShape", "cos", cin, cout);
  mb_node(m, "Transpose", "tr", tin, out);
  bytes = mb_pack(m, &size);
  mb_free(m);
  memset(&e, 0, sizeof(e));
  q8rt_status st = q8rt_model_load_memory(bytes, size, NULL, &model, &e);
  if (st == Q8RT_OK) {
    st = q8rt_session_create(model, NULL, &s, &e);
    if (st == Q8RT_OK) q8rt_session_free(s);
    q8rt_model_free(model);
  }
  free(bytes);
  CHECK(st == Q8RT_ERROR_SHAPE);
  CHECK(strstr(e.message, "cos") != NULL);
  return 0;
}

/* Concat in place (session.c, plan_in_place): x -> conv a (3x3), conv b (1x1) -> QLinearConcat(a,
 * b[, a]) along channels -> graph output. With the Concat's scale, a and b are written into the
 * Concat's output (their NHWC values live at their slice's offset in its block); listed twice, a
 * keeps its block (b still goes in place); on the reference backend (NCHW convolutions that write
 * densely) nothing does. The outputs are the same bytes in all three (tests/python/
 * test_concat_in_place.py compares such graphs with ONNX Runtime). */
static uint8_t *cat_model(int a_twice, size_t *size) {
  mb_model *mb = mb_create(13);
  const int64_t in_dims[4] = {1, 8, 12, 20}, scalar[1] = {0}, wd3[4] = {8, 8, 3, 3}, wd1[4] = {16, 8, 1, 1};
  mb_input(mb, "x", 2, 4, in_dims);
  const float xs = 0.05f, ys = 0.25f;
  const uint8_t zp = 7;
  const int8_t wz = 0;
  mb_initializer(mb, "xs", 1, 0, scalar, &xs, sizeof(xs));
  mb_initializer(mb, "ys", 1, 0, scalar, &ys, sizeof(ys));
  mb_initializer(mb, "zp", 2, 0, scalar, &zp, 1);
  mb_initializer(mb, "wz", 3, 0, scalar, &wz, 1);
  int8_t w3[8 * 8 * 9], w1[16 * 8];
  for (size_t i = 0; i < sizeof(w3); i++) w3[i] = (int8_t)(i * 37 % 255 - 127);
  for (size_t i = 0; i < sizeof(w1); i++) w1[i] = (int8_t)(i * 53 % 251 - 125);
  mb_initializer(mb, "w3", 3, 4, wd3, w3, sizeof(w3));
  mb_initializer(mb, "w1", 3, 4, wd1, w1, sizeof(w1));
  const float ws = 0.01f;
  mb_initializer(mb, "ws", 1, 0, scalar, &ws, sizeof(ws));
  const char *ia[] = {"x", "xs", "zp", "w3", "ws", "wz", "ys", "zp", NULL}, *oa[] = {"a", NULL};
  mb_node(mb, "QLinearConv", "conv_a", ia, oa);
  const int64_t pads[4] = {1, 1, 1, 1};
  mb_attr_ints(mb, "pads", 4, pads);
  const char *ib[] = {"x", "xs", "zp", "w1", "ws", "wz", "ys", "zp", NULL}, *ob[] = {"b", NULL};
  mb_node(mb, "QLinearConv", "conv_b", ib, ob);
  const char *ic[] = {"ys", "zp", "a", "ys", "zp", "b", "ys", "zp", "a", "ys", "zp", NULL}, *oc[] = {"cat", NULL};
  if (!a_twice) ic[8] = NULL;
  mb_node(mb, "QLinearConcat", "cat", ic, oc);
  mb_domain(mb, "com.microsoft");
  mb_attr_int(mb, "axis", 1);
  mb_output(mb, "cat", 2);
  uint8_t *bytes = mb_pack(mb, size);
  mb_free(mb);
  return bytes;
}

/* Runs the model; *a_in / *b_in: whether a's and b's NHWC values were put in place; out: the output */
static int run_cat(int a_twice, q8rt_backend backend, int threads, int *a_in, int *b_in, uint8_t *out, size_t cap) {
  size_t size;
  uint8_t *bytes = cat_model(a_twice, &size);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.backend = backend;
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.threads = threads;
  q8rt_error err = {Q8RT_OK, ""};
  int rc = q8rt_model_load_memory(bytes, size, &mo, &m, &err) != Q8RT_OK || q8rt_session_create(m, &so, &s, &err);
  free(bytes);
  uint8_t x[8 * 12 * 20];
  for (size_t i = 0; i < sizeof(x); i++) x[i] = (uint8_t)(i * 101 % 256);
  const int64_t dims[4] = {1, 8, 12, 20};
  const void *y = NULL;
  size_t ny = 0;
  if (!rc)
    rc = q8rt_session_set_input(s, 0, dims, 4, x, sizeof(x), &err) || q8rt_session_run(s, &err) ||
         q8rt_session_get_output(s, 0, NULL, &y, &ny, &err) || ny != cap;
  if (rc) fprintf(stderr, "  cat model: %s (%zu bytes out)\n", err.message, ny);
  if (!rc) {
    memcpy(out, y, cap);
    *a_in = *b_in = 0;
    const plan *p = &m->plan;
    for (int v = 0; v < p->n_values; v++) {
      if (strcmp(p->values[v].name, "a#nhwc") == 0) *a_in = s->in_place[v] >= 0;
      if (strcmp(p->values[v].name, "b#nhwc") == 0) *b_in = s->in_place[v] >= 0;
    }
  }
  q8rt_session_free(s);
  q8rt_model_free(m);
  return rc;
}

Q8RT_TEST(concat_in_place_decisions) {
  enum { N2 = 24 * 12 * 20, N3 = 32 * 12 * 20 };
  static uint8_t ref2[N2], got2[N2], ref3[N3], got3[N3];
  int a_in, b_in;
  CHECK(run_cat(0, Q8RT_BACKEND_REFERENCE, 1, &a_in, &b_in, ref2, N2) == 0);
  CHECK(!a_in && !b_in);
  for (int threads = 1; threads <= 3; threads++) {
    CHECK(run_cat(0, Q8RT_BACKEND_AUTO, threads, &a_in, &b_in, got2, N2) == 0);
    CHECK(a_in && b_in);
    CHECK(memcmp(got2, ref2, N2) == 0);
  }
  CHECK(run_cat(1, Q8RT_BACKEND_REFERENCE, 1, &a_in, &b_in, ref3, N3) == 0);
  CHECK(run_cat(1, Q8RT_BACKEND_AUTO, 2, &a_in, &b_in, got3, N3) == 0);
  CHECK(!a_in && b_in);
  CHECK(memcmp(got3, ref3, N3) == 0);
  return 0;
}

/* A copy onto itself (session.c, plan_alias): x -> Relu a -> Reshape r [-> Reshape r2] -> Relu y.
 * a, read only by the Reshape, lives in r's buffer (the Reshape then copies nothing); a that is
 * also a graph output keeps its own buffer and the copy; in a chain of two Reshapes only the
 * first is a copy onto itself (r hosts a). The output is relu(x) in every case. */
static int run_alias(int variant, int *a_in, int *r_in, float *out) {
  mb_model *mb = mb_create(13);
  const int64_t dims[4] = {1, 4, 6, 10}, sd[1] = {3}, shape[3] = {1, 4, 60}, shape2[3] = {1, 24, 10};
  mb_input(mb, "x", 1, 4, dims);
  mb_initializer(mb, "shape", 7, 1, sd, shape, sizeof(shape));
  mb_initializer(mb, "shape2", 7, 1, sd, shape2, sizeof(shape2));
  const char *i1[] = {"x", NULL}, *o1[] = {"a", NULL};
  mb_node(mb, "Relu", "relu_a", i1, o1);
  const char *i2[] = {"a", "shape", NULL}, *o2[] = {"r", NULL};
  mb_node(mb, "Reshape", "reshape_r", i2, o2);
  const char *i3[] = {"r", "shape2", NULL}, *o3[] = {"r2", NULL};
  if (variant == 2) mb_node(mb, "Reshape", "reshape_r2", i3, o3);
  const char *i4[] = {variant == 2 ? "r2" : "r", NULL}, *o4[] = {"y", NULL};
  mb_node(mb, "Relu", "relu_y", i4, o4);
  mb_output(mb, "y", 1);
  if (variant == 1) mb_output(mb, "a", 1);
  size_t size;
  uint8_t *bytes = mb_pack(mb, &size);
  mb_free(mb);
  q8rt_model *m = NULL;
  q8rt_session *s = NULL;
  q8rt_error err = {Q8RT_OK, ""};
  int rc = q8rt_model_load_memory(bytes, size, NULL, &m, &err) != Q8RT_OK || q8rt_session_create(m, NULL, &s, &err);
  free(bytes);
  float x[240];
  for (int i = 0; i < 240; i++) x[i] = (float)(i % 17) - 8.0f;
  const void *y = NULL;
  size_t ny = 0;
  if (!rc)
    rc = q8rt_session_set_input(s, 0, dims, 4, x, sizeof(x), &err) || q8rt_session_run(s, &err) ||
         q8rt_session_get_output(s, 0, NULL, &y, &ny, &err) || ny != sizeof(x);
  if (rc) fprintf(stderr, "  alias model %d: %s\n", variant, err.message);
  if (!rc) {
    memcpy(out, y, sizeof(x));
    *a_in = *r_in = 0;
    const plan *p = &m->plan;
    for (int v = 0; v < p->n_values; v++) {
      if (strcmp(p->values[v].name, "a") == 0) *a_in = s->in_place[v] >= 0;
      if (strcmp(p->values[v].name, "r") == 0) *r_in = s->in_place[v] >= 0;
    }
  }
  q8rt_session_free(s);
  q8rt_model_free(m);
  return rc;
}

Q8RT_TEST(reshape_copy_onto_itself) {
  for (int variant = 0; variant < 3; variant++) {
    float y[240];
    int a_in = -1, r_in = -1;
    CHECK(run_alias(variant, &a_in, &r_in, y) == 0);
    CHECK(a_in == (variant != 1));
    CHECK(r_in == 0);
    for (int i = 0; i < 240; i++) {
      const float want = (float)(i % 17) - 8.0f;
      CHECK(y[i] == (want > 0.0f ? want : 0.0f));
    }
  }
  return 0;
}
