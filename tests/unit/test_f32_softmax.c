/* f32-softmax: q8rt's exp (q8rt_exp_nonpositive) against the double-precision exp over every 97th
 * float of [ln(FLT_MIN), 0] (at most 2 ulp apart, 0 below, NaN through), the scalar twin against
 * values written here and against a double-precision softmax, and every variant of f32-softmax.inc
 * against the twin byte for byte over lengths 1-100 and some long rows (the 6625-class row of the
 * recognizer), with NaN, ±inf, ±0, subnormal and large values, out of place and in place. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "f32-softmax/f32-softmax.h"
#include "q8rt-isa.h"
#include "q8rt-math.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_softmax_ukernel_fn fn;
} g_softmax_variants[] = {
#define Q8RT_F32_SOFTMAX_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-softmax/f32-softmax.inc"
#undef Q8RT_F32_SOFTMAX_UKERNEL
};
#define SOFTMAX_VARIANTS (sizeof(g_softmax_variants) / sizeof(g_softmax_variants[0]))

static uint32_t sm_rng = 0x7f4a7c15u;

static int64_t ulp_diff(float a, float b) {
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  return (int64_t)ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia; /* both non-negative here */
}

Q8RT_TEST(f32_exp_nonpositive_accuracy) {
  int64_t worst = 0;
  for (uint32_t bits = 0x80000000u; bits <= 0xC2AEAC4Fu; bits += 97) { /* -0 .. ln(FLT_MIN) */
    float x;
    memcpy(&x, &bits, 4);
    const float got = q8rt_exp_nonpositive(x), want = (float)exp((double)x);
    const int64_t d = ulp_diff(got, want);
    if (d > worst) worst = d;
  }
  CHECK(worst <= 2);
  CHECK(q8rt_exp_nonpositive(0.0f) == 1.0f && q8rt_exp_nonpositive(-0.0f) == 1.0f);
  CHECK(q8rt_exp_nonpositive(-88.0f) == 0.0f && q8rt_exp_nonpositive(-INFINITY) == 0.0f);
  CHECK(isnan(q8rt_exp_nonpositive(NAN)));
  CHECK(q8rt_exp_nonpositive(-87.0f) > 0.0f && q8rt_exp_nonpositive(-87.0f) >= FLT_MIN);
  return 0;
}

Q8RT_TEST(f32_softmax_scalar_values) {
  float y[4];
  const float x2[2] = {3.0f, 3.0f};
  q8rt_f32_softmax_ukernel__scalar(2, x2, y);
  CHECK(y[0] == 0.5f && y[1] == 0.5f);
  const float big[4] = {1000.0f, 999.0f, -1000.0f, 0.0f};
  q8rt_f32_softmax_ukernel__scalar(4, big, y);
  CHECK(fabsf(y[0] - 0.7310586f) < 2e-7f && fabsf(y[1] - 0.26894143f) < 1e-7f && y[2] == 0.0f && y[3] == 0.0f);
  const float withnan[3] = {1.0f, -NAN, 2.0f}, withinf[3] = {1.0f, INFINITY, 2.0f};
  const uint32_t qnan = 0x7fc00000u;
  q8rt_f32_softmax_ukernel__scalar(3, withnan, y);
  CHECK(memcmp(&y[0], &qnan, 4) == 0 && memcmp(&y[1], &qnan, 4) == 0 && memcmp(&y[2], &qnan, 4) == 0);
  q8rt_f32_softmax_ukernel__scalar(3, withinf, y);
  CHECK(memcmp(&y[0], &qnan, 4) == 0 && memcmp(&y[1], &qnan, 4) == 0 && memcmp(&y[2], &qnan, 4) == 0);
  /* against a double-precision softmax on 3 rows of 37 values in [-20, 20] */
  float x[37], z[37];
  for (int row = 0; row < 3; row++) {
    float mx = -INFINITY;
    double sum = 0.0;
    for (int i = 0; i < 37; i++) {
      x[i] = (float)((int32_t)(test_xorshift32(&sm_rng) % 40001u) - 20000) * 1e-3f;
      if (x[i] > mx) mx = x[i];
    }
    /* the argument x - max is rounded to float as in every float softmax (ORT's too): its error
     * (up to 2^-24 |x - max|) is not the kernel's */
    for (int i = 0; i < 37; i++) sum += exp((double)(x[i] - mx));
    q8rt_f32_softmax_ukernel__scalar(37, x, z);
    for (int i = 0; i < 37; i++) {
      const double want = exp((double)(x[i] - mx)) / sum;
      CHECK(fabs((double)z[i] - want) <= 8.0 * FLT_EPSILON * want + 1e-30);
    }
  }
  return 0;
}

static float sm_value(void) {
  const uint32_t r = test_xorshift32(&sm_rng);
  switch (r % 64) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0f;
    case 4: return 1e-40f;
    case 5: return -3e38f;
    default: return (float)((int32_t)(r >> 8) - (1 << 23)) * 0x1p-17f; /* [-64, 64) */
  }
}

Q8RT_TEST(f32_softmax_variants_match_scalar) {
  static const size_t long_rows[] = {127, 128, 129, 255, 1000, 6625};
  int tested = 0;
  for (size_t v = 0; v + 1 < SOFTMAX_VARIANTS; v++) {
    if (!test_isa_supported(g_softmax_variants[v].isa)) continue;
    tested++;
    for (size_t c = 0; c < 100 + sizeof(long_rows) / sizeof(long_rows[0]); c++) {
      const size_t n = c < 100 ? c + 1 : long_rows[c - 100];
      float *x = malloc(n * sizeof(float)), *want = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
      /* a third of the rows without special values, so most rows are not all NaN */
      for (size_t i = 0; i < n; i++)
        x[i] = c % 3 ? (float)((int32_t)(test_xorshift32(&sm_rng) >> 8) - (1 << 23)) * 0x1p-19f : sm_value();
      q8rt_f32_softmax_ukernel__scalar(n, x, want);
      g_softmax_variants[v].fn(n, x, got);
      if (memcmp(want, got, n * sizeof(float)) != 0) {
        for (size_t i = 0; i < n; i++) {
          if (memcmp(&want[i], &got[i], 4) != 0) {
            uint32_t bw, bg;
            memcpy(&bw, &want[i], 4);
            memcpy(&bg, &got[i], 4);
            fprintf(stderr, "  %s n %zu: y[%zu] %08x (twin) vs %08x, x %g\n", g_softmax_variants[v].name, n, i, bw, bg,
                    (double)x[i]);
            break;
          }
        }
        CHECK(0);
      }
      memcpy(got, x, n * sizeof(float));
      g_softmax_variants[v].fn(n, got, got);
      CHECK(memcmp(want, got, n * sizeof(float)) == 0);
      free(x);
      free(want);
      free(got);
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
