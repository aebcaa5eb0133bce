/* f32-vtranscend, AArch64 NEON: 4 floats per step as two float64x2 (erf: 8 as four), the last n % 4 by the scalar
 * twin. Only vmulq/vaddq/vsubq/vdivq_f64 on the values: the build's -ffp-contract=off keeps GCC
 * from fusing them into fmla (it would by default on aarch64), as in fmath.c. The specials are
 * blended in after the rounding to float (fcvtn rounds to nearest like the C cast). */
#include <arm_neon.h>
#include <stdint.h>

#include "common/fmath.h"
#include "f32-vtranscend/f32-vtranscend.h"

#define SET(c) vdupq_n_f64(c)
#define MUL vmulq_f64
#define ADD vaddq_f64
#define SUB vsubq_f64

static inline __attribute__((always_inline)) float64x2_t horner2(const double *c, int deg, float64x2_t x) {
  float64x2_t p = SET(c[deg]);
  for (int k = deg - 1; k >= 0; k--) p = ADD(MUL(p, x), SET(c[k]));
  return p;
}

/* q8rt_exp_d's scale branch for x in [-746, 710] (k clamped to the normal exponents). */
static inline __attribute__((always_inline)) float64x2_t exp2v(float64x2_t x) {
  float64x2_t k = ADD(MUL(x, SET(Q8RT_FMATH_INV_LN2)), SET(Q8RT_FMATH_ROUND_MAGIC));
  k = SUB(k, SET(Q8RT_FMATH_ROUND_MAGIC));
  const float64x2_t r = SUB(SUB(x, MUL(k, SET(Q8RT_FMATH_LN2_HI))), MUL(k, SET(Q8RT_FMATH_LN2_LO)));
  const float64x2_t p = horner2(q8rt_fmath_rfact, 13, r);
  const float64x2_t kc = vminq_f64(vmaxq_f64(k, SET(-1022.0)), SET(1023.0));
  const int64x2_t bits = vshlq_n_s64(vaddq_s64(vcvtq_s64_f64(kc), vdupq_n_s64(1023)), 52);
  return MUL(p, vreinterpretq_f64_s64(bits));
}

/* two double halves of 4 floats in, 4 floats out */
#define WIDEN(x) float64x2_t lo = vcvt_f64_f32(vget_low_f32(x)), hi = vcvt_high_f64_f32(x)
#define NARROW(lo, hi) vcvt_high_f32_f64(vcvt_f32_f64(lo), hi)

static inline __attribute__((always_inline)) float64x2_t exp_half(float64x2_t xd) {
  return exp2v(vminq_f64(vmaxq_f64(xd, SET(-746.0)), SET(710.0)));
}

static inline __attribute__((always_inline)) float32x4_t exp_step(float32x4_t x) {
  WIDEN(x);
  const float32x4_t f = NARROW(exp_half(lo), exp_half(hi));
  return vbslq_f32(vceqq_f32(x, x), f, x); /* NaN: x */
}

static inline __attribute__((always_inline)) float64x2_t log_half(float64x2_t xd) {
  const uint64x2_t bits = vreinterpretq_u64_f64(xd);
  /* frexp: m = the mantissa with the exponent of 0.5, e = the biased exponent - 1022 */
  float64x2_t m = vreinterpretq_f64_u64(
      vorrq_u64(vandq_u64(bits, vdupq_n_u64(0x000fffffffffffffull)), vdupq_n_u64(0x3fe0000000000000ull)));
  int64x2_t eb = vreinterpretq_s64_u64(vshrq_n_u64(bits, 52));
  const uint64x2_t lt = vcltq_f64(m, SET(Q8RT_FMATH_SQRT_HALF));
  m = vbslq_f64(lt, MUL(m, SET(2.0)), m);
  eb = vaddq_s64(eb, vreinterpretq_s64_u64(lt));              /* e -= 1 where m doubled */
  const float64x2_t de = SUB(vcvtq_f64_s64(eb), SET(1022.0)); /* exact: small integers */
  const float64x2_t f = SUB(m, SET(1.0));
  const float64x2_t s = vdivq_f64(f, ADD(SET(2.0), f));
  const float64x2_t s2 = MUL(s, s);
  const float64x2_t t = horner2(q8rt_fmath_rodd, 9, s2);
  const float64x2_t logm = ADD(MUL(SET(2.0), s), MUL(MUL(SET(2.0), s), MUL(s2, t)));
  return ADD(MUL(de, SET(Q8RT_FMATH_LN2_HI)), ADD(MUL(de, SET(Q8RT_FMATH_LN2_LO)), logm));
}

static inline __attribute__((always_inline)) float32x4_t log_step(float32x4_t x) {
  WIDEN(x);
  float32x4_t y = NARROW(log_half(lo), log_half(hi));
  const float32x4_t zero = vdupq_n_f32(0.0f);
  y = vbslq_f32(vcltq_f32(x, zero), vdupq_n_f32(__builtin_nanf("")), y);
  y = vbslq_f32(vceqq_f32(x, zero), vdupq_n_f32(-__builtin_inff()), y);
  y = vbslq_f32(vceqq_f32(x, vdupq_n_f32(__builtin_inff())), x, y);
  return vbslq_f32(vceqq_f32(x, x), y, x); /* NaN: x */
}

