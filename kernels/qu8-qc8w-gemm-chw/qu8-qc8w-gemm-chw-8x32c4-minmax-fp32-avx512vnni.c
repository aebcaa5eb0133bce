/* NCHW GEMM tile: 8 output channels x 32 pixels (AVX-512 VNNI). The roles of the NHWC kernel
 * swapped: the activations are the vector operand (a panel of 16 pixels x 4 k per zmm, made by
 * x8-zip-x4, already in the uint8 domain) and each channel's 4 weights are broadcast, so vpdpbusd
 * (u8 x s8, four products summed into an int32 lane without saturation) accumulates exactly the
 * twin's wrapping sum, and a channel's 16 outputs land side by side: a row of the NCHW output,
 * stored as it is. 16 zmm accumulators; per 4 k: 2 panel loads, 8 broadcasts, 16 dot products.
 * A block always holds MR packed channels (the packing pads with zero ones): all are computed,
 * the first mr stored. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

#define MR 8
#define NV 2

void q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel_8x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, const uint8_t *x,
                                                                   size_t x_stride, const void *w, uint8_t *y,
                                                                   size_t y_stride, const q8rt_qu8_requant_params *p) {
  const size_t k4 = (kc + 3) / 4;
  const uint8_t *wb = (const uint8_t *)w;
  const uint8_t *wp = wb + MR * sizeof(int32_t);
  const uint8_t *sp = wb + MR * (sizeof(int32_t) + 4 * k4);
  const __m512 vlo = _mm512_set1_ps(p->y_lo);
  const __m512 vhi = _mm512_set1_ps(p->y_hi);
  const __m512i vzp = _mm512_set1_epi32(p->y_zero_point);
  for (size_t n0 = 0; n0 < nc; n0 += 16 * NV) {
    __m512i acc[MR][NV];
#pragma GCC unroll 8
    for (size_t m = 0; m < MR; m++) {
      int32_t b;
      memcpy(&b, wb + m * sizeof(int32_t), sizeof(b));
#pragma GCC unroll 2
      for (size_t j = 0; j < NV; j++) acc[m][j] = _mm512_set1_epi32(b);
    }
    const uint8_t *xp = x + 4 * n0;
    const uint8_t *wk = wp;
    for (size_t g = 0; g < k4; g++) {
      const __m512i x0 = _mm512_loadu_si512(xp);
      const __m512i x1 = _mm512_loadu_si512(xp + 64);
      xp += x_stride;
#pragma GCC unroll 8
      for (size_t m = 0; m < MR; m++) {
        int32_t w4;
        memcpy(&w4, wk + 4 * m, sizeof(w4));
        const __m512i vw = _mm512_set1_epi32(w4);
        acc[m][0] = _mm512_dpbusd_epi32(acc[m][0], x0, vw);
        acc[m][1] = _mm512_dpbusd_epi32(acc[m][1], x1, vw);
      }
      wk += 4 * MR;
    }
    const size_t left = nc - n0;
    __mmask16 mask[NV];
#pragma GCC unroll 2
    for (size_t j = 0; j < NV; j++) {
      const size_t rem = left > 16 * j ? left - 16 * j : 0;
      mask[j] = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1u);
    }
#pragma GCC unroll 8
    for (size_t m = 0; m < MR; m++) {
      if (m >= mr) break; /* the packing's zero channels past mr: computed, not stored */
      float s;
      memcpy(&s, sp + m * sizeof(float), sizeof(s));
      const __m512 vs = _mm512_set1_ps(s);
#pragma GCC unroll 2
      for (size_t j = 0; j < NV; j++) {
        __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[m][j]), vs);
        v = _mm512_max_ps(v, vlo); /* a NaN (first operand) becomes lo, as in the scalar twin */
        v = _mm512_min_ps(v, vhi);
        __m512i q = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm512_add_epi32(q, vzp);
        _mm_mask_storeu_epi8(y + m * y_stride + n0 + 16 * j, mask[j], _mm512_cvtepi32_epi8(q));
      }
    }
  }
}
