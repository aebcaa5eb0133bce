/* Memory accounting and caps (q8rt.h, "Memory accounting"): what a model and a session hold goes
 * through the caller's allocator — XNNPACK's operators included — and matches what
 * q8rt_model_memory / q8rt_session_memory report; max_memory_bytes fails cleanly, naming the
 * limit, leaking nothing. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "common/common.h"
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

/* An allocator that overwrites what it frees: whatever still read the freed IR would read 0xA5
 * bytes (and ASan, in make test-san, reports the read itself). */
static void m_free_poison(void *ud, void *ptr, size_t size) {
  memset(ptr, 0xA5, size);
  m_free(ud, ptr, size);
}

/* The IR is freed once the plan is built (issue 8): names, shapes, metadata, the explain text,
 * bind-time shape inference (symbolic batch, a float Conv resolving its window attributes) and
 * the constants a step reads all come from the model's own copies; a large initializer no step
 * reads is not kept at all. Fails on a build that keeps the IR (the 1 MiB initializer stays) or
 * that reads it after load (poisoned names, dims and data). */
Q8RT_TEST(model_ir_freed_after_load) {
  mem_count c = {0, 0};
  const q8rt_allocator a = {m_alloc, m_free_poison, &c};
  enum { K = 2048, UNUSED = 1 << 18 };
  float *bias = malloc(K * sizeof(float)), *unused = calloc(UNUSED, sizeof(float));
  CHECK(bias != NULL && unused != NULL);
  for (int i = 0; i < K; i++) bias[i] = 0.5f * (float)i - 300.0f;
  const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  mb_model *mb = mb_create(13);
  const int64_t xd[2] = {-1, K}, zd[4] = {-1, 1, 8, 8}, bd[1] = {K}, wd[4] = {1, 1, 3, 3}, ud[1] = {UNUSED};
  mb_input(mb, "x", 1, 2, xd);
  mb_input(mb, "z", 1, 4, zd);
  mb_output(mb, "y", 1);
  mb_output(mb, "c", 1);
  mb_initializer(mb, "bias", 1, 1, bd, bias, K * sizeof(float));
  mb_initializer(mb, "w", 1, 4, wd, ones, sizeof(ones));
  mb_initializer(mb, "unused", 1, 1, ud, unused, UNUSED * sizeof(float));
  mb_node(mb, "Add", "add_bias", (const char *const[]){"x", "bias", NULL}, (const char *const[]){"y", NULL});
  mb_node(mb, "Conv", "conv_ones", (const char *const[]){"z", "w", NULL}, (const char *const[]){"c", NULL});
  const int64_t pads[4] = {1, 1, 1, 1}, ks[2] = {3, 3};
  mb_attr_ints(mb, "pads", 4, pads);
  mb_attr_ints(mb, "kernel_shape", 2, ks);
  mb_metadata(mb, "author", "irfree", 6);
  size_t size;
  uint8_t *bytes = mb_pack(mb, &size);
  mb_free(mb);
  free(unused);
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.allocator = &a;
  q8rt_model *m = NULL;
  CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
  free(bytes);
  printf("  model bytes %zu (the unused initializer alone is %d)\n", q8rt_model_memory(m), UNUSED * 4);
  CHECK((long)q8rt_model_memory(m) == atomic_load(&c.live));
  CHECK(q8rt_model_memory(m) < (size_t)UNUSED * 4 / 2);

  q8rt_tensor_info info;
  CHECK(q8rt_model_input_count(m) == 2 && q8rt_model_output_count(m) == 2);
  CHECK_OK(q8rt_model_input_info(m, 1, &info, NULL));
  CHECK(strcmp(info.name, "z") == 0 && info.dtype == Q8RT_DTYPE_FLOAT32 && info.rank == 4);
  CHECK(info.shape[0] == -1 && info.shape[1] == 1 && info.shape[2] == 8 && info.shape[3] == 8);
  CHECK_OK(q8rt_model_output_info(m, 0, &info, NULL));
  CHECK(strcmp(info.name, "y") == 0 && info.rank == 2 && info.shape[1] == K);
  CHECK(q8rt_model_find_input(m, "x") == 0 && q8rt_model_find_output(m, "c") == 1);
  size_t vlen = 0;
  const char *author = q8rt_model_metadata(m, "author", &vlen);
  CHECK(author != NULL && vlen == 6 && memcmp(author, "irfree", 6) == 0);
  char explain[4096];
  q8rt_model_explain(m, explain, sizeof(explain));
  CHECK(strstr(explain, "add_bias") != NULL && strstr(explain, "conv_ones") != NULL);

  /* twice, at two batch sizes: shapes are inferred again at each bind */
  for (int64_t n = 3; n >= 1; n -= 2) {
    q8rt_session *s = NULL;
    CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
    float *x = malloc((size_t)n * K * sizeof(float)), *z = malloc((size_t)n * 64 * sizeof(float));
    CHECK(x != NULL && z != NULL);
    for (int64_t i = 0; i < n * K; i++) x[i] = (float)(i % 17) - 8.0f;
    for (int64_t i = 0; i < n * 64; i++) z[i] = 1.0f;
    const int64_t xs[2] = {n, K}, zs[4] = {n, 1, 8, 8};
    CHECK_OK(q8rt_session_set_input_shape(s, 0, xs, 2, NULL));
    CHECK_OK(q8rt_session_set_input_shape(s, 1, zs, 4, NULL));
    CHECK_OK(q8rt_session_set_input(s, 0, xs, 2, x, (size_t)n * K * sizeof(float), NULL));
    CHECK_OK(q8rt_session_set_input(s, 1, zs, 4, z, (size_t)n * 64 * sizeof(float), NULL));
    CHECK_OK(q8rt_session_run(s, NULL));
    const void *out;
    size_t nbytes;
    CHECK_OK(q8rt_session_get_output(s, 0, &info, &out, &nbytes, NULL));
    CHECK(strcmp(info.name, "y") == 0 && info.shape[0] == n && nbytes == (size_t)n * K * sizeof(float));
    int same = 1;
    for (int64_t i = 0; i < n * K; i++) same &= ((const float *)out)[i] == x[i] + bias[i % K];
    CHECK(same);
    CHECK_OK(q8rt_session_get_output(s, 1, &info, &out, &nbytes, NULL));
    CHECK(strcmp(info.name, "c") == 0 && info.rank == 4 && info.shape[0] == n && info.shape[2] == 8);
    for (int64_t b = 0; b < n; b++) {
      for (int h = 0; h < 8; h++) {
        for (int w = 0; w < 8; w++) {
          const float taps = (float)((h == 0 || h == 7 ? 2 : 3) * (w == 0 || w == 7 ? 2 : 3));
          same &= ((const float *)out)[b * 64 + h * 8 + w] == taps;
        }
      }
    }
    CHECK(same);
    free(x);
    free(z);
    q8rt_session_free(s);
  }
  free(bias);
  q8rt_model_free(m);
  CHECK(atomic_load(&c.live) == 0);
  return 0;
}

