/* f32-vtranscend, AVX-512 (F, DQ, VL): 8 floats per step as 8 doubles. exp and erf by the fast
 * paths of f32-vtranscend.h (16-entry tables in two registers, looked up with vpermt2pd; two
 * groups of 8 per loop step, their long dependent chains interleaved: ~10% faster than one; the
 * rest n % 16 by 8s through masked loads and stores), the lanes near a float rounding boundary by
 * the scalar twin. log: the AVX2 variant's algorithm with mask registers, only _mm512_mul_pd/
 * _add_pd/_sub_pd/_div_pd on the values (-ffp-contract=off), the specials blended in after the
 * rounding to float, the last n % 8 by the scalar twin. */
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

/* The lanes of a result r_f (positive doubles) within Q8RT_FMATH_FAST_MARGIN double ulps of a
 * midpoint between floats: its low 29 bits within the margin of 2^28. */
static inline __attribute__((always_inline)) __mmask8 near_tie(__m512d r) {
  const __m512i m = _mm512_and_si512(_mm512_castpd_si512(r), _mm512_set1_epi64((1 << 29) - 1));
  const __m512i d = _mm512_sub_epi64(m, _mm512_set1_epi64((1 << 28) - Q8RT_FMATH_FAST_MARGIN));
  return _mm512_cmp_epu64_mask(d, _mm512_set1_epi64(2 * Q8RT_FMATH_FAST_MARGIN), _MM_CMPINT_LE);
}

/* The lanes in bad (rare) again by the scalar twin, from a copy of x (y may be x). */
static __attribute__((noinline)) void redo(float (*fn)(float), __m256 x, unsigned bad, float *y) {
  float xs[8];
  _mm256_storeu_ps(xs, x);
  for (; bad != 0; bad &= bad - 1) y[__builtin_ctz(bad)] = fn(xs[__builtin_ctz(bad)]);
}

static inline __attribute__((always_inline)) __m256 exp_fast(__m256 x, const __m512d tab[2], __mmask8 *bad) {
  const __m512d xd = _mm512_min_pd(_mm512_max_pd(_mm512_cvtps_pd(x), SET(-104.0)), SET(89.0));
  const __m512d magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const __m512d kq = ADD(MUL(xd, SET(Q8RT_F32_VEXP_FAST_INV)), magic); /* k + 1.5 * 2^52 */
  const __m512d kd = SUB(kq, magic);
  __m512d r = _mm512_fmadd_pd(kd, SET(-Q8RT_F32_VEXP_FAST_HI), xd);
  r = _mm512_fmadd_pd(kd, SET(-Q8RT_F32_VEXP_FAST_LO), r);
  __m512d p = SET(1.0 / 120.0);
  p = _mm512_fmadd_pd(p, r, SET(1.0 / 24.0));
  p = _mm512_fmadd_pd(p, r, SET(1.0 / 6.0));
  p = _mm512_fmadd_pd(p, r, SET(0.5));
  p = _mm512_fmadd_pd(p, r, SET(1.0));
  p = _mm512_fmadd_pd(p, r, SET(1.0));
  const __m512i kb = _mm512_castpd_si512(kq); /* low 4 bits: k mod 16, the table index */
  const __m512d t = _mm512_permutex2var_pd(tab[0], kb, tab[1]);
  /* 2^floor(k / 16): (kb >> 4) - (magic's bits >> 4), magic's bits being a multiple of 16 */
  const __m512i e = _mm512_sub_epi64(_mm512_srli_epi64(kb, 4), _mm512_srli_epi64(_mm512_castpd_si512(magic), 4));
  const __m512d s = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(e, _mm512_set1_epi64(1023)), 52));
  const __m512d rf = MUL(MUL(t, p), s);
  const __mmask8 low = _mm512_cmp_pd_mask(xd, SET(Q8RT_F32_VEXP_FAST_MIN), _CMP_LT_OQ);
  const __mmask8 zero = _mm512_cmp_pd_mask(xd, SET(-104.0), _CMP_LE_OQ);
  const __mmask8 nan = _mm256_cmp_ps_mask(x, x, _CMP_UNORD_Q); /* xd is clamped: -104 for NaN */
  __mmask8 near = near_tie(rf);
  if (low) { /* results below 2^-125: boundaries at odd multiples of 2^-150 */
    const __m512d v = MUL(rf, SET(0x1p149));
    const __m512d fr = SUB(v, SUB(ADD(v, magic), magic)); /* v - round(v), |fr| <= 1/2 */
    const __m512d d = _mm512_abs_pd(SUB(SET(0.5), _mm512_abs_pd(fr)));
    near = (near & (__mmask8)~low) | (low & _mm512_cmp_pd_mask(d, MUL(v, SET(0x1p-36)), _CMP_LE_OQ));
  }
  *bad = near & (__mmask8) ~(zero | nan);
  __m256 f = _mm512_cvtpd_ps(rf);
  f = _mm256_mask_blend_ps(zero, f, _mm256_setzero_ps());
  return _mm256_mask_blend_ps(nan, f, x);
}

