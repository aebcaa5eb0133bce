/* The AVX2 QuantizeLinear / DequantizeLinear kernels against the scalar ones (byte for byte, bit
 * for bit for floats), and the byte transpose against a naive loop. */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>

#include "q8rt-kernels.h"
#include "test.h"

static uint32_t cv_rng = 0x1234567u;
static uint32_t cv_rnd(void) {
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

/* Floats from every class: ties k/2 * scale (exact when scale is a power of two), random bits
 * (NaN, inf, denormals, huge), +-inf, NaN, values near the clamp bounds, denormals. */
static float cv_float(float scale) {
  float v;
  uint32_t bits;
  switch (cv_rnd() % 8) {
    case 0: return (float)((int32_t)(cv_rnd() % 1200) - 600) * 0.5f * scale;
    case 1:
      bits = cv_rnd();
      memcpy(&v, &bits, sizeof(v));
      return v;
    case 2: return cv_rnd() & 1 ? INFINITY : -INFINITY;
    case 3: return cv_rnd() & 1 ? NAN : -NAN;
    case 4: return (cv_rnd() & 1 ? 1.0f : -1.0f) * ldexpf(1.0f, (int)(cv_rnd() % 100) + 20);
    case 5:
      bits = cv_rnd() & 0x807FFFFFu; /* denormal or zero */
      memcpy(&v, &bits, sizeof(v));
      return v;
    default: return ((float)(int32_t)(cv_rnd() % 100000) - 50000.0f) / 97.0f * scale;
  }
}

Q8RT_TEST(vcvt_avx2_quantize_vs_scalar) {
  if (!cv_have_avx2()) {
    printf("  skip: CPU lacks AVX2\n");
    return 0;
  }
  for (int trial = 0; trial < 400; trial++) {
    const size_t n = trial < 280 ? (size_t)(trial % 71) : 2000 + cv_rnd() % 3000;
    const int is_signed = (int)(cv_rnd() & 1);
    const int32_t qmin = is_signed ? -128 : 0, qmax = qmin + 255;
    int32_t zp = qmin + (int32_t)(cv_rnd() % 256);
    if (cv_rnd() % 3 == 0) zp = cv_rnd() & 1 ? qmin : qmax;
    q8rt_f32_qx_cvt_params p = {cv_scale(), zp, (float)(qmin - zp), (float)(qmax - zp)};
    float *x = malloc((n ? n : 1) * sizeof(float));
    uint8_t *y0 = malloc(n + 64), *y1 = malloc(n + 64);
    CHECK(x != NULL && y0 != NULL && y1 != NULL);
    for (size_t i = 0; i < n; i++) x[i] = cv_float(p.scale);
    memset(y0, 0xA5, n + 64);
    memset(y1, 0xA5, n + 64);
    /* Some trials in another rounding mode: the final rounding must not follow MXCSR (the
     * division does, identically in both). */
    const int mode = trial % 4 == 3 ? FE_UPWARD : trial % 4 == 2 ? FE_TOWARDZERO : FE_TONEAREST;
    fesetround(mode);
    if (is_signed) {
      q8rt_f32_qs8_vcvt_ukernel__scalar(n, x, (int8_t *)y0, &p);
      q8rt_f32_qs8_vcvt_ukernel__avx2(n, x, (int8_t *)y1, &p);
    } else {
      q8rt_f32_qu8_vcvt_ukernel__scalar(n, x, y0, &p);
      q8rt_f32_qu8_vcvt_ukernel__avx2(n, x, y1, &p);
    }
    fesetround(FE_TONEAREST);
    int ok = memcmp(y0, y1, n + 64) == 0;
    if (!ok) {
      size_t i = 0;
      while (y0[i] == y1[i]) i++;
      fprintf(stderr, "  n %zu signed %d scale %a zp %d: [%zu] x=%a %u != %u\n", n, is_signed, (double)p.scale, zp, i,
              i < n ? (double)x[i] : 0.0, y1[i], y0[i]);
    }
    free(x);
    free(y0);
    free(y1);
    CHECK(ok);
  }
  return 0;
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
    q8rt_qx_f32_cvt_params p = {scale, zp};
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

Q8RT_TEST(x8_transpose_vs_naive) {
  const size_t sizes[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 65, 100};
  const size_t ns = sizeof(sizes) / sizeof(sizes[0]);
  for (size_t ia = 0; ia < ns; ia++)
    for (size_t ib = 0; ib < ns; ib++) {
      const size_t a = sizes[ia], b = sizes[ib], outer = 1 + cv_rnd() % 3;
      const size_t total = outer * a * b;
      uint8_t *x = malloc(total ? total : 1), *y = malloc(total + 1), *e = malloc(total + 1);
      CHECK(x != NULL && y != NULL && e != NULL);
      for (size_t i = 0; i < total; i++) x[i] = (uint8_t)cv_rnd();
      memset(y, 0x5A, total + 1);
      memset(e, 0x5A, total + 1);
      for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < a; i++)
          for (size_t j = 0; j < b; j++) e[o * a * b + j * a + i] = x[o * a * b + i * b + j];
      q8rt_x8_transpose_ukernel__scalar(outer, a, b, x, y);
      const int ok = memcmp(y, e, total + 1) == 0;
      free(x);
      free(y);
      free(e);
      CHECK(ok);
    }
  return 0;
}