/* The LSTM/MatMul/Gemm model of packed_originals_released: W [1][4H][I], R [1][4H][H], B [1][8H]
 * (LSTM), M [H][N] (MatMul of Y_h), G [K][N] (Gemm of input a); with `shared`, W, R, M and G are
 * graph outputs as well (then the model must keep them). *originals: their bytes. */
enum { PI = 64, PH = 128, PS = 3, PN = 256, PK = 192 };
static uint8_t *packed_model(int shared, size_t *size, size_t *originals) {
  const size_t nw = 4 * PH * PI, nr = 4 * PH * PH, nb = 8 * PH, nm = PH * PN, ng = PK * PN;
  float *w = malloc((nw + nr + nb + nm + ng) * sizeof(float));
  if (w == NULL) return NULL;
  for (size_t i = 0; i < nw + nr + nb + nm + ng; i++) w[i] = (float)((int)(i * 2654435761u % 2001) - 1000) / 8000.0f;
  mb_model *mb = mb_create(13);
  const int64_t xd[3] = {PS, 1, PI}, ad[2] = {2, PK}, wd[3] = {1, 4 * PH, PI}, rd[3] = {1, 4 * PH, PH},
                bd[2] = {1, 8 * PH}, md[2] = {PH, PN}, gd[2] = {PK, PN};
  mb_input(mb, "x", 1, 3, xd);
  mb_input(mb, "a", 1, 2, ad);
  mb_output(mb, "y", 1);
  mb_output(mb, "m", 1);
  mb_output(mb, "g", 1);
  if (shared) {
    mb_output(mb, "W", 1);
    mb_output(mb, "R", 1);
    mb_output(mb, "M", 1);
    mb_output(mb, "G", 1);
  }
  mb_initializer(mb, "W", 1, 3, wd, w, nw * sizeof(float));
  mb_initializer(mb, "R", 1, 3, rd, w + nw, nr * sizeof(float));
  mb_initializer(mb, "B", 1, 2, bd, w + nw + nr, nb * sizeof(float));
  mb_initializer(mb, "M", 1, 2, md, w + nw + nr + nb, nm * sizeof(float));
  mb_initializer(mb, "G", 1, 2, gd, w + nw + nr + nb + nm, ng * sizeof(float));
  mb_node(mb, "LSTM", "lstm", (const char *const[]){"x", "W", "R", "B", NULL}, (const char *const[]){"y", "yh", NULL});
  mb_attr_int(mb, "hidden_size", PH);
  mb_node(mb, "MatMul", "matmul", (const char *const[]){"yh", "M", NULL}, (const char *const[]){"m", NULL});
  mb_node(mb, "Gemm", "gemm", (const char *const[]){"a", "G", NULL}, (const char *const[]){"g", NULL});
  uint8_t *bytes = mb_pack(mb, size);
  mb_free(mb);
  free(w);
  *originals = (nw + nr + nm + ng) * sizeof(float);
  return bytes;
}