static inline __attribute__((always_inline)) __m256 erf_fast(__m256 x, const __m512d tab[9][2], __mmask8 *bad) {
  const __m512d a = _mm512_abs_pd(_mm512_cvtps_pd(x));
  const __m512d magic = SET(Q8RT_FMATH_ROUND_MAGIC);
  const __m512d kq = ADD(_mm512_min_pd(MUL(a, SET(4.0)), SET(15.0)), magic); /* NaN: 15 */
  const __m512i i = _mm512_castpd_si512(kq);                                 /* low 4 bits: the piece */
  const __m512d t = _mm512_fmadd_pd(SUB(kq, magic), SET(-0.25), a);
  __m512d p = _mm512_permutex2var_pd(tab[8][0], i, tab[8][1]);
#pragma GCC unroll 8
  for (int k = 7; k >= 0; k--) p = _mm512_fmadd_pd(p, t, _mm512_permutex2var_pd(tab[k][0], i, tab[k][1]));
  const __mmask8 in = _mm512_cmp_pd_mask(a, SET(3.92), _CMP_LT_OQ); /* not NaN */
  const __mmask8 tiny = _mm512_cmp_pd_mask(a, SET(0x1p-125), _CMP_LT_OQ) & _mm512_cmp_pd_mask(a, SET(0.0), _CMP_NEQ_OQ);
  *bad = (near_tie(p) & in) | tiny;
  const __m512d r = _mm512_mask_blend_pd(in, SET(1.0), p); /* +-1 from 3.92 on */
  /* r >= 0 (+0 for x = +-0): the sign of x or'ed in is the scalar's -f */
  const __m256 v = _mm256_or_ps(_mm512_cvtpd_ps(r), _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
  return _mm256_mask_blend_ps(_mm256_cmp_ps_mask(x, x, _CMP_UNORD_Q), v, x);
}

void q8rt_f32_vexp_ukernel__avx512skx(size_t n, const float *x, float *y) {
  const __m512d tab[2] = {_mm512_loadu_pd(q8rt_fmath_exp2_16), _mm512_loadu_pd(q8rt_fmath_exp2_16 + 8)};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 xa = _mm256_loadu_ps(x + i), xb = _mm256_loadu_ps(x + i + 8);
    __mmask8 bada, badb;
    const __m256 ya = exp_fast(xa, tab, &bada), yb = exp_fast(xb, tab, &badb);
    _mm256_storeu_ps(y + i, ya);
    _mm256_storeu_ps(y + i + 8, yb);
    if (__builtin_expect((bada | badb) != 0, 0)) {
      if (bada) redo(q8rt_expf, xa, bada, y + i);
      if (badb) redo(q8rt_expf, xb, badb, y + i + 8);
    }
  }
  for (; i < n; i += 8) {
    const __mmask8 m = n - i >= 8 ? 0xff : (__mmask8)((1u << (n - i)) - 1);
    const __m256 xv = _mm256_maskz_loadu_ps(m, x + i);
    __mmask8 bad;
    _mm256_mask_storeu_ps(y + i, m, exp_fast(xv, tab, &bad));
    if (__builtin_expect((bad & m) != 0, 0)) redo(q8rt_expf, xv, bad & m, y + i);
  }
}

void q8rt_f32_verf_ukernel__avx512skx(size_t n, const float *x, float *y) {
  __m512d tab[9][2];
  for (int k = 0; k < 9; k++) {
    tab[k][0] = _mm512_loadu_pd(q8rt_fmath_erf_fast[k]);
    tab[k][1] = _mm512_loadu_pd(q8rt_fmath_erf_fast[k] + 8);
  }
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 xa = _mm256_loadu_ps(x + i), xb = _mm256_loadu_ps(x + i + 8);
    __mmask8 bada, badb;
    const __m256 ya = erf_fast(xa, tab, &bada), yb = erf_fast(xb, tab, &badb);
    _mm256_storeu_ps(y + i, ya);
    _mm256_storeu_ps(y + i + 8, yb);
    if (__builtin_expect((bada | badb) != 0, 0)) {
      if (bada) redo(q8rt_erff, xa, bada, y + i);
      if (badb) redo(q8rt_erff, xb, badb, y + i + 8);
    }
  }
  for (; i < n; i += 8) {
    const __mmask8 m = n - i >= 8 ? 0xff : (__mmask8)((1u << (n - i)) - 1);
    const __m256 xv = _mm256_maskz_loadu_ps(m, x + i);
    __mmask8 bad;
    _mm256_mask_storeu_ps(y + i, m, erf_fast(xv, tab, &bad));
    if (__builtin_expect((bad & m) != 0, 0)) redo(q8rt_erff, xv, bad & m, y + i);
  }
}

