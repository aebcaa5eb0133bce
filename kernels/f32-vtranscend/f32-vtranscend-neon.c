/* f32-vtranscend, AArch64 NEON: 4 floats per step as two float64x2, the last n % 4 by the scalar
 * twin. exp and erf by the fast paths of f32-vtranscend.h (vfmaq_f64, the fused operations the
 * x86 variants use in the same order; each lane's table entries loaded by its index), the lanes
 * near a float rounding boundary by the scalar twin. log: only vmulq/vaddq/vsubq/vdivq_f64 on the
 * values (the build's -ffp-contract=off keeps GCC from fusing them into fmla, as in fmath.c); the
 * specials are blended in after the rounding to float (fcvtn rounds to nearest like the C cast). */
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

/* two double halves of 4 floats in, 4 floats out */
#define WIDEN(x) float64x2_t lo = vcvt_f64_f32(vget_low_f32(x)), hi = vcvt_high_f64_f32(x)
#define NARROW(lo, hi) vcvt_high_f32_f64(vcvt_f32_f64(lo), hi)

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

/* The lanes of a result r_f (positive doubles) within Q8RT_FMATH_FAST_MARGIN double ulps of a
 * midpoint between floats: its low 29 bits within the margin of 2^28. */
static inline __attribute__((always_inline)) uint64x2_t near_tie(float64x2_t r) {
  const uint64x2_t m = vandq_u64(vreinterpretq_u64_f64(r), vdupq_n_u64((1u << 29) - 1));
  const uint64x2_t d = vsubq_u64(m, vdupq_n_u64((1u << 28) - Q8RT_FMATH_FAST_MARGIN));
  return vcleq_u64(d, vdupq_n_u64(2 * Q8RT_FMATH_FAST_MARGIN));
}

/* tab[i] of each lane's index i (the low 4 bits of i's lane) */
static inline __attribute__((always_inline)) float64x2_t lookup(const double *tab, uint64x2_t i) {
  return vcombine_f64(vld1_f64(tab + (vgetq_lane_u64(i, 0) & 15)), vld1_f64(tab + (vgetq_lane_u64(i, 1) & 15)));
}

#define NARROW_MASK(lo, hi) vcombine_u32(vmovn_u64(lo), vmovn_u64(hi))

/* The lanes in bad (rare) again by the scalar twin, from a copy of x (y may be x). */
static __attribute__((noinline)) void redo(float (*fn)(float), float32x4_t x, uint32x4_t bad, float *y) {
  float xs[4];
  uint32_t b[4];
  vst1q_f32(xs, x);
  vst1q_u32(b, bad);
  for (int j = 0; j < 4; j++) {
    if (b[j] != 0) y[j] = fn(xs[j]);
  }
}

/* exp's r_f for xd in [-104, 89], and the lanes to redo */
static inline __attribute__((always_inline)) float64x2_t exp_half(float64x2_t xd, uint64x2_t *near) {
  const float64x2_t magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const float64x2_t kq = ADD(MUL(xd, SET(Q8RT_F32_VEXP_FAST_INV)), magic); /* k + 1.5 * 2^52 */
  const float64x2_t kd = SUB(kq, magic);
  float64x2_t r = vfmaq_f64(xd, kd, SET(-Q8RT_F32_VEXP_FAST_HI));
  r = vfmaq_f64(r, kd, SET(-Q8RT_F32_VEXP_FAST_LO));
  float64x2_t p = SET(1.0 / 120.0);
  p = vfmaq_f64(SET(1.0 / 24.0), p, r);
  p = vfmaq_f64(SET(1.0 / 6.0), p, r);
  p = vfmaq_f64(SET(0.5), p, r);
  p = vfmaq_f64(SET(1.0), p, r);
  p = vfmaq_f64(SET(1.0), p, r);
  const uint64x2_t kb = vreinterpretq_u64_f64(kq); /* low 4 bits: k mod 16, the table index */
  const float64x2_t t = lookup(q8rt_fmath_exp2_16, kb);
  /* 2^floor(k / 16): (kb >> 4) - (magic's bits >> 4), magic's bits being a multiple of 16 */
  const uint64x2_t e = vsubq_u64(vshrq_n_u64(kb, 4), vshrq_n_u64(vreinterpretq_u64_f64(magic), 4));
  const float64x2_t s = vreinterpretq_f64_u64(vshlq_n_u64(vaddq_u64(e, vdupq_n_u64(1023)), 52));
  const float64x2_t rf = MUL(MUL(t, p), s);
  const uint64x2_t low = vcltq_f64(xd, SET(Q8RT_F32_VEXP_FAST_MIN));
  *near = near_tie(rf);
  if (vmaxvq_u32(vreinterpretq_u32_u64(low)) != 0) { /* results below 2^-125: boundaries at odd multiples of 2^-150 */
    const float64x2_t v = MUL(rf, SET(0x1p149));
    const float64x2_t fr = SUB(v, SUB(ADD(v, magic), magic)); /* v - round(v), |fr| <= 1/2 */
    const float64x2_t d = vabsq_f64(SUB(SET(0.5), vabsq_f64(fr)));
    *near = vbslq_u64(low, vcleq_f64(d, MUL(v, SET(0x1p-36))), *near);
  }
  return rf;
}

