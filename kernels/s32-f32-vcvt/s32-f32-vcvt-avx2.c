/* s32-f32-vcvt for AVX2: 8 lanes, the tail on the scalar twin. vcvtdq2ps rounds to nearest even
 * like the C conversion; vmulps then vaddps (no FMA: the twin's roundings). */
#include <immintrin.h>

#include "s32-f32-vcvt/s32-f32-vcvt.h"

void q8rt_s32_f32_vcvt_ukernel__avx2(size_t n, const int32_t *acc, const uint32_t *colsum, void *y,
                                     const q8rt_s32_vcvt_params *p) {
  const __m256i vc = _mm256_set1_epi32((int32_t)p->c), ve = _mm256_set1_epi32((int32_t)p->e);
  const __m256 vs = _mm256_set1_ps(p->scale), vb = _mm256_set1_ps(p->bias);
  float *yf = y;
  int32_t *yi = y;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i v = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + i)), vc);
    if (colsum != NULL) {
      v = _mm256_sub_epi32(v, _mm256_mullo_epi32(ve, _mm256_loadu_si256((const __m256i *)(colsum + i))));
    }
    if (p->mode == Q8RT_S32_VCVT_INT32) {
      _mm256_storeu_si256((__m256i *)(yi + i), v);
    } else {
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), vs);
      if (p->mode == Q8RT_S32_VCVT_SCALE_BIAS) f = _mm256_add_ps(f, vb);
      if (p->mode == Q8RT_S32_VCVT_SCALE_BIASV) f = _mm256_add_ps(f, _mm256_loadu_ps(p->biasv + i));
      _mm256_storeu_ps(yf + i, f);
    }
  }
  if (i < n) {
    q8rt_s32_vcvt_params t = *p;
    if (t.mode == Q8RT_S32_VCVT_SCALE_BIASV) t.biasv += i;
    q8rt_s32_f32_vcvt_ukernel__scalar(n - i, acc + i, colsum != NULL ? colsum + i : NULL, yi + i, &t);
  }
}