/* Runs the model of packed_model on fixed inputs; returns a malloc'd copy of outputs y, m and g
 * (in that order, *nbytes in all), NULL on failure. */
static uint8_t *packed_run(const q8rt_model *m, int threads, size_t *nbytes) {
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.threads = threads;
  q8rt_session *s = NULL;
  if (q8rt_session_create(m, &so, &s, NULL) != Q8RT_OK) return NULL;
  float x[PS * PI], a[2 * PK];
  for (int i = 0; i < PS * PI; i++) x[i] = (float)(i % 13) / 6.0f - 1.0f;
  for (int i = 0; i < 2 * PK; i++) a[i] = (float)(i % 7) / 3.0f - 1.0f;
  const int64_t xs[3] = {PS, 1, PI}, as[2] = {2, PK};
  uint8_t *res = NULL;
  *nbytes = 0;
  if (q8rt_session_set_input(s, 0, xs, 3, x, sizeof(x), NULL) == Q8RT_OK &&
      q8rt_session_set_input(s, 1, as, 2, a, sizeof(a), NULL) == Q8RT_OK && q8rt_session_run(s, NULL) == Q8RT_OK) {
    res = malloc((size_t)(PS * PH + PN + 2 * PN) * sizeof(float));
    for (size_t k = 0; res != NULL && k < 3; k++) {
      q8rt_tensor_info info;
      const void *out;
      size_t n;
      if (q8rt_session_get_output(s, k, &info, &out, &n, NULL) != Q8RT_OK) {
        free(res);
        res = NULL;
        break;
      }
      memcpy(res + *nbytes, out, n);
      *nbytes += n;
    }
  }
  q8rt_session_free(s);
  return res;
}

/* An original no step reads any more is not kept beside its packed copy: the LSTM's W and R (packed
 * for the f32-gemm kernels, or transposed on the reference backend) and the B of a MatMul and a
 * Gemm (packed) are freed at load, so the model holds about one copy of each weight, not two; a
 * model that also shows them as graph outputs keeps them (at least W's and R's bytes more) and gives
 * the same bytes, at 1 and 2 threads. Fails when the originals stay (the model then holds twice the
 * weights) or when a run reads a freed original (poisoned on free; its pointer is NULL). */