static inline __attribute__((always_inline)) float32x4_t exp_fast(float32x4_t x, uint32x4_t *bad) {
  WIDEN(x);
  uint64x2_t nlo, nhi;
  /* clamped to [-104, 89] (NaN: -104, vmaxnm as x86's maxpd) */
  const float64x2_t rlo = exp_half(vminnmq_f64(vmaxnmq_f64(lo, SET(-104.0)), SET(89.0)), &nlo);
  const float64x2_t rhi = exp_half(vminnmq_f64(vmaxnmq_f64(hi, SET(-104.0)), SET(89.0)), &nhi);
  const uint32x4_t zero = vcleq_f32(x, vdupq_n_f32(-104.0f));
  const uint32x4_t num = vceqq_f32(x, x);
  *bad = vandq_u32(vbicq_u32(NARROW_MASK(nlo, nhi), zero), num);
  const float32x4_t f = vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(NARROW(rlo, rhi)), zero));
  return vbslq_f32(num, f, x); /* NaN: x */
}

static inline __attribute__((always_inline)) float64x2_t erf_half(float64x2_t a, uint64x2_t *bad) {
  const float64x2_t magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const float64x2_t kq = ADD(vminnmq_f64(MUL(a, SET(4.0)), SET(15.0)), magic); /* NaN: 15 */
  const uint64x2_t i = vreinterpretq_u64_f64(kq);                              /* low 4 bits: the piece */
  const float64x2_t t = vfmaq_f64(a, SUB(kq, magic), SET(-0.25));
  float64x2_t p = lookup(q8rt_fmath_erf_fast[8], i);
#pragma GCC unroll 8
  for (int k = 7; k >= 0; k--) p = vfmaq_f64(lookup(q8rt_fmath_erf_fast[k], i), p, t);
  const uint64x2_t in = vcltq_f64(a, SET(3.92)); /* not NaN */
  const uint64x2_t tiny = vandq_u64(vcltq_f64(a, SET(0x1p-125)), vcgtq_f64(a, SET(0.0)));
  *bad = vorrq_u64(vandq_u64(near_tie(p), in), tiny);
  return vbslq_f64(in, p, SET(1.0)); /* +-1 from 3.92 on */
}

static inline __attribute__((always_inline)) float32x4_t erf_fast(float32x4_t x, uint32x4_t *bad) {
  WIDEN(x);
  uint64x2_t blo, bhi;
  const float64x2_t rlo = erf_half(vabsq_f64(lo), &blo), rhi = erf_half(vabsq_f64(hi), &bhi);
  *bad = NARROW_MASK(blo, bhi);
  /* r >= 0 (+0 for x = +-0): the sign of x or'ed in is the scalar's -f */
  const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
  const float32x4_t v = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(NARROW(rlo, rhi)), sign));
  return vbslq_f32(vceqq_f32(x, x), v, x); /* NaN: x */
}

#define DEF_FAST(op)                                                                     \
  void q8rt_f32_v##op##_ukernel__neon(size_t n, const float *x, float *y) {              \
    size_t i = 0;                                                                        \
    for (; i + 4 <= n; i += 4) {                                                         \
      const float32x4_t xv = vld1q_f32(x + i);                                           \
      uint32x4_t bad;                                                                    \
      vst1q_f32(y + i, op##_fast(xv, &bad));                                             \
      if (__builtin_expect(vmaxvq_u32(bad) != 0, 0)) redo(q8rt_##op##f, xv, bad, y + i); \
    }                                                                                    \
    if (i < n) q8rt_f32_v##op##_ukernel__scalar(n - i, x + i, y + i);                    \
  }

DEF_FAST(exp)
DEF_FAST(erf)

void q8rt_f32_vlog_ukernel__neon(size_t n, const float *x, float *y) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, log_step(vld1q_f32(x + i)));
  if (i < n) q8rt_f32_vlog_ukernel__scalar(n - i, x + i, y + i);
}

/* Elu (selu 0) and Selu (selu 1): four lanes a step, exp on all four unless all take the x side,
 * the selection by the comparison's lane mask (NaN compares false: the exp side, as in the twin). */
static inline __attribute__((always_inline)) void elu_span(size_t n, const float *x, float *y,
                                                           const q8rt_f32_velu_params *p, int selu) {
  const float32x4_t one = vdupq_n_f32(1.0f), alpha = vdupq_n_f32(p->alpha), gamma = vdupq_n_f32(p->gamma);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t xv = vld1q_f32(x + i);
    const uint32x4_t pos = selu ? vcgtq_f32(xv, vdupq_n_f32(0.0f)) : vcgeq_f32(xv, vdupq_n_f32(0.0f));
    const float32x4_t v = selu ? vmulq_f32(gamma, xv) : xv;
    if (vminvq_u32(pos) != 0) {
      vst1q_f32(y + i, v);
      continue;
    }
    uint32x4_t bad;
    float32x4_t t = exp_fast(xv, &bad);
    if (__builtin_expect(vmaxvq_u32(bad) != 0, 0)) {
      float ts[4];
      vst1q_f32(ts, t);
      redo(q8rt_expf, xv, bad, ts);
      t = vld1q_f32(ts);
    }
    float32x4_t r = vmulq_f32(alpha, vsubq_f32(t, one));
    if (selu) r = vmulq_f32(gamma, r);
    vst1q_f32(y + i, vbslq_f32(pos, v, r));
  }
  if (i < n) {
    if (selu) {
      q8rt_f32_vselu_ukernel__scalar(n - i, x + i, y + i, p);
    } else {
      q8rt_f32_velu_ukernel__scalar(n - i, x + i, y + i, p);
    }
  }
}

void q8rt_f32_velu_ukernel__neon(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  elu_span(n, x, y, p, 0);
}

void q8rt_f32_vselu_ukernel__neon(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  elu_span(n, x, y, p, 1);
}
