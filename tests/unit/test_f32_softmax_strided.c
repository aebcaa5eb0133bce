/* f32-softmax-strided: the scalar twin against f32-softmax's scalar twin on each column copied out
 * (the strided kernel is that row, column by column), and every variant of f32-softmax-strided.inc
 * against the twin bit for bit: column counts around the vector widths, reduced lengths around the
 * 16 row lanes, strides equal to n and larger (the gaps must stay untouched), in place, ordinary
 * values and ones with NaN, ±inf, ±0, denormals and huge values (NaN columns). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "f32-softmax-strided/f32-softmax-strided.h"
#include "f32-softmax/f32-softmax.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_softmax_strided_ukernel_fn fn;
} g_fss_variants[] = {
#define Q8RT_F32_SOFTMAX_STRIDED_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-softmax-strided/f32-softmax-strided.inc"
#undef Q8RT_F32_SOFTMAX_STRIDED_UKERNEL
};
#define FSS_NV (sizeof(g_fss_variants) / sizeof(g_fss_variants[0]))

static uint32_t fss_rng = 0x3c6ef372u;

/* special = 0: ordinary values only (multiples of 2^-6 scaled by 2^-4..2^4); 1: test_f32_value */
static float fss_value(int special) {
  if (special) return test_f32_value(&fss_rng);
  const uint32_t r = test_xorshift32(&fss_rng);
  return ((float)(int32_t)(r % 2001) - 1000.0f) * (1.0f / 64.0f) * ldexpf(1.0f, (int)((r >> 12) % 9) - 4);
}

Q8RT_TEST(f32_softmax_strided_scalar_is_row_twin) {
  enum { D = 37, N = 11, STRIDE = 13 };
  float x[D * STRIDE], y[D * STRIDE], col[D], want[D];
  for (int special = 0; special < 2; special++) {
    for (size_t i = 0; i < D * STRIDE; i++) x[i] = fss_value(special);
    q8rt_f32_softmax_strided_ukernel__scalar(D, N, STRIDE, x, y);
    for (size_t j = 0; j < N; j++) {
      for (size_t k = 0; k < D; k++) col[k] = x[k * STRIDE + j];
      q8rt_f32_softmax_ukernel__scalar(D, col, want);
      CHECK(memcmp(&y[j], &want[0], 4) == 0);
      for (size_t k = 0; k < D; k++) CHECK(memcmp(&y[k * STRIDE + j], &want[k], 4) == 0);
    }
  }
  return 0;
}

Q8RT_TEST(f32_softmax_strided_variants_match_scalar) {
  int tested = 0;
  const size_t ds[] = {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47};
  const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47};
  enum { MAXE = 47 * (47 + 5) };
  float *x = malloc(MAXE * sizeof(float)), *y1 = malloc(MAXE * sizeof(float)), *y2 = malloc(MAXE * sizeof(float));
  CHECK(x != NULL && y1 != NULL && y2 != NULL);
  CHECK(g_fss_variants[FSS_NV - 1].fn == q8rt_f32_softmax_strided_ukernel__scalar);
  for (size_t v = 0; v + 1 < FSS_NV; v++) {
    if (!test_isa_supported(g_fss_variants[v].isa)) continue;
    tested++;
    for (int special = 0; special < 2; special++) {
      for (size_t id = 0; id < sizeof(ds) / sizeof(ds[0]); id++) {
        for (size_t in = 0; in < sizeof(ns) / sizeof(ns[0]); in++) {
          const size_t d = ds[id], n = ns[in];
          const size_t stride = n + (test_xorshift32(&fss_rng) % 2 ? 0 : 1 + test_xorshift32(&fss_rng) % 5);
          const size_t count = (d - 1) * stride + n;
          for (size_t i = 0; i < count; i++) x[i] = fss_value(special && test_xorshift32(&fss_rng) % 4 == 0);
          for (size_t i = 0; i < count; i++) y1[i] = y2[i] = -7.0f;
          q8rt_f32_softmax_strided_ukernel__scalar(d, n, stride, x, y1);
          g_fss_variants[v].fn(d, n, stride, x, y2);
          if (memcmp(y1, y2, count * sizeof(float)) != 0) {
            fprintf(stderr, "  %s: d=%zu n=%zu stride=%zu special=%d\n", g_fss_variants[v].name, d, n, stride, special);
            CHECK(0);
          }
          memcpy(y2, x, count * sizeof(float)); /* in place */
          g_fss_variants[v].fn(d, n, stride, y2, y2);
          for (size_t i = 0; i < count; i++) CHECK(memcmp(&y2[i], i % stride < n ? &y1[i] : &x[i], 4) == 0);
        }
      }
    }
  }
  free(x), free(y1), free(y2);
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
