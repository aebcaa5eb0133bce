/* f32-vtranscend, AArch64 NEON: 4 floats per step as two float64x2, the last n % 4 by the scalar
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

/* Out of line: the 59-step Horner run stays one copy (the sanitizer build compiles it in seconds). */
static __attribute__((noinline)) float64x2_t erf_half(float64x2_t xd) {
  const float64x2_t a = vabsq_f64(xd);
  const float64x2_t a2 = MUL(a, a);
  const uint64x2_t small = vcltq_f64(a, SET(1.0));
  const uint64x2_t mid = vandq_u64(vcgeq_f64(a, SET(1.0)), vcltq_f64(a, SET(3.92)));
  float64x2_t r = SET(0.0);
  if (vmaxvq_u32(vreinterpretq_u32_u64(mid))) {
    const uint64x2_t lt3 = vcltq_f64(a, SET(3.0)), lt2 = vcltq_f64(a, SET(2.0));
    const int top = vmaxvq_u32(vreinterpretq_u32_u64(vbicq_u64(mid, lt3)))   ? 59
                    : vmaxvq_u32(vreinterpretq_u32_u64(vbicq_u64(mid, lt2))) ? 45
                                                                             : 31;
    const double *c = q8rt_fmath_rdfact;
    const float64x2_t z = MUL(SET(2.0), a2);
    float64x2_t p = SET(c[top]);
    for (int k = top - 1; k >= 0; k--) {
      if (k == 44 && top > 45) p = vbslq_f64(lt3, SET(c[45]), p);
      if (k == 30 && top > 31) p = vbslq_f64(lt2, SET(c[31]), p);
      p = ADD(MUL(p, z), SET(c[k]));
    }
    const float64x2_t sum = MUL(a, p);
    const float64x2_t e = exp2v(vmaxq_f64(SUB(SET(0.0), a2), SET(-746.0)));
    r = MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), e), sum);
  }
  if (vmaxvq_u32(vreinterpretq_u32_u64(small))) {
    const float64x2_t p = horner2(q8rt_fmath_erf_taylor, 17, a2);
    r = vbslq_f64(small, MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), a), p), r);
  }
  return vbslq_f64(vcgeq_f64(a, SET(3.92)), SET(1.0), r); /* +-1 from there on */
}

static inline __attribute__((always_inline)) float32x4_t erf_step(float32x4_t x) {
  WIDEN(x);
  /* r >= 0 (+0 for x = +-0): the sign of x or'ed in is the scalar's -f */
  const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
  const float32x4_t y =
      vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(NARROW(erf_half(lo), erf_half(hi))), sign));
  return vbslq_f32(vceqq_f32(x, x), y, x); /* NaN: x */
}

#define DEF(op)                                                               \
  void q8rt_f32_v##op##_ukernel__neon(size_t n, const float *x, float *y) {   \
    size_t i = 0;                                                             \
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, op##_step(vld1q_f32(x + i))); \
    if (i < n) q8rt_f32_v##op##_ukernel__scalar(n - i, x + i, y + i);         \
  }

DEF(exp)
DEF(log)
DEF(erf)