void q8rt_f32_vlog_ukernel__avx512skx(size_t n, const float *x, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, log_step(_mm256_loadu_ps(x + i)));
  if (i < n) q8rt_f32_vlog_ukernel__scalar(n - i, x + i, y + i);
}

/* Elu (selu 0) and Selu (selu 1) over blocks of up to 256: the lanes that take the exp side
 * (!(x >= 0) for Elu, !(x > 0) for Selu: negatives and NaN, and Selu's zeros) packed into e[] by
 * vcompressps, exp over the packed values eight at a time, then vexpandps back into their lanes,
 * the selection by the same lane masks. Every element's operations are the twin's. */
static inline __attribute__((always_inline)) __mmask16 elu_side(__m512 x, __mmask16 lm, int selu) {
  return selu ? _mm512_mask_cmp_ps_mask(lm, x, _mm512_setzero_ps(), _CMP_NGT_UQ)
              : _mm512_mask_cmp_ps_mask(lm, x, _mm512_setzero_ps(), _CMP_NGE_UQ);
}

static inline __attribute__((always_inline)) void elu_block(size_t m, const float *x, float *y,
                                                            const q8rt_f32_velu_params *p, int selu,
                                                            const __m512d tab[2]) {
  float e[256 + 16];
  size_t c = 0;
  for (size_t i = 0; i < m; i += 16) {
    const __mmask16 lm = m - i >= 16 ? 0xffff : (__mmask16)((1u << (m - i)) - 1);
    const __m512 xv = _mm512_maskz_loadu_ps(lm, x + i);
    const __mmask16 side = elu_side(xv, lm, selu);
    _mm512_storeu_ps(e + c, _mm512_maskz_compress_ps(side, xv));
    c += (size_t)__builtin_popcount(side);
  }
  size_t j = 0;
  for (; j + 16 <= c; j += 16) { /* two independent groups a step: exp's chain is long */
    const __m256 xa = _mm256_loadu_ps(e + j), xb = _mm256_loadu_ps(e + j + 8);
    __mmask8 bada, badb;
    const __m256 ya = exp_fast(xa, tab, &bada), yb = exp_fast(xb, tab, &badb);
    _mm256_storeu_ps(e + j, ya);
    _mm256_storeu_ps(e + j + 8, yb);
    if (__builtin_expect((bada | badb) != 0, 0)) {
      if (bada) redo(q8rt_expf, xa, bada, e + j);
      if (badb) redo(q8rt_expf, xb, badb, e + j + 8);
    }
  }
  for (size_t i = j; i < c; i += 8) {
    const __mmask8 em = c - i >= 8 ? 0xff : (__mmask8)((1u << (c - i)) - 1);
    const __m256 xv = _mm256_maskz_loadu_ps(em, e + i);
    __mmask8 bad;
    _mm256_mask_storeu_ps(e + i, em, exp_fast(xv, tab, &bad));
    if (__builtin_expect((bad & em) != 0, 0)) redo(q8rt_expf, xv, bad & em, e + i);
  }
  const __m512 one = _mm512_set1_ps(1.0f), alpha = _mm512_set1_ps(p->alpha), gamma = _mm512_set1_ps(p->gamma);
  size_t k = 0;
  for (size_t i = 0; i < m; i += 16) {
    const __mmask16 lm = m - i >= 16 ? 0xffff : (__mmask16)((1u << (m - i)) - 1);
    const __m512 xv = _mm512_maskz_loadu_ps(lm, x + i);
    const __mmask16 side = elu_side(xv, lm, selu);
    const unsigned cnt = (unsigned)__builtin_popcount(side);
    const __m512 t = _mm512_maskz_expand_ps(side, _mm512_maskz_loadu_ps((__mmask16)((1u << cnt) - 1), e + k));
    k += cnt;
    __m512 r = _mm512_mul_ps(alpha, _mm512_sub_ps(t, one));
    __m512 v = xv;
    if (selu) {
      r = _mm512_mul_ps(gamma, r);
      v = _mm512_mul_ps(gamma, xv);
    }
    _mm512_mask_storeu_ps(y + i, lm, _mm512_mask_blend_ps(side, v, r));
  }
}

void q8rt_f32_velu_ukernel__avx512skx(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  const __m512d tab[2] = {_mm512_loadu_pd(q8rt_fmath_exp2_16), _mm512_loadu_pd(q8rt_fmath_exp2_16 + 8)};
  for (size_t o = 0; o < n; o += 256) elu_block(n - o < 256 ? n - o : 256, x + o, y + o, p, 0, tab);
}

void q8rt_f32_vselu_ukernel__avx512skx(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  const __m512d tab[2] = {_mm512_loadu_pd(q8rt_fmath_exp2_16), _mm512_loadu_pd(q8rt_fmath_exp2_16 + 8)};
  for (size_t o = 0; o < n; o += 256) elu_block(n - o < 256 ? n - o : 256, x + o, y + o, p, 1, tab);
}
