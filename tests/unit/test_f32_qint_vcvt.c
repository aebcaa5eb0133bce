/* f32-qint-vcvt (QuantizeLinear): the scalar kernels against hand-computed values, every other
 * variant of f32-qint-vcvt.inc against the scalar twin of its type byte for byte. */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "test.h"

static uint32_t cv_rng = 0x1234567u;
/* inline: unused where the AVX2 test is compiled out */
static inline uint32_t cv_rnd(void) { return test_xorshift32(&cv_rng); }

/* Every line of f32-qint-vcvt.inc, with its output type. */
enum cv_type { CV_QU8, CV_QS8, CV_QU16, CV_QS16 };
#define CV_TYPE_qu8 CV_QU8
#define CV_TYPE_qs8 CV_QS8
#define CV_TYPE_qu16 CV_QU16
#define CV_TYPE_qs16 CV_QS16
static const struct cv_variant {
  unsigned isa;
  enum cv_type type;
  q8rt_f32_qint_vcvt_ukernel_fn fn;
  const char *name;
} cv_variants[] = {
#define Q8RT_F32_QINT_VCVT_UKERNEL(isa, fn, qt) {isa, CV_TYPE_##qt, {.qt = fn}, #fn},
#include "f32-qint-vcvt/f32-qint-vcvt.inc"
#undef Q8RT_F32_QINT_VCVT_UKERNEL
};
#define CV_NVARIANTS (sizeof(cv_variants) / sizeof(cv_variants[0]))

