/* Memory accounting and caps (q8rt.h, "Memory accounting"): what a model and a session hold goes
 * through the caller's allocator — XNNPACK's operators included — and matches what
 * q8rt_model_memory / q8rt_session_memory report; max_memory_bytes fails cleanly, naming the
 * limit, leaking nothing. */
#include <stdatomic.h>
#include <stdlib.h>

#include "model_builder.h"
#include "q8rt.h"
#include "test.h"

typedef struct mem_count {
  atomic_long live, allocs;
} mem_count;

static void *m_alloc(void *ud, size_t size, size_t alignment) {
  mem_count *c = ud;
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size ? size : 1) != 0) return NULL;
  atomic_fetch_add(&c->live, (long)size);
  atomic_fetch_add(&c->allocs, 1);
  return p;
}

static void m_free(void *ud, void *ptr, size_t size) {
  mem_count *c = ud;
  atomic_fetch_sub(&c->live, (long)size);
  free(ptr);
}

enum { MC = 40, MH = 9, MW = 7, MLAYERS = 3 };

/* Session bytes for the conv chain on `backend` (static shapes: bound at create). -1: backend
 * not available here. */
static long session_bytes(q8rt_backend backend, mem_count *c, const q8rt_allocator *a, q8rt_session **keep,
                          q8rt_model **keep_model) {
  size_t size;
  uint8_t *bytes = mb_conv_chain(MLAYERS, 1, MC, MH, MW, &size);
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.backend = backend;
  mo.allocator = a;
  q8rt_model *m = NULL;
  q8rt_status st = q8rt_model_load_memory(bytes, size, &mo, &m, NULL);
  free(bytes);
  if (st != Q8RT_OK) return -1;
  /* the model: every byte it holds is the allocator's, and counted */
  if ((long)q8rt_model_memory(m) != atomic_load(&c->live)) {
    fprintf(stderr, "  model memory %zu, allocator live %ld\n", q8rt_model_memory(m), atomic_load(&c->live));
    q8rt_model_free(m);
    return -2;
  }
  const long model_live = atomic_load(&c->live);
  q8rt_session *s = NULL;
  if (q8rt_session_create(m, NULL, &s, NULL) != Q8RT_OK) return -2;
  const long sess = atomic_load(&c->live) - model_live;
  if ((long)q8rt_session_memory(s) != sess) {
    fprintf(stderr, "  session memory %zu, allocator live %ld\n", q8rt_session_memory(s), sess);
    return -2;
  }
  *keep = s;
  *keep_model = m;
  return sess;
}

Q8RT_TEST(memory_xnnpack_through_allocator) {
  mem_count c = {0, 0};
  const q8rt_allocator a = {m_alloc, m_free, &c};
  q8rt_session *s_ref = NULL, *s_xnn = NULL;
  q8rt_model *m_ref = NULL, *m_xnn = NULL;
  const long ref = session_bytes(Q8RT_BACKEND_REFERENCE, &c, &a, &s_ref, &m_ref);
  CHECK(ref > 0);
  q8rt_session_free(s_ref);
  q8rt_model_free(m_ref);
  CHECK(atomic_load(&c.live) == 0);
  const long xnn = session_bytes(Q8RT_BACKEND_XNNPACK, &c, &a, &s_xnn, &m_xnn);
  CHECK(xnn != -2);
  if (xnn == -1) {
    printf("  (XNNPACK backend not available here)\n");
    return 0;
  }
  /* XNNPACK packs each layer's weights into its operator, made per session: those bytes must
   * have come through the caller's allocator */
  printf("  session bytes: reference %ld, xnnpack %ld\n", ref, xnn);
  CHECK(xnn >= ref + (long)MLAYERS * MC * MC * 9);
  CHECK(q8rt_unaccounted_bytes() == 0);
  q8rt_session_free(s_xnn);
  q8rt_model_free(m_xnn);
  CHECK(atomic_load(&c.live) == 0);
  return 0;
}

