/* f32-vtranscend, AVX-512 (F, DQ, VL): 8 floats per step as 8 doubles (erf: 4 such side by side), the
 * last n % 8 by the scalar twin. The AVX2 variant's algorithm with mask registers: only
 * _mm512_mul_pd/_add_pd/_sub_pd/_div_pd on the values (-ffp-contract=off), the specials blended in
 * after the rounding to float. */
#include <immintrin.h>
#include <stdint.h>

#include "common/fmath.h"
#include "f32-vtranscend/f32-vtranscend.h"

#define SET(c) _mm512_set1_pd(c)
#define MUL _mm512_mul_pd
#define ADD _mm512_add_pd
#define SUB _mm512_sub_pd

static inline __attribute__((always_inline)) __m512d horner8(const double *c, int deg, __m512d x) {
  __m512d p = SET(c[deg]);
  for (int k = deg - 1; k >= 0; k--) p = ADD(MUL(p, x), SET(c[k]));
  return p;
}

/* q8rt_exp_d's scale branch for x in [-746, 710] (k clamped to the normal exponents). */
static inline __attribute__((always_inline)) __m512d exp8(__m512d x) {
  __m512d k = ADD(MUL(x, SET(Q8RT_FMATH_INV_LN2)), SET(Q8RT_FMATH_ROUND_MAGIC));
  k = SUB(k, SET(Q8RT_FMATH_ROUND_MAGIC));
  const __m512d r = SUB(SUB(x, MUL(k, SET(Q8RT_FMATH_LN2_HI))), MUL(k, SET(Q8RT_FMATH_LN2_LO)));
  const __m512d p = horner8(q8rt_fmath_rfact, 13, r);
  const __m512d kc = _mm512_min_pd(_mm512_max_pd(k, SET(-1022.0)), SET(1023.0));
  const __m512i ki = _mm512_cvtepi32_epi64(_mm512_cvtpd_epi32(kc));
  const __m512i bits = _mm512_slli_epi64(_mm512_add_epi64(ki, _mm512_set1_epi64(1023)), 52);
  return MUL(p, _mm512_castsi512_pd(bits));
}

static inline __attribute__((always_inline)) __m256 exp_step(__m256 x) {
  __m512d xd = _mm512_cvtps_pd(x);
  xd = _mm512_min_pd(_mm512_max_pd(xd, SET(-746.0)), SET(710.0));
  const __m256 f = _mm512_cvtpd_ps(exp8(xd));
  return _mm256_mask_blend_ps(_mm256_cmp_ps_mask(x, x, _CMP_UNORD_Q), f, x);
}

static inline __attribute__((always_inline)) __m256 log_step(__m256 x) {
  const __m512d xd = _mm512_cvtps_pd(x);
  const __m512i bits = _mm512_castpd_si512(xd);
  /* frexp: m = the mantissa with the exponent of 0.5, e = the biased exponent - 1022 */
  __m512d m = _mm512_castsi512_pd(_mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi64(0x000fffffffffffffll)),
                                                  _mm512_set1_epi64(0x3fe0000000000000ll)));
  __m512i eb = _mm512_srli_epi64(bits, 52);
  const __mmask8 lt = _mm512_cmp_pd_mask(m, SET(Q8RT_FMATH_SQRT_HALF), _CMP_LT_OQ);
  m = _mm512_mask_mul_pd(m, lt, m, SET(2.0));
  eb = _mm512_mask_sub_epi64(eb, lt, eb, _mm512_set1_epi64(1)); /* e -= 1 where m doubled */
  /* (double)e: eb below 2^51 in the mantissa of 1.5 * 2^52, minus that and 1022 (exact) */
  const __m512d magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const __m512d de =
      SUB(SUB(_mm512_castsi512_pd(_mm512_add_epi64(eb, _mm512_castpd_si512(magic))), magic), SET(1022.0));
  const __m512d f = SUB(m, SET(1.0));
  const __m512d s = _mm512_div_pd(f, ADD(SET(2.0), f));
  const __m512d s2 = MUL(s, s);
  const __m512d t = horner8(q8rt_fmath_rodd, 9, s2);
  const __m512d logm = ADD(MUL(SET(2.0), s), MUL(MUL(SET(2.0), s), MUL(s2, t)));
  const __m512d r = ADD(MUL(de, SET(Q8RT_FMATH_LN2_HI)), ADD(MUL(de, SET(Q8RT_FMATH_LN2_LO)), logm));
  __m256 y = _mm512_cvtpd_ps(r);
  const __m256 zero = _mm256_setzero_ps();
  y = _mm256_mask_blend_ps(_mm256_cmp_ps_mask(x, zero, _CMP_LT_OQ), y, _mm256_set1_ps(__builtin_nanf("")));
  y = _mm256_mask_blend_ps(_mm256_cmp_ps_mask(x, zero, _CMP_EQ_OQ), y, _mm256_set1_ps(-__builtin_inff()));
  y = _mm256_mask_blend_ps(_mm256_cmp_ps_mask(x, _mm256_set1_ps(__builtin_inff()), _CMP_EQ_OQ), y, x);
  return _mm256_mask_blend_ps(_mm256_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, x);
}

