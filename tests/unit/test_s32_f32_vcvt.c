/* s32-f32-vcvt: the scalar twin against the arithmetic written here (a tie where a fused multiply-
 * add would round differently, -0 kept without a bias), and every variant of s32-f32-vcvt.inc
 * against the twin over lengths around the vector widths, the three modes, with and without
 * column sums, in place and not, extreme accumulators and scales (inf, NaN, subnormal). */
#include <float.h>
#include <stdlib.h>

#include "s32-f32-vcvt/s32-f32-vcvt.h"
#include "test.h"

typedef struct vcvt_variant {
  const char *name;
  unsigned isa;
  q8rt_s32_f32_vcvt_ukernel_fn fn;
} vcvt_variant;

static const vcvt_variant g_vcvt_variants[] = {
#define Q8RT_S32_F32_VCVT_UKERNEL(isa, fn) {#fn, isa, fn},
#include "s32-f32-vcvt/s32-f32-vcvt.inc"
#undef Q8RT_S32_F32_VCVT_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t cv_rng = 0x2545f491u;

Q8RT_TEST(s32_f32_vcvt_scalar_arithmetic) {
  /* (float)3 * (1 + 2^-23) = 3 + 1.5 ulp, a tie, rounds to 3 + 2^-21; + (-3) gives 2^-21 (an fma: 3 * 2^-23) */
  const int32_t acc[3] = {1, 5, 0};
  const uint32_t cs[3] = {1, 1, 0};
  float y[3];
  q8rt_s32_vcvt_params p = {2u, 0u, 1.0f + FLT_EPSILON, -3.0f, Q8RT_S32_VCVT_SCALE_BIAS, NULL};
  q8rt_s32_f32_vcvt_ukernel__scalar(1, acc, NULL, y, &p);
  CHECK(y[0] == ldexpf(1.0f, -21));
  const float bv[2] = {-3.0f, 0.25f};
  p.mode = Q8RT_S32_VCVT_SCALE_BIASV;
  p.biasv = bv;
  q8rt_s32_f32_vcvt_ukernel__scalar(2, acc, NULL, y, &p); /* 3 and 7 times (1 + 2^-23), plus -3 and 0.25 */
  CHECK(y[0] == ldexpf(1.0f, -21) && y[1] == (float)7 * (1.0f + FLT_EPSILON) + 0.25f);
  p.e = 3u; /* 5 + 2 - 3 * 1 = 4 */
  p.mode = Q8RT_S32_VCVT_INT32;
  int32_t yi[3];
  q8rt_s32_f32_vcvt_ukernel__scalar(2, acc, cs, yi, &p);
  CHECK(yi[0] == 0 && yi[1] == 4);
  /* 0 * -1: -0 stays -0 without a bias (an added +0 would make it +0) */
  q8rt_s32_vcvt_params q = {0u, 0u, -1.0f, 0.0f, Q8RT_S32_VCVT_SCALE, NULL};
  q8rt_s32_f32_vcvt_ukernel__scalar(1, acc + 2, NULL, y, &q);
  CHECK(y[0] == 0.0f && signbit(y[0]));
  return 0;
}

Q8RT_TEST(s32_f32_vcvt_variants_vs_scalar) {
  static const float scales[] = {1.0f + FLT_EPSILON, 0.00390625f, 3.0e-39f, INFINITY, -2.5f, 1.0e30f};
  for (const vcvt_variant *v = g_vcvt_variants; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    for (size_t n = 0; n <= 70; n++) {
      for (int mode = 0; mode < 4; mode++) {
        for (int variant = 0; variant < 4; variant++) {
          int32_t *acc = malloc((n + 1) * 4), *acc2 = malloc((n + 1) * 4);
          float *bv = malloc((n + 1) * 4);
          uint32_t *cs = malloc((n + 1) * 4);
          uint32_t *y0 = malloc((n + 1) * 4), *y1 = malloc((n + 1) * 4);
          CHECK(acc != NULL && acc2 != NULL && cs != NULL && y0 != NULL && y1 != NULL && bv != NULL);
          for (size_t i = 0; i < n; i++) {
            const uint32_t r = test_xorshift32(&cv_rng);
            acc[i] = (int32_t)(r % 7 == 0 ? 0x7fffffffu : r % 7 == 1 ? 0x80000000u : r % 7 == 2 ? 0u : r);
            cs[i] = test_xorshift32(&cv_rng);
            bv[i] = variant == 3 && i % 5 == 0 ? NAN : (float)((int)(test_xorshift32(&cv_rng) % 2001) - 1000) * 0.37f;
          }
          memcpy(acc2, acc, n * 4);
          q8rt_s32_vcvt_params p;
          p.c = test_xorshift32(&cv_rng);
          p.e = test_xorshift32(&cv_rng) % 300;
          p.scale = scales[test_xorshift32(&cv_rng) % 6];
          p.bias = variant == 3 ? NAN : (float)((int)(test_xorshift32(&cv_rng) % 2001) - 1000) * 0.37f;
          p.mode = mode;
          p.biasv = bv;
          const uint32_t *csp = variant & 1 ? cs : NULL;
          y0[n] = y1[n] = 0xdeadbeefu;
          q8rt_s32_f32_vcvt_ukernel__scalar(n, acc, csp, y0, &p);
          if (variant == 2) {
            v->fn(n, acc2, csp, acc2, &p); /* in place */
            memcpy(y1, acc2, n * 4);
          } else {
            v->fn(n, acc, csp, y1, &p);
          }
          const int same = memcmp(y0, y1, (n + 1) * 4) == 0;
          if (!same) fprintf(stderr, "  %s: n=%zu mode=%d variant=%d\n", v->name, n, mode, variant);
          free(acc);
          free(acc2);
          free(bv);
          free(cs);
          free(y0);
          free(y1);
          CHECK(same);
        }
      }
    }
  }
  return 0;
}
