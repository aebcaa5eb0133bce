/* s32-f32-vcvt for AVX-512: 16 lanes, the tail masked (no read or write past n). vcvtdq2ps
 * rounds to nearest even like the C conversion; vmulps then vaddps (no FMA: the twin's
 * roundings). */
#include <immintrin.h>

#include "s32-f32-vcvt/s32-f32-vcvt.h"

static inline __m512i s32_vcvt_v(__mmask16 m, const int32_t *acc, const uint32_t *colsum, __m512i vc, __m512i ve) {
  __m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc), vc);
  if (colsum != NULL) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(ve, _mm512_maskz_loadu_epi32(m, colsum)));
  return v;
}

void q8rt_s32_f32_vcvt_ukernel__avx512skx(size_t n, const int32_t *acc, const uint32_t *colsum, void *y,
                                          const q8rt_s32_vcvt_params *p) {
  const __m512i vc = _mm512_set1_epi32((int32_t)p->c), ve = _mm512_set1_epi32((int32_t)p->e);
  const __m512 vs = _mm512_set1_ps(p->scale), vb = _mm512_set1_ps(p->bias);
  float *yf = y;
  int32_t *yi = y;
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
    const __m512i v = s32_vcvt_v(m, acc + i, colsum != NULL ? colsum + i : NULL, vc, ve);
    if (p->mode == Q8RT_S32_VCVT_INT32) {
      _mm512_mask_storeu_epi32(yi + i, m, v);
    } else {
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), vs);
      if (p->mode == Q8RT_S32_VCVT_SCALE_BIAS) f = _mm512_add_ps(f, vb);
      _mm512_mask_storeu_ps(yf + i, m, f);
    }
  }
}