Q8RT_TEST(packed_originals_released) {
  const q8rt_backend backends[2] = {Q8RT_BACKEND_AUTO, Q8RT_BACKEND_REFERENCE};
  for (int bi = 0; bi < 2; bi++) {
    size_t bytes_of[2] = {0, 0}, originals = 0, n_ref = 0;
    uint8_t *ref = NULL;
    for (int shared = 0; shared < 2; shared++) {
      mem_count c = {0, 0};
      const q8rt_allocator a = {m_alloc, m_free_poison, &c};
      size_t size;
      uint8_t *bytes = packed_model(shared, &size, &originals);
      CHECK(bytes != NULL);
      q8rt_model_options mo;
      q8rt_model_options_init(&mo);
      mo.allocator = &a;
      mo.backend = backends[bi];
      q8rt_model *m = NULL;
      CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
      free(bytes);
      bytes_of[shared] = q8rt_model_memory(m);
      printf("  backend %d %s: model bytes %zu (file %zu, weights %zu)\n", (int)backends[bi],
             shared ? "shared" : "plain", bytes_of[shared], size, originals);
      for (int threads = 1; threads <= 2; threads++) {
        size_t n = 0;
        uint8_t *out = packed_run(m, threads, &n);
        CHECK(out != NULL);
        if (ref == NULL) {
          ref = out;
          n_ref = n;
        } else {
          CHECK(n == n_ref && memcmp(out, ref, n) == 0);
          free(out);
        }
      }
      q8rt_model_free(m);
      CHECK(atomic_load(&c.live) == 0);
    }
    free(ref);
    /* one copy of each weight (packed or the original) and a little more, not two */
    CHECK(bytes_of[0] < originals + originals / 2);
    /* W and R at least (the reference backend keeps MatMul's and Gemm's B as they are: no copy) */
    CHECK(bytes_of[1] >= bytes_of[0] + (size_t)(4 * PH * (PI + PH)) * sizeof(float));
  }
  return 0;
}

/* One run of m at `threads` with input 0 of `shape` (rank dims) filled with i * 37 % 256: a copy of
 * output 0 (malloc'd, its size in *nbytes), or NULL when a call fails. */
static uint8_t *u8_pattern_run(const q8rt_model *m, int threads, const int64_t *shape, int rank, size_t *nbytes) {
  size_t count = 1;
  for (int d = 0; d < rank; d++) count *= (size_t)shape[d];
  uint8_t *x = malloc(count);
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.threads = threads;
  q8rt_session *s = NULL;
  uint8_t *res = NULL;
  *nbytes = 0;
  if (x != NULL && q8rt_session_create(m, &so, &s, NULL) == Q8RT_OK) {
    for (size_t i = 0; i < count; i++) x[i] = (uint8_t)(i * 37 % 256);
    q8rt_tensor_info info;
    const void *out;
    size_t n;
    if (q8rt_session_set_input(s, 0, shape, rank, x, count, NULL) == Q8RT_OK && q8rt_session_run(s, NULL) == Q8RT_OK &&
        q8rt_session_get_output(s, 0, &info, &out, &n, NULL) == Q8RT_OK && (res = malloc(n)) != NULL) {
      memcpy(res, out, n);
      *nbytes = n;
    }
  }
  q8rt_session_free(s);
  free(x);
  return res;
}

/* A QGemm (com.microsoft) of a uint8 A [QM, QK] and a constant int8 B [QK, QN]; with `shared`, B is
 * a graph output as well. */
enum { QM = 5, QK = 256, QN = 1024 };
static uint8_t *qgemm_model(int shared, int qlmm, size_t *size) {
  int8_t *b = malloc((size_t)QK * QN);
  if (b == NULL) return NULL;
  for (size_t i = 0; i < (size_t)QK * QN; i++) b[i] = (int8_t)((int)(i * 2654435761u % 255) - 127);
  const float as = 0.02f, bs = 0.01f, ys = 0.5f;
  const uint8_t az = 128, yz = 100;
  const int8_t bz = 0;
  mb_model *mb = mb_create(13);
  const int64_t ad[2] = {QM, QK}, bd[2] = {QK, QN}, scalar[1] = {0};
  mb_input(mb, "a", 2, 2, ad);
  mb_output(mb, "y", 2);
  if (shared) mb_output(mb, "B", 3);
  mb_initializer(mb, "as", 1, 0, scalar, &as, sizeof(as));
  mb_initializer(mb, "az", 2, 0, scalar, &az, sizeof(az));
  mb_initializer(mb, "B", 3, 2, bd, b, (size_t)QK * QN);
  mb_initializer(mb, "bs", 1, 0, scalar, &bs, sizeof(bs));
  mb_initializer(mb, "bz", 3, 0, scalar, &bz, sizeof(bz));
  mb_initializer(mb, "ys", 1, 0, scalar, &ys, sizeof(ys));
  mb_initializer(mb, "yz", 2, 0, scalar, &yz, sizeof(yz));
  if (qlmm) {
    mb_node(mb, "QLinearMatMul", "qlmm", (const char *const[]){"a", "as", "az", "B", "bs", "bz", "ys", "yz", NULL},
            (const char *const[]){"y", NULL});
  } else {
    mb_node(mb, "QGemm", "qgemm", (const char *const[]){"a", "as", "az", "B", "bs", "bz", "", "ys", "yz", NULL},
            (const char *const[]){"y", NULL});
    mb_domain(mb, "com.microsoft");
  }
  uint8_t *bytes = mb_pack(mb, size);
  mb_free(mb);
  free(b);
  return bytes;
}

