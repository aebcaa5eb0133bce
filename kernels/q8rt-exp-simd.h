/* q8rt_exp_nonpositive (q8rt-math.h) on vectors, for the kernels of the ISA the file is compiled
 * for: its fmaf steps as fused multiply-adds (vfmadd, fmla), 2^n built by a shift of the biased
 * integer, 0 below the cutoff. Every lane gives the scalar function's bits. f32-softmax and
 * f32-softmax-strided use them. */
#ifndef Q8RT_EXP_SIMD_H
#define Q8RT_EXP_SIMD_H

#include "q8rt-math.h"

#if defined(__AVX512F__)
#include <immintrin.h>
static inline __attribute__((always_inline)) __m512 q8rt_exp16_avx512(__m512 x) {
  __m512 n = _mm512_fmadd_ps(x, _mm512_set1_ps(Q8RT_EXP_LOG2E), _mm512_set1_ps(Q8RT_EXP_MAGIC_BIAS));
  const __m512 s = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(n), 23));
  n = _mm512_sub_ps(n, _mm512_set1_ps(Q8RT_EXP_MAGIC_BIAS));
  __m512 t = _mm512_fmadd_ps(n, _mm512_set1_ps(Q8RT_EXP_MINUS_LN2_HI), x);
  t = _mm512_fmadd_ps(n, _mm512_set1_ps(Q8RT_EXP_MINUS_LN2_LO), t);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(Q8RT_EXP_C5), t, _mm512_set1_ps(Q8RT_EXP_C4));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(Q8RT_EXP_C3));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(Q8RT_EXP_C2));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(Q8RT_EXP_C1));
  t = _mm512_mul_ps(t, s);
  const __m512 f = _mm512_fmadd_ps(t, p, s);
  const __mmask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(Q8RT_EXP_CUTOFF), _CMP_LT_OQ);
  return _mm512_maskz_mov_ps((__mmask16)~under, f);
}
#endif

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
static inline __attribute__((always_inline)) __m256 q8rt_exp8_avx2(__m256 x) {
  __m256 n = _mm256_fmadd_ps(x, _mm256_set1_ps(Q8RT_EXP_LOG2E), _mm256_set1_ps(Q8RT_EXP_MAGIC_BIAS));
  const __m256 s = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(n), 23));
  n = _mm256_sub_ps(n, _mm256_set1_ps(Q8RT_EXP_MAGIC_BIAS));
  __m256 t = _mm256_fmadd_ps(n, _mm256_set1_ps(Q8RT_EXP_MINUS_LN2_HI), x);
  t = _mm256_fmadd_ps(n, _mm256_set1_ps(Q8RT_EXP_MINUS_LN2_LO), t);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(Q8RT_EXP_C5), t, _mm256_set1_ps(Q8RT_EXP_C4));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(Q8RT_EXP_C3));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(Q8RT_EXP_C2));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(Q8RT_EXP_C1));
  t = _mm256_mul_ps(t, s);
  const __m256 f = _mm256_fmadd_ps(t, p, s);
  const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(Q8RT_EXP_CUTOFF), _CMP_LT_OQ);
  return _mm256_andnot_ps(under, f);
}
#endif

#if defined(__aarch64__)
#include <arm_neon.h>
static inline __attribute__((always_inline)) float32x4_t q8rt_exp4_neon(float32x4_t x) {
  float32x4_t n = vfmaq_f32(vdupq_n_f32(Q8RT_EXP_MAGIC_BIAS), x, vdupq_n_f32(Q8RT_EXP_LOG2E));
  const float32x4_t s = vreinterpretq_f32_s32(vshlq_n_s32(vreinterpretq_s32_f32(n), 23));
  n = vsubq_f32(n, vdupq_n_f32(Q8RT_EXP_MAGIC_BIAS));
  float32x4_t t = vfmaq_f32(x, n, vdupq_n_f32(Q8RT_EXP_MINUS_LN2_HI));
  t = vfmaq_f32(t, n, vdupq_n_f32(Q8RT_EXP_MINUS_LN2_LO));
  float32x4_t p = vfmaq_f32(vdupq_n_f32(Q8RT_EXP_C4), vdupq_n_f32(Q8RT_EXP_C5), t);
  p = vfmaq_f32(vdupq_n_f32(Q8RT_EXP_C3), p, t);
  p = vfmaq_f32(vdupq_n_f32(Q8RT_EXP_C2), p, t);
  p = vfmaq_f32(vdupq_n_f32(Q8RT_EXP_C1), p, t);
  t = vmulq_f32(t, s);
  const float32x4_t f = vfmaq_f32(s, t, p);
  const uint32x4_t under = vcltq_f32(x, vdupq_n_f32(Q8RT_EXP_CUTOFF));
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(f), under));
}
#endif

#endif