/* erf of nv vectors of 8 (nv <= 4) side by side: the Horner runs (up to 59 + 17 + 13 dependent
 * steps) are latency-bound, so independent vectors interleave. A lane's result does not depend on
 * which other lanes share its run: one of a lower degree restarts at its top coefficient. */
static inline __attribute__((always_inline)) void erf_vecs(int nv, const float *x, float *y) {
  __m256 xv[4];
  __m512d a[4], a2[4], r[4];
  __mmask8 small[4], mid[4], lt3[4], lt2[4];
  unsigned any_small = 0, any_mid = 0, any_ge3 = 0, any_ge2 = 0;
#pragma GCC unroll 4
  for (int u = 0; u < nv; u++) {
    xv[u] = _mm256_loadu_ps(x + 8 * u);
    a[u] = _mm512_abs_pd(_mm512_cvtps_pd(xv[u]));
    a2[u] = MUL(a[u], a[u]);
    small[u] = _mm512_cmp_pd_mask(a[u], SET(1.0), _CMP_LT_OQ);
    mid[u] = _mm512_cmp_pd_mask(a[u], SET(1.0), _CMP_GE_OQ) & _mm512_cmp_pd_mask(a[u], SET(3.92), _CMP_LT_OQ);
    lt3[u] = _mm512_cmp_pd_mask(a[u], SET(3.0), _CMP_LT_OQ);
    lt2[u] = _mm512_cmp_pd_mask(a[u], SET(2.0), _CMP_LT_OQ);
    any_small |= small[u], any_mid |= mid[u];
    any_ge3 |= mid[u] & (__mmask8)~lt3[u], any_ge2 |= mid[u] & (__mmask8)~lt2[u];
    r[u] = _mm512_setzero_pd();
  }
  if (any_mid) {
    const int top = any_ge3 ? 59 : any_ge2 ? 45 : 31;
    const double *c = q8rt_fmath_rdfact;
    __m512d z[4], p[4];
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) z[u] = MUL(SET(2.0), a2[u]), p[u] = SET(c[top]);
    for (int k = top - 1; k >= 0; k--) {
#pragma GCC unroll 4
      for (int u = 0; u < nv; u++) {
        if (k == 44 && top > 45) p[u] = _mm512_mask_blend_pd(lt3[u], p[u], SET(c[45]));
        if (k == 30 && top > 31) p[u] = _mm512_mask_blend_pd(lt2[u], p[u], SET(c[31]));
        p[u] = ADD(MUL(p[u], z[u]), SET(c[k]));
      }
    }
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) {
      const __m512d sum = MUL(a[u], p[u]);
      const __m512d e = exp8(_mm512_max_pd(SUB(_mm512_setzero_pd(), a2[u]), SET(-746.0)));
      r[u] = MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), e), sum);
    }
  }
  if (any_small) {
    const double *c = q8rt_fmath_erf_taylor;
    __m512d p[4];
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) p[u] = SET(c[17]);
    for (int k = 16; k >= 0; k--) {
#pragma GCC unroll 4
      for (int u = 0; u < nv; u++) p[u] = ADD(MUL(p[u], a2[u]), SET(c[k]));
    }
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++)
      r[u] = _mm512_mask_blend_pd(small[u], r[u], MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), a[u]), p[u]));
  }
#pragma GCC unroll 4
  for (int u = 0; u < nv; u++) {
    r[u] = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a[u], SET(3.92), _CMP_GE_OQ), r[u], SET(1.0)); /* +-1 from there */
    /* r >= 0 (+0 for x = +-0): the sign of x or'ed in is the scalar's -f */
    const __m256 v = _mm256_or_ps(_mm512_cvtpd_ps(r[u]), _mm256_and_ps(xv[u], _mm256_set1_ps(-0.0f)));
    _mm256_storeu_ps(y + 8 * u, _mm256_mask_blend_ps(_mm256_cmp_ps_mask(xv[u], xv[u], _CMP_UNORD_Q), v, xv[u]));
  }
}

/* Out of line: one copy of each Horner run (the sanitizer build compiles it in seconds). */
static __attribute__((noinline)) void erf_x4(const float *x, float *y) { erf_vecs(4, x, y); }
static __attribute__((noinline)) void erf_x1(const float *x, float *y) { erf_vecs(1, x, y); }

void q8rt_f32_verf_ukernel__avx512skx(size_t n, const float *x, float *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) erf_x4(x + i, y + i);
  for (; i + 8 <= n; i += 8) erf_x1(x + i, y + i);
  if (i < n) q8rt_f32_verf_ukernel__scalar(n - i, x + i, y + i);
}

#define DEF(op)                                                                            \
  void q8rt_f32_v##op##_ukernel__avx512skx(size_t n, const float *x, float *y) {           \
    size_t i = 0;                                                                          \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, op##_step(_mm256_loadu_ps(x + i))); \
    if (i < n) q8rt_f32_v##op##_ukernel__scalar(n - i, x + i, y + i);                      \
  }

DEF(exp)
DEF(log)