/* A QGemm on the packed route (every bind takes it: A is 2-D), and a QLinearMatMul whose A is known
 * to be 2-D, do not keep B beside the packing: the model that also outputs B holds at least B's
 * bytes more, and both give the same bytes at 1 and 2 threads. Fails when B stays (equal model
 * bytes) or when a run reads it. */
Q8RT_TEST(qgemm_packed_b_released) {
  for (int qlmm = 0; qlmm < 2; qlmm++) {
    size_t bytes_of[2] = {0, 0};
    uint8_t ref[QM * QN];
    int have_ref = 0;
    for (int shared = 0; shared < 2; shared++) {
      mem_count c = {0, 0};
      const q8rt_allocator a = {m_alloc, m_free_poison, &c};
      size_t size;
      uint8_t *bytes = qgemm_model(shared, qlmm, &size);
      CHECK(bytes != NULL);
      q8rt_model_options mo;
      q8rt_model_options_init(&mo);
      mo.allocator = &a;
      q8rt_model *m = NULL;
      CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
      free(bytes);
      bytes_of[shared] = q8rt_model_memory(m);
      printf("  %s %s: model bytes %zu (file %zu, B %d)\n", qlmm ? "QLinearMatMul" : "QGemm",
             shared ? "shared" : "plain", bytes_of[shared], size, QK * QN);
      for (int threads = 1; threads <= 2; threads++) {
        const int64_t xs[2] = {QM, QK};
        size_t n;
        uint8_t *out = u8_pattern_run(m, threads, xs, 2, &n);
        CHECK(out != NULL);
        CHECK(n == sizeof(ref));
        if (!have_ref) memcpy(ref, out, n);
        CHECK(memcmp(ref, out, n) == 0);
        have_ref = 1;
        free(out);
      }
      q8rt_model_free(m);
      CHECK(atomic_load(&c.live) == 0);
    }
    CHECK(bytes_of[1] >= bytes_of[0] + (size_t)QK * QN);
  }
  return 0;
}

/* MatMulInteger of a uint8 A (rank 3 [2, 3, QK], or rank 1 [QK] with `vec`) and a constant int8 B
 * [QK, QN] to int32; with `shared`, B is a graph output as well. */
static uint8_t *mmi_model(int shared, int vec, size_t *size) {
  int8_t *b = malloc((size_t)QK * QN);
  if (b == NULL) return NULL;
  for (size_t i = 0; i < (size_t)QK * QN; i++) b[i] = (int8_t)((int)(i * 2246822519u % 255) - 127);
  mb_model *mb = mb_create(13);
  const int64_t ad[3] = {2, 3, QK}, vd[1] = {QK}, bd[2] = {QK, QN};
  if (vec) {
    mb_input(mb, "a", 2, 1, vd);
  } else {
    mb_input(mb, "a", 2, 3, ad);
  }
  mb_output(mb, "y", 6);
  if (shared) mb_output(mb, "B", 3);
  mb_initializer(mb, "B", 3, 2, bd, b, (size_t)QK * QN);
  mb_node(mb, "MatMulInteger", "mmi", (const char *const[]){"a", "B", NULL}, (const char *const[]){"y", NULL});
  uint8_t *bytes = mb_pack(mb, size);
  mb_free(mb);
  free(b);
  return bytes;
}

