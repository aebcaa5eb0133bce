/* q8-softmax-strided, AVX-512: 16 columns per pass, one per lane, the last pass under a byte mask
 * (masked loads and stores: nothing outside the n columns is read or written). The maximum on the
 * 16 bytes of each k (vpmaxub / vpmaxsb); the table index (uint8)(adj + x) as a byte add, since
 * adj + x and its low byte agree mod 256; the entries by vgatherdps, summed in k order per lane (the
 * twin's chain); for d <= EBUF they are kept for the output pass instead of gathered again. The
 * outputs: multiply, divide (IEEE per lane, as the twin), round half to even by vcvtps2dq with
 * embedded rounding (INT32_MIN out of range and for NaN, as q8rt_cvt_rne), + y_zp with wraparound,
 * min qmax, the low bytes by vpmovdb. */
#include <immintrin.h>

#include "q8-softmax-strided/q8-softmax-strided.h"

#define EBUF 32

void q8rt_q8_softmax_strided_ukernel_16__avx512skx(size_t d, size_t n, size_t stride, const uint8_t *x, uint8_t *y,
                                                   const float table[256], const q8rt_q8_softmax_params *p) {
  const int s = p->is_signed;
  const __m128i vbase = _mm_set1_epi8((char)(s ? 127 : 255));
  const __m512 vf = _mm512_set1_ps(p->y_factor);
  const __m512i vzp = _mm512_set1_epi32(p->y_zp), vmax = _mm512_set1_epi32(p->qmax);
  __m512 ebuf[EBUF];
  for (size_t j = 0; j < n; j += 16) {
    const size_t c = n - j < 16 ? n - j : 16;
    const __mmask16 m = (__mmask16)((1u << c) - 1u);
    const uint8_t *xc = x + j;
    uint8_t *yc = y + j;
    __m128i mx = _mm_maskz_loadu_epi8(m, xc);
    for (size_t k = 1; k < d; k++) {
      const __m128i v = _mm_maskz_loadu_epi8(m, xc + k * stride);
      mx = s ? _mm_max_epi8(mx, v) : _mm_max_epu8(mx, v);
    }
    const __m128i adj = _mm_sub_epi8(vbase, mx);
    __m512 sum = _mm512_setzero_ps();
    for (size_t k = 0; k < d; k++) {
      const __m512i idx = _mm512_cvtepu8_epi32(_mm_add_epi8(_mm_maskz_loadu_epi8(m, xc + k * stride), adj));
      const __m512 e = _mm512_i32gather_ps(idx, table, 4);
      if (k < EBUF) ebuf[k] = e;
      sum = _mm512_add_ps(sum, e);
    }
    for (size_t k = 0; k < d; k++) {
      __m512 e;
      if (k < EBUF) {
        e = ebuf[k];
      } else {
        const __m512i idx = _mm512_cvtepu8_epi32(_mm_add_epi8(_mm_maskz_loadu_epi8(m, xc + k * stride), adj));
        e = _mm512_i32gather_ps(idx, table, 4);
      }
      const __m512 v = _mm512_div_ps(_mm512_mul_ps(e, vf), sum);
      const __m512i q = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m512i r = _mm512_min_epi32(_mm512_add_epi32(q, vzp), vmax);
      _mm_mask_storeu_epi8(yc + k * stride, m, _mm512_cvtepi32_epi8(r));
    }
  }
}