static void cv_call(const struct cv_variant *v, size_t n, const float *x, void *y, const q8rt_f32_qint_vcvt_params *p) {
  switch (v->type) {
    case CV_QU8: v->fn.qu8(n, x, y, p); break;
    case CV_QS8: v->fn.qs8(n, x, y, p); break;
    case CV_QU16: v->fn.qu16(n, x, y, p); break;
    case CV_QS16: v->fn.qs16(n, x, y, p); break;
  }
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

/* The scalar variant of v's output type in the list, or NULL. */
static const struct cv_variant *cv_scalar_twin(const struct cv_variant *v) {
  for (size_t j = 0; j < CV_NVARIANTS; j++) {
    if (cv_variants[j].isa == Q8RT_ISA_SCALAR && cv_variants[j].type == v->type) return &cv_variants[j];
  }
  return NULL;
}

/* Every non-scalar variant of the list against the scalar twin of its type, byte for byte. */
Q8RT_TEST(vcvt_quantize_variants_vs_scalar) {
  for (size_t k = 0; k < CV_NVARIANTS; k++) {
    const struct cv_variant *v = &cv_variants[k];
    if (v->isa == Q8RT_ISA_SCALAR) continue;
    const struct cv_variant *twin = cv_scalar_twin(v);
    CHECK(twin != NULL);
    if (!test_isa_supported(v->isa)) {
      printf("  skip %s: CPU lacks its ISA\n", v->name);
      continue;
    }
    const int is_signed = v->type == CV_QS8 || v->type == CV_QS16;
    const size_t es = v->type == CV_QU8 || v->type == CV_QS8 ? 1 : 2;
    const int32_t span = es == 1 ? 255 : 65535;
    for (int trial = 0; trial < 400; trial++) {
      const size_t n = trial < 280 ? (size_t)(trial % 71) : 2000 + cv_rnd() % 3000;
      const int32_t qmin = is_signed ? -(span + 1) / 2 : 0, qmax = qmin + span;
      int32_t zp = qmin + (int32_t)(cv_rnd() % (uint32_t)(span + 1));
      if (cv_rnd() % 3 == 0) zp = cv_rnd() & 1 ? qmin : qmax;
      q8rt_f32_qint_vcvt_params p = {test_quant_scale(&cv_rng), zp, (float)(qmin - zp), (float)(qmax - zp)};
      if (trial % 4 == 3) { /* bounds narrower than the type's (a fused clamp): the packs alone would not clamp */
        p.lo += (float)(cv_rnd() % (uint32_t)(span / 4 + 1));
        p.hi -= (float)(cv_rnd() % (uint32_t)(span / 4 + 1));
      }
      const size_t bytes = n * es + 64;
      float *x = malloc((n ? n : 1) * sizeof(float));
      uint8_t *y0 = malloc(bytes), *y1 = malloc(bytes);
      CHECK(x != NULL && y0 != NULL && y1 != NULL);
      for (size_t i = 0; i < n; i++) x[i] = cv_float(p.scale);
      /* Half of the narrow-bound trials: finite quotients within +-516 only, so no block divides. */
      if (trial % 8 == 7) {
        for (size_t i = 0; i < n; i++) x[i] = ((float)(int32_t)(cv_rnd() % 100000) - 50000.0f) / 97.0f * p.scale;
      }
      memset(y0, 0xA5, bytes);
      memset(y1, 0xA5, bytes);
      /* Some trials in another rounding mode: the final rounding must not follow MXCSR (the
       * division does, identically in both). */
      const int mode = trial % 4 == 3 ? FE_UPWARD : trial % 4 == 2 ? FE_TOWARDZERO : FE_TONEAREST;
      fesetround(mode);
      cv_call(twin, n, x, y0, &p);
      cv_call(v, n, x, y1, &p);
      fesetround(FE_TONEAREST);
      int ok = memcmp(y0, y1, bytes) == 0;
      if (!ok) {
        size_t i = 0;
        while (y0[i] == y1[i]) i++;
        fprintf(stderr, "  %s n %zu scale %a zp %d: byte %zu (x=%a) %u != %u\n", v->name, n, (double)p.scale, zp, i,
                i / es < n ? (double)x[i / es] : 0.0, y1[i], y0[i]);
      }
      free(x);
      free(y0);
      free(y1);
      CHECK(ok);
    }
  }
  return 0;
}

/* Values at the edges of the conversion for params p: both zeros, +-inf, NaNs with sign and payload,
 * the extremes of float, denormals, the clamp bounds lo/hi as quotients and just beyond them (the
 * saturation edges, ties at +-0.5 past them), ties around zero and +-2^31 (past int32). */
static float cv_edge(const q8rt_f32_qint_vcvt_params *p, uint32_t k) {
  const float s = p->scale;
  static const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                  0xFFC00000u, 0x7F800001u, 0x7FC12345u, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                  0x00000001u, 0x80000001u, 0x00800000u, 0x807FFFFFu};
  const size_t nbits = sizeof(bits) / sizeof(bits[0]);
  if (k < nbits) {
    float v;
    memcpy(&v, &bits[k], sizeof(v));
    return v;
  }
  switch ((k - nbits) % 14) {
    case 0: return p->lo * s;
    case 1: return p->hi * s;
    case 2: return (p->lo - 0.5f) * s;
    case 3: return (p->hi + 0.5f) * s;
    case 4: return (p->lo + 0.5f) * s;
    case 5: return (p->hi - 0.5f) * s;
    case 6: return (p->lo - 1.0f) * s;
    case 7: return (p->hi + 1.0f) * s;
    case 8: return 0.5f * s;
    case 9: return -0.5f * s;
    case 10: return 1.5f * s;
    case 11: return -2.5f * s;
    case 12: return 2147483648.0f * s;
    default: return -2147483904.0f * s;
  }
}

/* Every non-scalar variant against its scalar twin on each length 1..300, at an odd offset of x and
 * y (unaligned), with edge values scattered among random ones (so each lands in the body, the
 * 16-wide steps and the masked tail), for every scale form (powers of two, odd scales, scales so
 * small or large that x / scale overflows or underflows) and zero points at qmin, qmax and between. */
