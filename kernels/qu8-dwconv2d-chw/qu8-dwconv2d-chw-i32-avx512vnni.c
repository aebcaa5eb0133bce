/* qu8-dwconv2d-chw for AVX-512 VNNI: 16 outputs per zmm, up to 4 zmm accumulators (64 outputs)
 * kept in registers over all taps. Each tap's bytes become int32 lanes whose high word is zero
 * (stride 1: vpmovzxbd of 16 bytes; stride 2: vpmovzxbw of 31 bytes, whose odd word each lane
 * then ignores), and vpdpwssd against the word pair (w, 0) adds x * w exactly (|x * w| <= 255 *
 * 32767 fits, and the accumulation wraps like the twin's). Masked loads and stores at the row's
 * end: no byte past the last one the sum names is read. Other strides run the scalar twin. */
#include <immintrin.h>

#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.h"

static inline __m512i dw_load(const uint8_t *p, size_t n, size_t sw, __m128i vxor) {
  /* the lanes for n <= 16 outputs at p, stride sw (1 or 2) */
  if (sw == 1) {
    const __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
    return _mm512_cvtepu8_epi32(_mm_xor_si128(_mm_maskz_loadu_epi8(m, p), vxor));
  }
  const __mmask32 m = n >= 16 ? (__mmask32)0x7FFFFFFFu : (__mmask32)((1u << (2 * n - 1)) - 1u);
  return _mm512_cvtepu8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(m, p), _mm256_set_m128i(vxor, vxor)));
}

void q8rt_qu8_dwconv2d_chw_i32_ukernel__avx512vnni(size_t ow, size_t kh, size_t kw, const uint8_t *x, size_t row_stride,
                                                   size_t sw, size_t dw, uint8_t x_xor, const int32_t *w, int32_t bias,
                                                   int32_t *y) {
  if (sw != 1 && sw != 2) {
    q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(ow, kh, kw, x, row_stride, sw, dw, x_xor, w, bias, y);
    return;
  }
  const __m128i vxor = _mm_set1_epi8((char)x_xor);
  const __m512i vbias = _mm512_set1_epi32(bias);
  size_t ox = 0;
  for (; ox + 64 <= ow; ox += 64) {
    __m512i a0 = vbias, a1 = vbias, a2 = vbias, a3 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) {
        const __m512i vw = _mm512_set1_epi32((int32_t)(uint16_t)(int16_t)w[ky * kw + kx]);
        const uint8_t *p = r + kx * dw;
        a0 = _mm512_dpwssd_epi32(a0, dw_load(p, 16, sw, vxor), vw);
        a1 = _mm512_dpwssd_epi32(a1, dw_load(p + 16 * sw, 16, sw, vxor), vw);
        a2 = _mm512_dpwssd_epi32(a2, dw_load(p + 32 * sw, 16, sw, vxor), vw);
        a3 = _mm512_dpwssd_epi32(a3, dw_load(p + 48 * sw, 16, sw, vxor), vw);
      }
    }
    _mm512_storeu_si512(y + ox, a0);
    _mm512_storeu_si512(y + ox + 16, a1);
    _mm512_storeu_si512(y + ox + 32, a2);
    _mm512_storeu_si512(y + ox + 48, a3);
  }
  for (; ox < ow; ox += 16) {
    const size_t n = ow - ox < 16 ? ow - ox : 16;
    __m512i a0 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) {
        const __m512i vw = _mm512_set1_epi32((int32_t)(uint16_t)(int16_t)w[ky * kw + kx]);
        a0 = _mm512_dpwssd_epi32(a0, dw_load(r + kx * dw, n, sw, vxor), vw);
      }
    }
    _mm512_mask_storeu_epi32(y + ox, n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u), a0);
  }
}
