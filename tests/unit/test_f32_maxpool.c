/* f32-maxpool: the scalar twin against values written here, and every variant of f32-maxpool.inc
 * against the scalar twin byte for byte over lengths around the vector widths, strides 1-9 (the
 * AVX-512 permutes up to 8, a gather past), dilations 1-3, window lengths 0-13, 1-3 rows, 1-2
 * output rows, with NaN, ±0, ±inf and
 * -FLT_MAX among the values (where the order of the comparisons decides which bytes come out). Exact buffer sizes for
 * ASan. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "f32-maxpool/f32-maxpool.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_maxpool_ukernel_fn fn;
} g_f32_maxpool_variants[] = {
#define Q8RT_F32_MAXPOOL_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-maxpool/f32-maxpool.inc"
#undef Q8RT_F32_MAXPOOL_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t fm_rng = 0x2545f491u;

static float fm_value(void) {
  const uint32_t r = test_xorshift32(&fm_rng);
  switch (r % 16) {
    case 0: return NAN;
    case 1: return 0.0f;
    case 2: return -0.0f;
    case 3: return INFINITY;
    case 4: return -INFINITY;
    case 5: return -FLT_MAX;
    default: return (float)((int32_t)(r >> 8) % 64) * 0.25f; /* repeats: ties between taps */
  }
}

Q8RT_TEST(f32_maxpool_scalar_values) {
  const float x[6] = {1.0f, -0.0f, 3.0f, NAN, 0.0f, 2.0f};
  float y[3] = {-FLT_MAX, -FLT_MAX, 0.0f};
  q8rt_f32_maxpool_ukernel__scalar(2, 1, 1, 2, 2, 1, 0, 0, 0, x, y, 1); /* windows {1, -0}, {3, NaN} */
  CHECK(y[0] == 1.0f && y[1] == 3.0f && y[2] == 0.0f);
  float z[2] = {-FLT_MAX, -FLT_MAX};
  const float x2[3] = {-0.0f, 0.0f, NAN};
  q8rt_f32_maxpool_ukernel__scalar(1, 1, 1, 3, 1, 1, 0, 0, 0, x2, z, 1); /* the first of equal zeros stays, NaN never */
  CHECK(z[0] == 0.0f && signbit(z[0]) && z[1] == -FLT_MAX);
  /* two rows 4 apart, windows of 2: rows then taps in order ({-0, 5} then {0, 7}: 7; {0, NaN}
   * then {-0, 0}: the first zero, +0; rows the other way round would give -0) */
  const float x3[6] = {-0.0f, 5.0f, 0.0f, NAN, 0.0f, 7.0f};
  float w[2] = {-FLT_MAX, -FLT_MAX};
  q8rt_f32_maxpool_ukernel__scalar(1, 1, 2, 2, 1, 1, 0, 4, 0, x3, w, 1);
  CHECK(w[0] == 7.0f);
  const float x4[7] = {0.0f, NAN, 1.0f, 1.0f, -0.0f, 0.0f, 2.0f};
  q8rt_f32_maxpool_ukernel__scalar(1, 1, 2, 2, 1, 1, 0, 4, 0, x4, w + 1, 1);
  CHECK(w[1] == 0.0f && !signbit(w[1]));
  /* two output rows: inputs 3 apart, outputs 2 apart (y[1] untouched) */
  const float x5[5] = {1.0f, 4.0f, 9.0f, 2.0f, 8.0f};
  float u[3] = {-FLT_MAX, 5.0f, -FLT_MAX};
  q8rt_f32_maxpool_ukernel__scalar(1, 2, 1, 2, 1, 1, 3, 0, 2, x5, u, 1);
  CHECK(u[0] == 4.0f && u[1] == 5.0f && u[2] == 8.0f);
  /* !acc: y not read, each output from -FLT_MAX */
  float u2[2] = {100.0f, -0.0f};
  const float x6[2] = {-INFINITY, 0.0f};
  q8rt_f32_maxpool_ukernel__scalar(2, 1, 1, 1, 1, 1, 0, 0, 0, x6, u2, 0);
  CHECK(u2[0] == -FLT_MAX && u2[1] == 0.0f && !signbit(u2[1]));
  return 0;
}

Q8RT_TEST(f32_maxpool_variants_match_scalar) {
  int tested = 0;
  const size_t ns[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 70};
  for (size_t v = 0; g_f32_maxpool_variants[v].fn != NULL; v++) {
    if (!test_isa_supported(g_f32_maxpool_variants[v].isa)) continue;
    tested++;
    for (size_t in_ = 0; in_ < sizeof(ns) / sizeof(ns[0]); in_++) {
      for (size_t s = 1; s <= 9; s++) {
        for (size_t d = 1; d <= 3; d++) {
          for (size_t k = 0; k <= 13; k += (k < 4 ? 1 : 3)) {
            for (size_t r = 1; r <= 3; r++) {
              /* r rows rs apart (each row's span and a gap of (n + k) % 4), q = 1 + r % 2 output
               * rows: inputs xq apart (the window's rows and a gap), outputs n + r apart */
              const size_t n = ns[in_], row = (n - 1) * s + (k ? (k - 1) * d : 0) + 1, rs = row + (n + k) % 4;
              const size_t q = 1 + r % 2, xq = (r - 1) * rs + row + d % 2, yq = n + r;
              const size_t len = (q - 1) * xq + (r - 1) * rs + row, ylen = (q - 1) * yq + n;
              float *x = malloc(len * sizeof(float)), *a = malloc(ylen * sizeof(float)),
                    *b = malloc(ylen * sizeof(float));
              for (size_t i = 0; i < len; i++) x[i] = fm_value();
              for (size_t i = 0; i < ylen; i++) {
                a[i] = i % 5 == 0 ? -FLT_MAX : fm_value();
                if (a[i] != a[i]) a[i] = -0.0f; /* y never holds NaN (it starts at -FLT_MAX) */
                b[i] = a[i];
              }
              const int acc = (int)((n + s + k) % 2); /* y read, or each output from -FLT_MAX */
              q8rt_f32_maxpool_ukernel__scalar(n, q, r, k, s, d, xq, rs, yq, x, a, acc);
              g_f32_maxpool_variants[v].fn(n, q, r, k, s, d, xq, rs, yq, x, b, acc);
              CHECK(memcmp(a, b, ylen * sizeof(float)) == 0);
              free(x);
              free(a);
              free(b);
            }
          }
        }
      }
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
