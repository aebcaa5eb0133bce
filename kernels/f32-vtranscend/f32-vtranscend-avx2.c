/* f32-vtranscend, AVX2 + FMA: 4 floats per step as 4 doubles, the last n % 4 by the scalar twin.
 * exp and erf by the fast paths of f32-vtranscend.h (the table entries of each lane by vgatherqpd),
 * the lanes near a float rounding boundary by the scalar twin. log: only
 * _mm256_mul_pd/_add_pd/_sub_pd/_div_pd on the values (the build's -ffp-contract=off keeps the
 * compiler from fusing them, as in fmath.c); the specials are blended in after the rounding to
 * float (cvtpd_ps rounds to nearest like the C cast). */
#include <immintrin.h>
#include <stdint.h>

#include "common/fmath.h"
#include "f32-vtranscend/f32-vtranscend.h"

#define SET(c) _mm256_set1_pd(c)
#define MUL _mm256_mul_pd
#define ADD _mm256_add_pd
#define SUB _mm256_sub_pd

static inline __attribute__((always_inline)) __m256d horner4(const double *c, int deg, __m256d x) {
  __m256d p = SET(c[deg]);
  for (int k = deg - 1; k >= 0; k--) p = ADD(MUL(p, x), SET(c[k]));
  return p;
}