Q8RT_TEST(vcvt_quantize_variants_edges) {
  static const float scales[] = {1.0f, 0.25f, 1.0f / 3.0f, 0.0235294122f, 123.456f, 1e-30f, 3e30f, 1.4e-45f};
  const size_t nscales = sizeof(scales) / sizeof(scales[0]);
  for (size_t k = 0; k < CV_NVARIANTS; k++) {
    const struct cv_variant *v = &cv_variants[k];
    if (v->isa == Q8RT_ISA_SCALAR) continue;
    const struct cv_variant *twin = cv_scalar_twin(v);
    CHECK(twin != NULL);
    if (!test_isa_supported(v->isa)) {
      printf("  skip %s: CPU lacks its ISA\n", v->name);
      continue;
    }
    const int is_signed = v->type == CV_QS8 || v->type == CV_QS16;
    const size_t es = v->type == CV_QU8 || v->type == CV_QS8 ? 1 : 2;
    const int32_t span = es == 1 ? 255 : 65535;
    const int32_t qmin = is_signed ? -(span + 1) / 2 : 0, qmax = qmin + span;
    float *xb = malloc(301 * sizeof(float));
    uint8_t *y0 = malloc(301 * 2 + 64), *y1 = malloc(301 * 2 + 64);
    CHECK(xb != NULL && y0 != NULL && y1 != NULL);
    for (size_t n = 1; n <= 300; n++) {
      const int32_t zps[] = {qmin, qmax, qmin + span / 2 + 1, qmin + (int32_t)(cv_rnd() % (uint32_t)(span + 1))};
      const int32_t zp = zps[n % 4];
      const q8rt_f32_qint_vcvt_params p = {scales[(n / 4) % nscales], zp, (float)(qmin - zp), (float)(qmax - zp)};
      float *x = xb + 1;
      for (size_t i = 0; i < n; i++) x[i] = cv_rnd() % 3 == 0 ? cv_float(p.scale) : cv_edge(&p, cv_rnd() % 28);
      x[n - 1] = cv_edge(&p, (uint32_t)n % 28); /* the last element (a tail lane) takes each edge */
      memset(y0, 0xA5, 301 * 2 + 64);
      memset(y1, 0xA5, 301 * 2 + 64);
      cv_call(twin, n, x, y0 + es, &p);
      cv_call(v, n, x, y1 + es, &p);
      int ok = memcmp(y0, y1, 301 * 2 + 64) == 0;
      if (!ok) {
        size_t i = 0;
        while (y0[i] == y1[i]) i++;
        fprintf(stderr, "  %s n %zu scale %a zp %d: byte %zu %u != %u\n", v->name, n, (double)p.scale, zp, i, y1[i],
                y0[i]);
      }
      CHECK(ok);
    }
    free(xb);
    free(y0);
    free(y1);
  }
  return 0;
}

/* Quotients next to the half-integers, where x * (1 / scale) and x / scale can round to different
 * integers (the AVX-512 8-bit body's multiply, f32-qint-vcvt-avx512skx.c): for every k in
 * -300..300, the floats within 12 ulps of (k + 1/2) * scale and of k * scale, in blocks of 64 so
 * that whole blocks take the multiply where no lane is near a tie, and blocks that mix a near lane
 * with safe ones; quotients past 512 (saturated), scales with a mantissa of all ones, odd
 * scales, the zero points at qmin, qmax and between, in all three rounding modes; rows of 192
 * (a row where many blocks divide switches to the division). Byte for byte against the scalar
 * twin; a bound of 1/2 instead of 1/2 - 2^-11 in the kernel's test fails here. */