static int has_words(const q8rt_error *e, const char *w1, const char *w2) {
  if (strstr(e->message, w1) != NULL && strstr(e->message, w2) != NULL) return 1;
  fprintf(stderr, "  message lacks '%s'/'%s': %s\n", w1, w2, e->message);
  return 0;
}

Q8RT_TEST(memory_limit_model) {
  mem_count c = {0, 0};
  const q8rt_allocator a = {m_alloc, m_free, &c};
  size_t size;
  uint8_t *bytes = mb_conv_chain(MLAYERS, 1, MC, MH, MW, &size);
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.allocator = &a;
  q8rt_model *m = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  const size_t held = q8rt_model_memory(m);
  q8rt_model_free(m);
  /* below what the model holds: refused at whatever step runs out, with the limit named */
  const size_t limits[] = {1, 100, 4096, held / 2, held - 1};
  for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
    mo.max_memory_bytes = limits[i];
    q8rt_error e;
    memset(&e, 0, sizeof(e));
    CHECK(q8rt_model_load_memory(bytes, size, &mo, &m, &e) == Q8RT_ERROR_OUT_OF_MEMORY);
    CHECK(m == NULL && e.status == Q8RT_ERROR_OUT_OF_MEMORY);
    CHECK(has_words(&e, "memory limit", ""));
    char lim[32];
    snprintf(lim, sizeof(lim), "%zu", limits[i]);
    CHECK(has_words(&e, lim, "model"));
    CHECK(atomic_load(&c.live) == 0);
  }
  /* a generous one: loads */
  mo.max_memory_bytes = held * 8 + (1u << 20);
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  q8rt_model_free(m);
  free(bytes);
  CHECK(atomic_load(&c.live) == 0);
  return 0;
}

Q8RT_TEST(memory_limit_session) {
  mem_count c = {0, 0};
  const q8rt_allocator a = {m_alloc, m_free, &c};
  size_t size;
  uint8_t *bytes = mb_conv_chain(2, -1, 8, 16, 16, &size); /* symbolic batch */
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.allocator = &a;
  q8rt_model *m = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  free(bytes);
  const long model_live = atomic_load(&c.live);
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.max_memory_bytes = 16;
  q8rt_session *s = NULL;
  q8rt_error e;
  memset(&e, 0, sizeof(e));
  CHECK(q8rt_session_create(m, &so, &s, &e) == Q8RT_ERROR_OUT_OF_MEMORY && s == NULL);
  CHECK(has_words(&e, "memory limit", "16"));
  CHECK(atomic_load(&c.live) == model_live);
  /* 64 KiB: batch 1 fits (2 x 8x16x16 bytes of activations), batch 64 does not */
  so.max_memory_bytes = 64u << 10;
  CHECK_OK(q8rt_session_create(m, &so, &s, NULL));
  const int64_t big[4] = {64, 8, 16, 16}, small[4] = {1, 8, 16, 16};
  memset(&e, 0, sizeof(e));
  CHECK(q8rt_session_set_input_shape(s, 0, big, 4, &e) == Q8RT_ERROR_OUT_OF_MEMORY);
  CHECK(has_words(&e, "memory limit", "session"));
  CHECK(q8rt_session_memory(s) <= so.max_memory_bytes);
  /* the session still works with a shape that fits */
  CHECK_OK(q8rt_session_set_input_shape(s, 0, small, 4, NULL));
  void *buf;
  size_t n;
  CHECK_OK(q8rt_session_input_buffer(s, 0, &buf, &n, NULL));
  memset(buf, 7, n);
  CHECK_OK(q8rt_session_run(s, NULL));
  CHECK(q8rt_session_memory(s) <= so.max_memory_bytes);
  q8rt_session_free(s);
  CHECK(atomic_load(&c.live) == model_live);
  q8rt_model_free(m);
  CHECK(atomic_load(&c.live) == 0);
  return 0;
}