static inline __attribute__((always_inline)) __m128 log_step(__m128 x) {
  const __m256d xd = _mm256_cvtps_pd(x);
  const __m256i bits = _mm256_castpd_si256(xd);
  /* frexp: m = the mantissa with the exponent of 0.5, e = the biased exponent - 1022 */
  __m256d m = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi64x(0x000fffffffffffffll)),
                                                  _mm256_set1_epi64x(0x3fe0000000000000ll)));
  __m256i eb = _mm256_srli_epi64(bits, 52);
  const __m256d lt = _mm256_cmp_pd(m, SET(Q8RT_FMATH_SQRT_HALF), _CMP_LT_OQ);
  m = _mm256_blendv_pd(m, MUL(m, SET(2.0)), lt);
  eb = _mm256_add_epi64(eb, _mm256_castpd_si256(lt)); /* e -= 1 where m doubled */
  /* (double)e: eb below 2^51 in the mantissa of 1.5 * 2^52, minus that and 1022 (exact) */
  const __m256d magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const __m256d de =
      SUB(SUB(_mm256_castsi256_pd(_mm256_add_epi64(eb, _mm256_castpd_si256(magic))), magic), SET(1022.0));
  const __m256d f = SUB(m, SET(1.0));
  const __m256d s = _mm256_div_pd(f, ADD(SET(2.0), f));
  const __m256d s2 = MUL(s, s);
  const __m256d t = horner4(q8rt_fmath_rodd, 9, s2);
  const __m256d logm = ADD(MUL(SET(2.0), s), MUL(MUL(SET(2.0), s), MUL(s2, t)));
  const __m256d r = ADD(MUL(de, SET(Q8RT_FMATH_LN2_HI)), ADD(MUL(de, SET(Q8RT_FMATH_LN2_LO)), logm));
  __m128 y = _mm256_cvtpd_ps(r);
  y = _mm_blendv_ps(y, _mm_set1_ps(__builtin_nanf("")), _mm_cmp_ps(x, _mm_setzero_ps(), _CMP_LT_OQ));
  y = _mm_blendv_ps(y, _mm_set1_ps(-__builtin_inff()), _mm_cmp_ps(x, _mm_setzero_ps(), _CMP_EQ_OQ));
  y = _mm_blendv_ps(y, x, _mm_cmp_ps(x, _mm_set1_ps(__builtin_inff()), _CMP_EQ_OQ));
  return _mm_blendv_ps(y, x, _mm_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* The lanes (bits 0-3) of a result r_f (positive doubles) within Q8RT_FMATH_FAST_MARGIN double
 * ulps of a midpoint between floats: its low 29 bits within the margin of 2^28. */
static inline __attribute__((always_inline)) int near_tie(__m256d r) {
  const __m256i m = _mm256_and_si256(_mm256_castpd_si256(r), _mm256_set1_epi64x((1 << 29) - 1));
  const __m256i d = _mm256_sub_epi64(m, _mm256_set1_epi64x((1 << 28) - Q8RT_FMATH_FAST_MARGIN));
  const __m256i out = _mm256_or_si256(_mm256_cmpgt_epi64(d, _mm256_set1_epi64x(2 * Q8RT_FMATH_FAST_MARGIN)),
                                      _mm256_cmpgt_epi64(_mm256_setzero_si256(), d));
  return ~_mm256_movemask_pd(_mm256_castsi256_pd(out)) & 15;
}

/* The lanes in bad (rare) again by the scalar twin, from a copy of x (y may be x). */
static __attribute__((noinline)) void redo(float (*fn)(float), __m128 x, unsigned bad, float *y) {
  float xs[4];
  _mm_storeu_ps(xs, x);
  for (; bad != 0; bad &= bad - 1) y[__builtin_ctz(bad)] = fn(xs[__builtin_ctz(bad)]);
}

static inline __attribute__((always_inline)) __m128 exp_fast(__m128 x, int *bad) {
  const __m256d xd = _mm256_min_pd(_mm256_max_pd(_mm256_cvtps_pd(x), SET(-104.0)), SET(89.0)); /* NaN: -104 */
  const __m256d magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const __m256d kq = ADD(MUL(xd, SET(Q8RT_F32_VEXP_FAST_INV)), magic); /* k + 1.5 * 2^52 */
  const __m256d kd = SUB(kq, magic);
  __m256d r = _mm256_fmadd_pd(kd, SET(-Q8RT_F32_VEXP_FAST_HI), xd);
  r = _mm256_fmadd_pd(kd, SET(-Q8RT_F32_VEXP_FAST_LO), r);
  __m256d p = SET(1.0 / 120.0);
  p = _mm256_fmadd_pd(p, r, SET(1.0 / 24.0));
  p = _mm256_fmadd_pd(p, r, SET(1.0 / 6.0));
  p = _mm256_fmadd_pd(p, r, SET(0.5));
  p = _mm256_fmadd_pd(p, r, SET(1.0));
  p = _mm256_fmadd_pd(p, r, SET(1.0));
  const __m256i kb = _mm256_castpd_si256(kq); /* low 4 bits: k mod 16, the table index */
  const __m256d t = _mm256_i64gather_pd(q8rt_fmath_exp2_16, _mm256_and_si256(kb, _mm256_set1_epi64x(15)), 8);
  /* 2^floor(k / 16): (kb >> 4) - (magic's bits >> 4), magic's bits being a multiple of 16 */
  const __m256i e = _mm256_sub_epi64(_mm256_srli_epi64(kb, 4), _mm256_srli_epi64(_mm256_castpd_si256(magic), 4));
  const __m256d s = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(1023)), 52));
  const __m256d rf = MUL(MUL(t, p), s);
  const __m256d lowm = _mm256_cmp_pd(xd, SET(Q8RT_F32_VEXP_FAST_MIN), _CMP_LT_OQ);
  const int low = _mm256_movemask_pd(lowm);
  const __m128 zero = _mm_cmp_ps(x, _mm_set1_ps(-104.0f), _CMP_LE_OQ);
  const __m128 nan = _mm_cmp_ps(x, x, _CMP_UNORD_Q);
  int near = near_tie(rf);
  if (low) { /* results below 2^-125: boundaries at odd multiples of 2^-150 */
    const __m256d v = MUL(rf, SET(0x1p149));
    const __m256d fr = SUB(v, SUB(ADD(v, magic), magic)); /* v - round(v), |fr| <= 1/2 */
    const __m256d d = _mm256_andnot_pd(SET(-0.0), SUB(SET(0.5), _mm256_andnot_pd(SET(-0.0), fr)));
    near = (near & ~low) | (low & _mm256_movemask_pd(_mm256_cmp_pd(d, MUL(v, SET(0x1p-36)), _CMP_LE_OQ)));
  }
  *bad = near & ~_mm_movemask_ps(_mm_or_ps(zero, nan));
  const __m128 f = _mm_andnot_ps(zero, _mm256_cvtpd_ps(rf));
  return _mm_blendv_ps(f, x, nan);
}