/* MatMulInteger with a constant B packed for the int32 GEMM kernels: with A of rank >= 2 every
 * bind takes the packed route, so B is not kept (the model that also outputs B holds at least B's
 * bytes more); with A of rank 1 the scalar loop reads B, so B stays (equal model bytes). Same
 * bytes in both, at 1 and 2 threads. Fails when B stays for the rank-3 A, or when a run reads a
 * freed B. */
Q8RT_TEST(matmul_integer_packed_b_released) {
  for (int vec = 0; vec < 2; vec++) {
    size_t bytes_of[2] = {0, 0};
    const size_t rows = vec ? 1 : 6;
    int32_t *ref = malloc(rows * QN * sizeof(int32_t));
    CHECK(ref != NULL);
    int have_ref = 0;
    for (int shared = 0; shared < 2; shared++) {
      mem_count c = {0, 0};
      const q8rt_allocator a = {m_alloc, m_free_poison, &c};
      size_t size;
      uint8_t *bytes = mmi_model(shared, vec, &size);
      CHECK(bytes != NULL);
      q8rt_model_options mo;
      q8rt_model_options_init(&mo);
      mo.allocator = &a;
      q8rt_model *m = NULL;
      CHECK_OK(q8rt_model_load_memory(bytes, size, &mo, &m, NULL));
      free(bytes);
      bytes_of[shared] = q8rt_model_memory(m);
      printf("  A of rank %d, %s: model bytes %zu (B %d)\n", vec ? 1 : 3, shared ? "shared" : "plain", bytes_of[shared],
             QK * QN);
      for (int threads = 1; threads <= 2; threads++) {
        const int64_t xs[3] = {2, 3, QK}, vs[1] = {QK};
        size_t n;
        uint8_t *out = u8_pattern_run(m, threads, vec ? vs : xs, vec ? 1 : 3, &n);
        CHECK(out != NULL);
        CHECK(n == rows * QN * sizeof(int32_t));
        if (!have_ref) memcpy(ref, out, n);
        CHECK(memcmp(ref, out, n) == 0);
        have_ref = 1;
        free(out);
      }
      q8rt_model_free(m);
      CHECK(atomic_load(&c.live) == 0);
    }
    free(ref);
    if (vec) {
      CHECK(bytes_of[1] < bytes_of[0] + (size_t)QK * QN); /* kept in both */
    } else {
      CHECK(bytes_of[1] >= bytes_of[0] + (size_t)QK * QN);
    }
  }
  return 0;
}

#if defined(__linux__)
/* 1 when the mapping that holds p carries VmFlags "hg" (advised for transparent huge pages), 0
 * when not, -1 when /proc/self/smaps cannot tell (absent, or no mapping holds p). */
static int smaps_advised(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (f == NULL) return -1;
  char line[512];
  int inside = 0, advised = -1;
  while (fgets(line, sizeof(line), f) != NULL) {
    unsigned long lo, hi;
    char dash;
    if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-') {
      inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      advised = strstr(line, " hg") != NULL;
    }
  }
  fclose(f);
  return advised;
}
#endif

/* The default allocator: blocks of 2 MiB and more start on a 2 MiB boundary and are advised for
 * transparent huge pages (smaps VmFlags "hg" on the mapping that holds the block); smaller ones
 * keep the alignment asked for. The advice is checked only where it can be seen: a mapping advised
 * here directly shows "hg" (not under qemu-user, whose madvise ignores the advice and whose smaps
 * has no "hg"; not on a kernel without transparent huge pages). */
Q8RT_TEST(default_allocator_advises_huge_pages) {
#if defined(__linux__)
  const q8rt_allocator *a = q8rt_default_allocator();
  const size_t big = (size_t)5 << 20, huge = (size_t)2 << 20;
  int visible = 0;
#ifdef MADV_HUGEPAGE
  void *probe = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe != MAP_FAILED) {
    visible = madvise(probe, 2 * huge, MADV_HUGEPAGE) == 0 && smaps_advised(probe) == 1;
    munmap(probe, 2 * huge);
  }
