/* f32-vtranscend, AVX2: 4 floats per step as 4 doubles (erf: 4 such side by side), the
 * last n % 4 by the scalar twin. Only
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

/* q8rt_exp_d's scale branch for x in [-746, 710] (k clamped to the normal exponents). */
static inline __attribute__((always_inline)) __m256d exp4(__m256d x) {
  __m256d k = ADD(MUL(x, SET(Q8RT_FMATH_INV_LN2)), SET(Q8RT_FMATH_ROUND_MAGIC));
  k = SUB(k, SET(Q8RT_FMATH_ROUND_MAGIC));
  const __m256d r = SUB(SUB(x, MUL(k, SET(Q8RT_FMATH_LN2_HI))), MUL(k, SET(Q8RT_FMATH_LN2_LO)));
  const __m256d p = horner4(q8rt_fmath_rfact, 13, r);
  const __m256d kc = _mm256_min_pd(_mm256_max_pd(k, SET(-1022.0)), SET(1023.0));
  const __m256i ki = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(kc));
  const __m256i bits = _mm256_slli_epi64(_mm256_add_epi64(ki, _mm256_set1_epi64x(1023)), 52);
  return MUL(p, _mm256_castsi256_pd(bits));
}

static inline __attribute__((always_inline)) __m128 exp_step(__m128 x) {
  __m256d xd = _mm256_cvtps_pd(x);
  xd = _mm256_min_pd(_mm256_max_pd(xd, SET(-746.0)), SET(710.0));
  const __m128 f = _mm256_cvtpd_ps(exp4(xd));
  return _mm_blendv_ps(f, x, _mm_cmp_ps(x, x, _CMP_UNORD_Q));
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

/* erf of nv vectors of 4 (nv <= 4) side by side: the Horner runs (up to 59 + 17 + 13 dependent
 * steps) are latency-bound, so independent vectors interleave. A lane's result does not depend on
 * which other lanes share its run: one of a lower degree restarts at its top coefficient. */
static inline __attribute__((always_inline)) void erf_vecs(int nv, const float *x, float *y) {
  __m128 xv[4];
  __m256d a[4], a2[4], r[4], small[4], lt3[4], lt2[4];
  int any_small = 0, any_mid = 0, any_ge3 = 0, any_ge2 = 0;
#pragma GCC unroll 4
  for (int u = 0; u < nv; u++) {
    xv[u] = _mm_loadu_ps(x + 4 * u);
    a[u] = _mm256_andnot_pd(SET(-0.0), _mm256_cvtps_pd(xv[u]));
    a2[u] = MUL(a[u], a[u]);
    small[u] = _mm256_cmp_pd(a[u], SET(1.0), _CMP_LT_OQ);
    const __m256d mid =
        _mm256_and_pd(_mm256_cmp_pd(a[u], SET(1.0), _CMP_GE_OQ), _mm256_cmp_pd(a[u], SET(3.92), _CMP_LT_OQ));
    lt3[u] = _mm256_cmp_pd(a[u], SET(3.0), _CMP_LT_OQ);
    lt2[u] = _mm256_cmp_pd(a[u], SET(2.0), _CMP_LT_OQ);
    any_small |= _mm256_movemask_pd(small[u]), any_mid |= _mm256_movemask_pd(mid);
    any_ge3 |= _mm256_movemask_pd(_mm256_andnot_pd(lt3[u], mid));
    any_ge2 |= _mm256_movemask_pd(_mm256_andnot_pd(lt2[u], mid));
    r[u] = _mm256_setzero_pd();
  }
  if (any_mid) {
    const int top = any_ge3 ? 59 : any_ge2 ? 45 : 31;
    const double *c = q8rt_fmath_rdfact;
    __m256d z[4], p[4];
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) z[u] = MUL(SET(2.0), a2[u]), p[u] = SET(c[top]);
    for (int k = top - 1; k >= 0; k--) {
#pragma GCC unroll 4
      for (int u = 0; u < nv; u++) {
        if (k == 44 && top > 45) p[u] = _mm256_blendv_pd(p[u], SET(c[45]), lt3[u]);
        if (k == 30 && top > 31) p[u] = _mm256_blendv_pd(p[u], SET(c[31]), lt2[u]);
        p[u] = ADD(MUL(p[u], z[u]), SET(c[k]));
      }
    }
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) {
      const __m256d sum = MUL(a[u], p[u]);
      const __m256d e = exp4(_mm256_max_pd(SUB(_mm256_setzero_pd(), a2[u]), SET(-746.0)));
      r[u] = MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), e), sum);
    }
  }
  if (any_small) {
    const double *c = q8rt_fmath_erf_taylor;
    __m256d p[4];
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++) p[u] = SET(c[17]);
    for (int k = 16; k >= 0; k--) {
#pragma GCC unroll 4
      for (int u = 0; u < nv; u++) p[u] = ADD(MUL(p[u], a2[u]), SET(c[k]));
    }
#pragma GCC unroll 4
    for (int u = 0; u < nv; u++)
      r[u] = _mm256_blendv_pd(r[u], MUL(MUL(SET(Q8RT_FMATH_2_SQRTPI), a[u]), p[u]), small[u]);
  }
#pragma GCC unroll 4
  for (int u = 0; u < nv; u++) {
    r[u] = _mm256_blendv_pd(r[u], SET(1.0), _mm256_cmp_pd(a[u], SET(3.92), _CMP_GE_OQ)); /* +-1 from there on */
    /* r >= 0 (+0 for x = +-0): the sign of x or'ed in is the scalar's -f */
    const __m128 v = _mm_or_ps(_mm256_cvtpd_ps(r[u]), _mm_and_ps(xv[u], _mm_set1_ps(-0.0f)));
    _mm_storeu_ps(y + 4 * u, _mm_blendv_ps(v, xv[u], _mm_cmp_ps(xv[u], xv[u], _CMP_UNORD_Q)));
  }
}

/* Out of line: one copy of each Horner run (the sanitizer build compiles it in seconds). */
static __attribute__((noinline)) void erf_x4(const float *x, float *y) { erf_vecs(4, x, y); }
static __attribute__((noinline)) void erf_x1(const float *x, float *y) { erf_vecs(1, x, y); }

void q8rt_f32_verf_ukernel__avx2(size_t n, const float *x, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) erf_x4(x + i, y + i);
  for (; i + 4 <= n; i += 4) erf_x1(x + i, y + i);
  if (i < n) q8rt_f32_verf_ukernel__scalar(n - i, x + i, y + i);
}

#define DEF(op)                                                                      \
  void q8rt_f32_v##op##_ukernel__avx2(size_t n, const float *x, float *y) {          \
    size_t i = 0;                                                                    \
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, op##_step(_mm_loadu_ps(x + i))); \
    if (i < n) q8rt_f32_v##op##_ukernel__scalar(n - i, x + i, y + i);                \
  }

DEF(exp)
DEF(log)