Q8RT_TEST(vcvt_quantize_variants_near_ties) {
  static const float scales[] = {0.0235294122f, 0x1.fffffep-6f, 1.0f / 3.0f, 0.0078125f, 7.1e-3f, 1.7f, 0x1.0p-100f};
  for (size_t k = 0; k < CV_NVARIANTS; k++) {
    const struct cv_variant *v = &cv_variants[k];
    if (v->isa == Q8RT_ISA_SCALAR || (v->type != CV_QU8 && v->type != CV_QS8)) continue;
    const struct cv_variant *twin = cv_scalar_twin(v);
    CHECK(twin != NULL);
    if (!test_isa_supported(v->isa)) {
      printf("  skip %s: CPU lacks its ISA\n", v->name);
      continue;
    }
    const int is_signed = v->type == CV_QS8;
    const int32_t qmin = is_signed ? -128 : 0, qmax = qmin + 255;
    const size_t n = 1202 * 25 * 2;
    float *x = malloc(n * sizeof(float));
    uint8_t *y0 = malloc(n), *y1 = malloc(n);
    CHECK(x != NULL && y0 != NULL && y1 != NULL);
    for (size_t si = 0; si < sizeof(scales) / sizeof(scales[0]); si++) {
      const float s = scales[si];
      size_t m = 0;
      for (int32_t q = -600; q <= 601; q++) { /* quotients q / 2: ties and integers, past 512 too */
        const float c = (float)q * 0.5f * s;
        for (int j = -12; j <= 12; j++) {
          uint32_t bits;
          memcpy(&bits, &c, sizeof(bits));
          bits = c != 0.0f ? bits + (uint32_t)j : j < 0 ? 0x80000000u + (uint32_t)-j : (uint32_t)j;
          memcpy(&x[m], &bits, sizeof(float));
          m++;
          /* a safe lane beside it, so that most blocks hold one near lane among safe ones */
          x[m++] = ((float)q * 0.5f + 0.25f) * s;
        }
      }
      CHECK(m == n);
      for (int mode = 0; mode < 3; mode++) {
        const int32_t zp = mode == 0 ? qmin : mode == 1 ? qmax : qmin + 100;
        const q8rt_f32_qint_vcvt_params p = {s, zp, (float)(qmin - zp), (float)(qmax - zp)};
        fesetround(mode == 0 ? FE_TONEAREST : mode == 1 ? FE_UPWARD : FE_TOWARDZERO);
        cv_call(twin, n, x, y0, &p);
        /* rows of 3 blocks: a longer row full of near lanes would switch to the division */
        for (size_t i = 0; i < n; i += 192) cv_call(v, n - i < 192 ? n - i : 192, x + i, y1 + i, &p);
        fesetround(FE_TONEAREST);
        int ok = memcmp(y0, y1, n) == 0;
        if (!ok) {
          size_t i = 0;
          while (y0[i] == y1[i]) i++;
          fprintf(stderr, "  %s scale %a zp %d: x[%zu]=%a %u != %u\n", v->name, (double)s, zp, i, (double)x[i], y1[i],
                  y0[i]);
        }
        CHECK(ok);
      }
    }
    free(x);
    free(y0);
    free(y1);
  }
  return 0;
}

Q8RT_TEST(quantize_kernels) {
  const float x[] = {0.0f, 0.25f, 0.75f, -0.25f, 1000.0f, -1000.0f, 0.125f, 0.375f};
  q8rt_f32_qint_vcvt_params p = {0.25f, 10, 0.0f - 10, 255.0f - 10};
  uint8_t yu[8];
  q8rt_f32_qu8_vcvt_ukernel__scalar(8, x, yu, &p);
  const uint8_t eu[] = {10, 11, 13, 9, 255, 0, 10, 12}; /* 0.5 -> 0, 1.5 -> 2 */
  CHECK(memcmp(yu, eu, 8) == 0);
  q8rt_f32_qint_vcvt_params ps = {0.25f, -3, -128.0f + 3, 127.0f + 3};
  int8_t ys[8];
  q8rt_f32_qs8_vcvt_ukernel__scalar(8, x, ys, &ps);
  const int8_t es[] = {-3, -2, 0, -4, 127, -128, -3, -1};
  CHECK(memcmp(ys, es, 8) == 0);
  q8rt_f32_qint_vcvt_params p16 = {0.25f, 0, -32768.0f, 32767.0f};
  int16_t y16[8];
  q8rt_f32_qs16_vcvt_ukernel__scalar(8, x, y16, &p16);
  CHECK(y16[4] == 4000 && y16[5] == -4000 && y16[7] == 2);
  return 0;
}