#endif
  uint8_t *p = a->alloc(a->user_data, big, 64);
  CHECK(p != NULL);
  CHECK(((uintptr_t)p & (huge - 1)) == 0);
  memset(p, 1, big);
  const int advised = smaps_advised(p);
  a->free(a->user_data, p, big);
  if (visible) {
    CHECK(advised == 1);
  } else {
    printf("  (huge-page advice not visible here: alignment checked only)\n");
  }
  void *q = a->alloc(a->user_data, huge - 4096, 64);
  CHECK(q != NULL);
  CHECK(((uintptr_t)q & 63) == 0);
  a->free(a->user_data, q, huge - 4096);
#endif
  return 0;
}

/* A Loop (M = 2) whose body Expands its carried [1] float to [2^18, 1] (1 MiB) and takes the
 * maximum back, with a scan output of it: the body's arena is the large one. Written by
 * onnx.helper (opset 13); ORT gives y = x, s = [x, x]. */
static const uint8_t loop_expand_model[] = {
    0x08, 0x07, 0x3a, 0xab, 0x03, 0x0a, 0xdd, 0x02, 0x0a, 0x01, 0x4d, 0x0a, 0x00, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79,
    0x12, 0x01, 0x73, 0x1a, 0x04, 0x6c, 0x6f, 0x6f, 0x70, 0x22, 0x04, 0x4c, 0x6f, 0x6f, 0x70, 0x2a, 0xc0, 0x02, 0x0a,
    0x04, 0x62, 0x6f, 0x64, 0x79, 0x32, 0xb4, 0x02, 0x0a, 0x1e, 0x0a, 0x04, 0x78, 0x5f, 0x69, 0x6e, 0x0a, 0x03, 0x62,
    0x69, 0x67, 0x12, 0x01, 0x65, 0x1a, 0x06, 0x65, 0x78, 0x70, 0x61, 0x6e, 0x64, 0x22, 0x06, 0x45, 0x78, 0x70, 0x61,
    0x6e, 0x64, 0x0a, 0x38, 0x0a, 0x01, 0x65, 0x12, 0x05, 0x78, 0x5f, 0x6f, 0x75, 0x74, 0x1a, 0x03, 0x6d, 0x61, 0x78,
    0x22, 0x09, 0x52, 0x65, 0x64, 0x75, 0x63, 0x65, 0x4d, 0x61, 0x78, 0x2a, 0x0b, 0x0a, 0x04, 0x61, 0x78, 0x65, 0x73,
    0x40, 0x00, 0xa0, 0x01, 0x07, 0x2a, 0x0f, 0x0a, 0x08, 0x6b, 0x65, 0x65, 0x70, 0x64, 0x69, 0x6d, 0x73, 0x18, 0x00,
    0xa0, 0x01, 0x02, 0x0a, 0x1e, 0x0a, 0x05, 0x78, 0x5f, 0x6f, 0x75, 0x74, 0x12, 0x05, 0x73, 0x5f, 0x6f, 0x75, 0x74,
    0x1a, 0x04, 0x73, 0x63, 0x61, 0x6e, 0x22, 0x08, 0x49, 0x64, 0x65, 0x6e, 0x74, 0x69, 0x74, 0x79, 0x0a, 0x23, 0x0a,
    0x07, 0x63, 0x6f, 0x6e, 0x64, 0x5f, 0x69, 0x6e, 0x12, 0x08, 0x63, 0x6f, 0x6e, 0x64, 0x5f, 0x6f, 0x75, 0x74, 0x1a,
    0x04, 0x63, 0x6f, 0x6e, 0x64, 0x22, 0x08, 0x49, 0x64, 0x65, 0x6e, 0x74, 0x69, 0x74, 0x79, 0x12, 0x04, 0x62, 0x6f,
    0x64, 0x79, 0x2a, 0x1b, 0x08, 0x02, 0x10, 0x07, 0x42, 0x03, 0x62, 0x69, 0x67, 0x4a, 0x10, 0x00, 0x00, 0x04, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5a, 0x0b, 0x0a, 0x01, 0x69, 0x12, 0x06,
    0x0a, 0x04, 0x08, 0x07, 0x12, 0x00, 0x5a, 0x11, 0x0a, 0x07, 0x63, 0x6f, 0x6e, 0x64, 0x5f, 0x69, 0x6e, 0x12, 0x06,
    0x0a, 0x04, 0x08, 0x09, 0x12, 0x00, 0x5a, 0x12, 0x0a, 0x04, 0x78, 0x5f, 0x69, 0x6e, 0x12, 0x0a, 0x0a, 0x08, 0x08,
    0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x62, 0x12, 0x0a, 0x08, 0x63, 0x6f, 0x6e, 0x64, 0x5f, 0x6f, 0x75, 0x74,
    0x12, 0x06, 0x0a, 0x04, 0x08, 0x09, 0x12, 0x00, 0x62, 0x13, 0x0a, 0x05, 0x78, 0x5f, 0x6f, 0x75, 0x74, 0x12, 0x0a,
    0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x62, 0x13, 0x0a, 0x05, 0x73, 0x5f, 0x6f, 0x75, 0x74,
    0x12, 0x0a, 0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0xa0, 0x01, 0x05, 0x12, 0x01, 0x67, 0x2a,
    0x0f, 0x10, 0x07, 0x42, 0x01, 0x4d, 0x4a, 0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5a, 0x0f, 0x0a,
    0x01, 0x78, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x62, 0x0f, 0x0a, 0x01, 0x79,
    0x12, 0x0a, 0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x62, 0x13, 0x0a, 0x01, 0x73, 0x12, 0x0e,
    0x0a, 0x0c, 0x08, 0x01, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10,
    0x0d,
};

