/* f32-vunary, AVX2: 8 elements per step, the last n % 8 by the scalar twin of the same function.
 * The twin's compare-and-selects map onto vmaxps/vminps with the operand order that keeps its NaN
 * and ±0 results (vmaxps(s1, s2) = s1 > s2 ? s1 : s2): x < lo ? lo : x is vmaxps(lo, x),
 * hi < v ? hi : v is vminps(hi, v). fmaf is vfmadd (one rounding); no other fusion. */
#include <immintrin.h>

#include "f32-vunary/f32-vunary.h"
#include "q8rt-math.h"

typedef struct consts {
  __m256 lo, hi, alpha, beta;
} consts;

static inline __attribute__((always_inline)) __m256 hsigmoid8(__m256 v, const consts *k) {
  __m256 t = _mm256_add_ps(_mm256_mul_ps(k->alpha, v), k->beta);
  t = _mm256_min_ps(_mm256_set1_ps(1.0f), t);
  return _mm256_max_ps(_mm256_setzero_ps(), t);
}

#define FMA(p, x2, c) _mm256_fmadd_ps(p, x2, _mm256_set1_ps(c))

static inline __attribute__((always_inline)) __m256 op8(int op, __m256 x, const consts *k) {
  switch (op) {
    case Q8RT_F32_VCLAMP: return _mm256_min_ps(k->hi, _mm256_max_ps(k->lo, x));
    case Q8RT_F32_VNEG: return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f));
    case Q8RT_F32_VABS: return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    case Q8RT_F32_VSQRT: return _mm256_sqrt_ps(x);
    case Q8RT_F32_VLRELU: {
      const __m256 ge = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
      return _mm256_blendv_ps(_mm256_mul_ps(k->alpha, x), x, ge);
    }
    case Q8RT_F32_VHSIGMOID: return hsigmoid8(x, k);
    case Q8RT_F32_VHSWISH: return _mm256_mul_ps(x, hsigmoid8(x, k));
    case Q8RT_F32_VSIGMOID: {
      __m256 v = _mm256_max_ps(_mm256_set1_ps(-18.0f), x);
      v = _mm256_min_ps(_mm256_set1_ps(18.0f), v);
      const __m256 x2 = _mm256_mul_ps(v, v);
      __m256 p = _mm256_set1_ps(Q8RT_MLAS_LOGISTIC_P0);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P1);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P2);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P3);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P4);
      p = _mm256_mul_ps(p, v);
      __m256 q = _mm256_set1_ps(Q8RT_MLAS_LOGISTIC_Q0);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q1);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q2);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q3);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q4);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q5);
      __m256 r = _mm256_add_ps(_mm256_div_ps(p, q), _mm256_set1_ps(0.5f));
      r = _mm256_max_ps(_mm256_setzero_ps(), r);
      return _mm256_min_ps(_mm256_set1_ps(1.0f), r);
    }
    default: { /* Q8RT_F32_VTANH */
      __m256 v = _mm256_max_ps(_mm256_set1_ps(-9.0f), x);
      v = _mm256_min_ps(_mm256_set1_ps(9.0f), v);
      const __m256 x2 = _mm256_mul_ps(v, v);
      __m256 p = _mm256_set1_ps(Q8RT_MLAS_TANH_P0);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P1);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P2);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P3);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P4);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P5);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P6);
      p = _mm256_mul_ps(p, v);
      __m256 q = _mm256_set1_ps(Q8RT_MLAS_TANH_Q0);
      q = FMA(q, x2, Q8RT_MLAS_TANH_Q1);
      q = FMA(q, x2, Q8RT_MLAS_TANH_Q2);
      q = FMA(q, x2, Q8RT_MLAS_TANH_Q3);
      return _mm256_div_ps(p, q);
    }
  }
}

static inline __attribute__((always_inline)) void vun(int op, size_t n, const float *x, float *y,
                                                      const q8rt_f32_vunary_params *p,
                                                      q8rt_f32_vunary_ukernel_fn twin) {
  const consts k = {_mm256_set1_ps(p->lo), _mm256_set1_ps(p->hi), _mm256_set1_ps(p->alpha), _mm256_set1_ps(p->beta)};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, op8(op, _mm256_loadu_ps(x + i), &k));
  if (i < n) twin(n - i, x + i, y + i, p);
}

#define DEF(op, id)                                                                                          \
  void q8rt_f32_v##op##_ukernel__avx2(size_t n, const float *x, float *y, const q8rt_f32_vunary_params *p) { \
    vun(id, n, x, y, p, q8rt_f32_v##op##_ukernel__scalar);                                                   \
  }

DEF(clamp, Q8RT_F32_VCLAMP)
DEF(neg, Q8RT_F32_VNEG)
DEF(abs, Q8RT_F32_VABS)
DEF(sqrt, Q8RT_F32_VSQRT)
DEF(lrelu, Q8RT_F32_VLRELU)
DEF(hsigmoid, Q8RT_F32_VHSIGMOID)
DEF(hswish, Q8RT_F32_VHSWISH)
DEF(sigmoid, Q8RT_F32_VSIGMOID)
DEF(tanh, Q8RT_F32_VTANH)