static inline __attribute__((always_inline)) __m128 erf_fast(__m128 x, int *bad) {
  const __m256d a = _mm256_andnot_pd(SET(-0.0), _mm256_cvtps_pd(x));
  const __m256d magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const __m256d kq = ADD(_mm256_min_pd(MUL(a, SET(4.0)), SET(15.0)), magic);           /* NaN: 15 */
  const __m256i i = _mm256_and_si256(_mm256_castpd_si256(kq), _mm256_set1_epi64x(15)); /* the piece */
  const __m256d t = _mm256_fmadd_pd(SUB(kq, magic), SET(-0.25), a);
  __m256d p = _mm256_i64gather_pd(q8rt_fmath_erf_fast[8], i, 8);
#pragma GCC unroll 8
  for (int k = 7; k >= 0; k--) p = _mm256_fmadd_pd(p, t, _mm256_i64gather_pd(q8rt_fmath_erf_fast[k], i, 8));
  const __m256d in = _mm256_cmp_pd(a, SET(3.92), _CMP_LT_OQ); /* not NaN */
  const __m256d tiny =
      _mm256_and_pd(_mm256_cmp_pd(a, SET(0x1p-125), _CMP_LT_OQ), _mm256_cmp_pd(a, SET(0.0), _CMP_NEQ_OQ));
  *bad = (near_tie(p) & _mm256_movemask_pd(in)) | _mm256_movemask_pd(tiny);
  const __m256d r = _mm256_blendv_pd(SET(1.0), p, in); /* +-1 from 3.92 on */
  /* r >= 0 (+0 for x = +-0): the sign of x or'ed in is the scalar's -f */
  const __m128 v = _mm_or_ps(_mm256_cvtpd_ps(r), _mm_and_ps(x, _mm_set1_ps(-0.0f)));
  return _mm_blendv_ps(v, x, _mm_cmp_ps(x, x, _CMP_UNORD_Q));
}

#define DEF_FAST(op)                                                                   \
  void q8rt_f32_v##op##_ukernel__avx2(size_t n, const float *x, float *y) {            \
    size_t i = 0;                                                                      \
    for (; i + 4 <= n; i += 4) {                                                       \
      const __m128 xv = _mm_loadu_ps(x + i);                                           \
      int bad;                                                                         \
      _mm_storeu_ps(y + i, op##_fast(xv, &bad));                                       \
      if (__builtin_expect(bad != 0, 0)) redo(q8rt_##op##f, xv, (unsigned)bad, y + i); \
    }                                                                                  \
    if (i < n) q8rt_f32_v##op##_ukernel__scalar(n - i, x + i, y + i);                  \
  }

DEF_FAST(exp)
DEF_FAST(erf)

void q8rt_f32_vlog_ukernel__avx2(size_t n, const float *x, float *y) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, log_step(_mm_loadu_ps(x + i)));
  if (i < n) q8rt_f32_vlog_ukernel__scalar(n - i, x + i, y + i);
}

/* Elu (selu 0) and Selu (selu 1): four lanes a step, exp on all four unless all take the x side,
 * the selection by the comparison's lane mask (ordered: NaN takes the exp side, as in the twin). */
static inline __attribute__((always_inline)) void elu_span(size_t n, const float *x, float *y,
                                                           const q8rt_f32_velu_params *p, int selu) {
  const __m128 one = _mm_set1_ps(1.0f), alpha = _mm_set1_ps(p->alpha), gamma = _mm_set1_ps(p->gamma);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 xv = _mm_loadu_ps(x + i);
    const __m128 pos = selu ? _mm_cmpgt_ps(xv, _mm_setzero_ps()) : _mm_cmpge_ps(xv, _mm_setzero_ps());
    const __m128 v = selu ? _mm_mul_ps(gamma, xv) : xv;
    if (_mm_movemask_ps(pos) == 15) {
      _mm_storeu_ps(y + i, v);
      continue;
    }
    int bad;
    __m128 t = exp_fast(xv, &bad);
    if (__builtin_expect(bad != 0, 0)) {
      float ts[4];
      _mm_storeu_ps(ts, t);
      redo(q8rt_expf, xv, (unsigned)bad, ts);
      t = _mm_loadu_ps(ts);
    }
    __m128 r = _mm_mul_ps(alpha, _mm_sub_ps(t, one));
    if (selu) r = _mm_mul_ps(gamma, r);
    _mm_storeu_ps(y + i, _mm_blendv_ps(r, v, pos));
  }
  if (i < n) {
    if (selu) {
      q8rt_f32_vselu_ukernel__scalar(n - i, x + i, y + i, p);
    } else {
      q8rt_f32_velu_ukernel__scalar(n - i, x + i, y + i, p);
    }
  }
}

void q8rt_f32_velu_ukernel__avx2(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  elu_span(n, x, y, p, 0);
}

void q8rt_f32_vselu_ukernel__avx2(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  elu_span(n, x, y, p, 1);
}