typedef struct peak_count {
  size_t live, peak;
} peak_count;

static void *p_alloc(void *ud, size_t size, size_t alignment) {
  peak_count *c = ud;
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size ? size : 1) != 0) return NULL;
  c->live += size;
  if (c->live > c->peak) c->peak = c->live;
  return p;
}

static void p_free(void *ud, void *ptr, size_t size) {
  peak_count *c = ud;
  c->live -= size;
  free(ptr);
}

/* A Loop's body sessions: every byte they take from the caller's allocator goes back with the
 * sizes it was taken with, and the session's max_arena_bytes holds for the body's arena too —
 * also when the Loop looks at its body's shapes at bind (scan outputs), which takes no arena. */
Q8RT_TEST(memory_loop_body_sessions) {
  peak_count c = {0, 0};
  const q8rt_allocator a = {p_alloc, p_free, &c};
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.allocator = &a;
  q8rt_model *m = NULL;
  CHECK_OK(q8rt_model_load_memory(loop_expand_model, sizeof(loop_expand_model), &mo, &m, NULL));
  const size_t model_live = c.live;
  const float x = 0.5f;
  /* no cap: runs; the session's account is what the allocator lent it */
  q8rt_session *s = NULL;
  CHECK_OK(q8rt_session_create(m, NULL, &s, NULL));
  CHECK_OK(q8rt_session_set_input(s, 0, (const int64_t[]){1}, 1, &x, sizeof(x), NULL));
  CHECK_OK(q8rt_session_run(s, NULL));
  const void *out;
  size_t n;
  CHECK_OK(q8rt_session_get_output(s, 1, NULL, &out, &n, NULL));
  CHECK(n == 2 * sizeof(float) && ((const float *)out)[0] == x && ((const float *)out)[1] == x);
  CHECK(q8rt_session_memory(s) == c.live - model_live);
  q8rt_session_free(s);
  CHECK(c.live == model_live);
  /* a 256 KiB arena cap: the 1 MiB body fails the run with the limit named, and binding took no
   * more than the cap */
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.max_arena_bytes = 256 << 10;
  c.peak = c.live;
  CHECK_OK(q8rt_session_create(m, &so, &s, NULL));
  CHECK_OK(q8rt_session_set_input(s, 0, (const int64_t[]){1}, 1, &x, sizeof(x), NULL));
  CHECK(c.peak - model_live < (size_t)(512 << 10));
  q8rt_error e;
  memset(&e, 0, sizeof(e));
  CHECK(q8rt_session_run(s, &e) == Q8RT_ERROR_OUT_OF_MEMORY);
  CHECK(has_words(&e, "loop", "262144"));
  CHECK(c.peak - model_live < (size_t)(512 << 10));
  q8rt_session_free(s);
  q8rt_model_free(m);
  CHECK(c.live == 0);
  return 0;
}
