/* qint-f32-vcvt (DequantizeLinear): the scalar kernels against hand-computed values, the AVX2 ones
 * against the scalar ones bit for bit. */
#include <math.h>
#include <stdlib.h>

#include "q8rt-kernels.h"
#include "test.h"

static uint32_t cv_rng = 0x1234567u;
static inline uint32_t cv_rnd(void) { /* inline: unused where the AVX2 test is compiled out */
  cv_rng ^= cv_rng << 13;
  cv_rng ^= cv_rng >> 17;
  cv_rng ^= cv_rng << 5;
  return cv_rng;
}

#if defined(__x86_64__) && defined(__GNUC__)
static int cv_have_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

static const float cv_odd_scales[] = {0.1f, 1.0f / 3.0f, 0.0235294122f, 3.0f, 7.5f, 0.00390625f, 1.7f, 123.456f};

static float cv_scale(void) {
  if (cv_rnd() & 1) return ldexpf(1.0f, (int)(cv_rnd() % 21) - 10); /* 2^-10 .. 2^10 */
  return cv_odd_scales[cv_rnd() % (sizeof(cv_odd_scales) / sizeof(cv_odd_scales[0]))];
}

Q8RT_TEST(vcvt_avx2_dequantize_vs_scalar) {
  if (!cv_have_avx2()) {
    printf("  skip: CPU lacks AVX2\n");
    return 0;
  }
  for (int trial = 0; trial < 400; trial++) {
    const size_t n = trial < 280 ? (size_t)(trial % 71) : 2000 + cv_rnd() % 3000;
    const int is_signed = (int)(cv_rnd() & 1);
    const int32_t qmin = is_signed ? -128 : 0;
    int32_t zp = qmin + (int32_t)(cv_rnd() % 256);
    if (cv_rnd() % 3 == 0) zp = cv_rnd() & 1 ? qmin : qmin + 255;
    float scale = cv_scale();
    if (trial % 50 == 0) scale = trial % 100 == 0 ? INFINITY : 1e-45f; /* inf * 0 = NaN; denormal products */
    q8rt_qint_f32_vcvt_params p = {scale, zp};
    uint8_t *x = malloc(n ? n : 1);
    float *y0 = malloc((n + 16) * sizeof(float)), *y1 = malloc((n + 16) * sizeof(float));
    CHECK(x != NULL && y0 != NULL && y1 != NULL);
    for (size_t i = 0; i < n; i++) x[i] = (uint8_t)cv_rnd();
    if (n > 2) x[0] = 0, x[1] = 255, x[2] = 0x80;
    memset(y0, 0xA5, (n + 16) * sizeof(float));
    memset(y1, 0xA5, (n + 16) * sizeof(float));
    if (is_signed) {
      q8rt_qs8_f32_vcvt_ukernel__scalar(n, (const int8_t *)x, y0, &p);
      q8rt_qs8_f32_vcvt_ukernel__avx2(n, (const int8_t *)x, y1, &p);
    } else {
      q8rt_qu8_f32_vcvt_ukernel__scalar(n, x, y0, &p);
      q8rt_qu8_f32_vcvt_ukernel__avx2(n, x, y1, &p);
    }
    const int ok = memcmp(y0, y1, (n + 16) * sizeof(float)) == 0;
    free(x);
    free(y0);
    free(y1);
    CHECK(ok);
  }
  return 0;
}
#endif

Q8RT_TEST(dequantize_kernels) {
  const uint8_t xu[] = {0, 10, 255};
  float y[3];
  q8rt_qint_f32_vcvt_params p = {0.5f, 10};
  q8rt_qu8_f32_vcvt_ukernel__scalar(3, xu, y, &p);
  CHECK(y[0] == -5.0f && y[1] == 0.0f && y[2] == 122.5f);
  const int32_t x32[] = {-2147483647 - 1, 7};
  q8rt_qint_f32_vcvt_params p32 = {2.0f, 0};
  q8rt_qs32_f32_vcvt_ukernel__scalar(2, x32, y, &p32);
  CHECK(y[0] == -4294967296.0f && y[1] == 14.0f);
  return 0;
}
