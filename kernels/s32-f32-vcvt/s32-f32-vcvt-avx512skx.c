/* s32-f32-vcvt for AVX-512: 16 lanes, the tail masked (no read or write past n). vcvtdq2ps
 * rounds to nearest even like the C conversion; vmulps then vaddps (no FMA: the twin's
 * roundings). */
#include <immintrin.h>

#include "s32-f32-vcvt/s32-f32-vcvt.h"

static inline __attribute__((always_inline)) void s32_vcvt_16(__mmask16 m, const int32_t *acc, const uint32_t *colsum,
                                                              const float *biasv, void *y, __m512i vc, __m512i ve,
                                                              __m512 vs, __m512 vb, int mode) {
  __m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc), vc);
  if (colsum != NULL) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(ve, _mm512_maskz_loadu_epi32(m, colsum)));
  if (mode == Q8RT_S32_VCVT_INT32) {
    _mm512_mask_storeu_epi32(y, m, v);
    return;
  }
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), vs);
  if (mode == Q8RT_S32_VCVT_SCALE_BIAS) f = _mm512_add_ps(f, vb);
  if (mode == Q8RT_S32_VCVT_SCALE_BIASV) f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(m, biasv));
  _mm512_mask_storeu_ps(y, m, f);
}

void q8rt_s32_f32_vcvt_ukernel__avx512skx(size_t n, const int32_t *acc, const uint32_t *colsum, void *y,
                                          const q8rt_s32_vcvt_params *p) {
  const __m512i vc = _mm512_set1_epi32((int32_t)p->c), ve = _mm512_set1_epi32((int32_t)p->e);
  const __m512 vs = _mm512_set1_ps(p->scale), vb = _mm512_set1_ps(p->bias);
  const int mode = p->mode;
  int32_t *yi = y;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s32_vcvt_16((__mmask16)0xFFFF, acc + i, colsum != NULL ? colsum + i : NULL,
                mode == Q8RT_S32_VCVT_SCALE_BIASV ? p->biasv + i : NULL, yi + i, vc, ve, vs, vb, mode);
  }
  if (i < n) {
    s32_vcvt_16((__mmask16)((1u << (n - i)) - 1u), acc + i, colsum != NULL ? colsum + i : NULL,
                mode == Q8RT_S32_VCVT_SCALE_BIASV ? p->biasv + i : NULL, yi + i, vc, ve, vs, vb, mode);
  }
}