#define ANY(m) (vmaxvq_u32(vreinterpretq_u32_u64(m)) != 0)

/* erf of nq quads of floats (nq <= 2), 2 nq float64x2 side by side: the Horner runs (up to
 * 59 + 17 + 13 dependent steps) are latency-bound, so independent vectors interleave. A lane's
 * result does not depend on which other lanes share its run: one of a lower degree restarts at its
 * top coefficient. */
static inline __attribute__((always_inline)) void erf_vecs(int nq, const float *x, float *y) {
  const int nv = 2 * nq;
  float32x4_t xq[2];
  float64x2_t a[4], a2[4], r[4];
  uint64x2_t small[4], lt3[4], lt2[4];
  uint64x2_t any_small = vdupq_n_u64(0), any_mid = any_small, any_ge3 = any_small, any_ge2 = any_small;
#pragma GCC unroll 4
  for (int u = 0; u < nv; u++) {
    if (u % 2 == 0) xq[u / 2] = vld1q_f32(x + 4 * (u / 2));
    const float64x2_t xd = u % 2 == 0 ? vcvt_f64_f32(vget_low_f32(xq[u / 2])) : vcvt_high_f64_f32(xq[u / 2]);
    a[u] = vabsq_f64(xd);
    a2[u] = MUL(a[u], a[u]);
    small[u] = vcltq_f64(a[u], SET(1.0));
    const uint64x2_t mid = vandq_u64(vcgeq_f64(a[u], SET(1.0)), vcltq_f64(a[u], SET(3.92)));
    lt3[u] = vcltq_f64(a[u], SET(3.0));
    lt2[u] = vcltq_f64(a[u], SET(2.0));
    any_small = vorrq_u64(any_small, small[u]), any_mid = vorrq_u64(any_mid, mid);
    any_ge3 = vorrq_u64(any_ge3, vbicq_u64(mid, lt3[u])), any_ge2 = vorrq_u64(any_ge2, vbicq_u64(mid, lt2[u]));
    r[u] = SET(0.0);
  }
  if (ANY(any_mid)) {
    const int top = ANY(any_ge3) ? 59 : ANY(any_ge2) ? 45 : 31;
    const double *c = q8rt_fmath_rdfact;
    float64x2_t z[4], p[4];
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) z[u] = MUL(SET(2.0), a2[u]), p[u] = SET(c[top]);
    for (int k = top - 1; k >= 0; k--) {
#pragma GCC unroll 4
      for (int u = 0; u < nv; u++) {
        if (k == 44 && top > 45) p[u] = vbslq_f64(lt3[u], SET(c[45]), p[u]);
        if (k == 30 && top > 31) p[u] = vbslq_f64(lt2[u], SET(c[31]), p[u]);
        p[u] = ADD(MUL(p[u], z[u]), SET(c[k]));
      }
    }
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) {
      const float64x2_t sum = MUL(a[u], p[u]);
      const float64x2_t e = exp2v(vmaxq_f64(SUB(SET(0.0), a2[u]), SET(-746.0)));
      r[u] = MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), e), sum);
    }
  }
  if (ANY(any_small)) {
    const double *c = q8rt_fmath_erf_taylor;
    float64x2_t p[4];
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) p[u] = SET(c[17]);
    for (int k = 16; k >= 0; k--) {
#pragma GCC unroll 4
      for (int u = 0; u < nv; u++) p[u] = ADD(MUL(p[u], a2[u]), SET(c[k]));
    }
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) r[u] = vbslq_f64(small[u], MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), a[u]), p[u]), r[u]);
  }
#pragma GCC unroll 4
  for (int u = 0; u < nv; u++) r[u] = vbslq_f64(vcgeq_f64(a[u], SET(3.92)), SET(1.0), r[u]); /* +-1 from there on */
#pragma GCC unroll 2
  for (int q = 0; q < nq; q++) {
    /* r >= 0 (+0 for x = +-0): the sign of x or'ed in is the scalar's -f */
    const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(xq[q]), vdupq_n_u32(0x80000000u));
    const float32x4_t f = NARROW(r[2 * q], r[2 * q + 1]);
    const float32x4_t v = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(f), sign));
    vst1q_f32(y + 4 * q, vbslq_f32(vceqq_f32(xq[q], xq[q]), v, xq[q])); /* NaN: x */
  }
}

/* Out of line: one copy of each Horner run (the sanitizer build compiles it in seconds). */
static __attribute__((noinline)) void erf_x2(const float *x, float *y) { erf_vecs(2, x, y); }
static __attribute__((noinline)) void erf_x1(const float *x, float *y) { erf_vecs(1, x, y); }

void q8rt_f32_verf_ukernel__neon(size_t n, const float *x, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) erf_x2(x + i, y + i);
  for (; i + 4 <= n; i += 4) erf_x1(x + i, y + i);
  if (i < n) q8rt_f32_verf_ukernel__scalar(n - i, x + i, y + i);
}

#define DEF(op)                                                               \
  void q8rt_f32_v##op##_ukernel__neon(size_t n, const float *x, float *y) {   \
    size_t i = 0;                                                             \
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, op##_step(vld1q_f32(x + i))); \
    if (i < n) q8rt_f32_v##op##_ukernel__scalar(n - i, x + i, y + i);         \
  }

DEF(exp)
DEF(log)
