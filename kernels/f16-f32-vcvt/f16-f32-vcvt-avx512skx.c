/* f16-f32-vcvt, AVX-512: vcvtph2ps zmm, 32 per step, the tail with masked loads and stores. NaN
 * lanes (|h| > 0x7c00) take the twin's bits (vcvtph2ps quiets a signalling NaN; the twin keeps
 * it): sign | 0x7f800000 | (h & 0x3ff) << 13, merged under the lane mask (only in a step of 32
 * that holds a NaN: one 16-bit compare decides). */
#include <immintrin.h>

#include "f16-f32-vcvt/f16-f32-vcvt.h"

static inline __attribute__((always_inline)) __m512 cvt16(__m256i h) {
  const __m512 hw = _mm512_cvtph_ps(h);
  const __m512i w = _mm512_cvtepu16_epi32(h);
  const __m512i mag = _mm512_and_si512(w, _mm512_set1_epi32(0x7fff));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(mag, _mm512_set1_epi32(0x7c00));
  const __m512i bits = _mm512_or_si512(_mm512_add_epi32(_mm512_slli_epi32(mag, 13), _mm512_set1_epi32(0x70000000)),
                                       _mm512_slli_epi32(_mm512_xor_si512(w, mag), 16));
  return _mm512_mask_blend_ps(nan, hw, _mm512_castsi512_ps(bits));
}

void q8rt_f16_f32_vcvt_ukernel__avx512skx(size_t n, const uint16_t *x, float *y) {
  const __m512i vmag = _mm512_set1_epi16(0x7fff), vinf = _mm512_set1_epi16(0x7c00);
  for (; n >= 32; n -= 32, x += 32, y += 32) {
    const __m512i h = _mm512_loadu_si512((const void *)x);
    if (_mm512_cmpgt_epi16_mask(_mm512_and_si512(h, vmag), vinf) == 0) { /* no NaN among the 32 */
      _mm512_storeu_ps(y, _mm512_cvtph_ps(_mm512_castsi512_si256(h)));
      _mm512_storeu_ps(y + 16, _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1)));
    } else {
      _mm512_storeu_ps(y, cvt16(_mm512_castsi512_si256(h)));
      _mm512_storeu_ps(y + 16, cvt16(_mm512_extracti64x4_epi64(h, 1)));
    }
  }
  for (; n != 0;) {
    const size_t k = n < 16 ? n : 16;
    const __mmask16 m = (__mmask16)((1u << k) - 1u);
    _mm512_mask_storeu_ps(y, m, cvt16(_mm256_maskz_loadu_epi16(m, x)));
    n -= k, x += k, y += k;
  }
}
