/* x8-packb for AVX-512 (F+BW+VL), 16 columns at a time: the 16 bytes of each of 4 rows (masked
 * loads past n, zero rows past k) are xored into the int8 domain, zeroed in padded columns and
 * interleaved bytes then words into 16 lanes of 4 k; column sums add the int8 bytes (vpmaddubsw
 * against ones, then vpmaddwd: exact) and 128 per row after the loop. nr must be a multiple of 16
 * (the GEMM variants have 16 or 32); otherwise the scalar twin runs. */
#include <immintrin.h>
#include <string.h>

#include "x8-packb/x8-packb.h"

void q8rt_x8_packb_ukernel_c4__avx512skx(size_t k, size_t n, const uint8_t *x, size_t x_stride, uint8_t x_xor,
                                         size_t nr, uint32_t bias_base, uint32_t bias_mul, void *packed,
                                         uint32_t *colsum) {
  if (nr % 16 != 0) {
    q8rt_x8_packb_ukernel_c4__scalar(k, n, x, x_stride, x_xor, nr, bias_base, bias_mul, packed, colsum);
    return;
  }
  const size_t k4 = (k + 3) / 4;
  const size_t block = q8rt_x8_packb_block_bytes(k, nr);
  const __m128i vflip = _mm_set1_epi8((char)(x_xor ^ 0x80));
  const __m512i ones8 = _mm512_set1_epi8(1);
  const __m512i ones16 = _mm512_set1_epi16(1);
  const __m512i vk128 = _mm512_set1_epi32((int32_t)(128u * (uint32_t)k));
  const __m512i vbase = _mm512_set1_epi32((int32_t)bias_base);
  const __m512i vmul = _mm512_set1_epi32((int32_t)bias_mul);
  uint8_t *out = packed;
  for (size_t n0 = 0; n0 < n; n0 += nr, out += block) {
    for (size_t h = 0; h < nr; h += 16) {
      const size_t c0 = n0 + h;
      const size_t nv = c0 >= n ? 0 : n - c0 < 16 ? n - c0 : 16;
      const __mmask16 m = (__mmask16)((1u << nv) - 1u);
      __m512i vsum = _mm512_setzero_si512();
      uint8_t *b = out + nr * sizeof(int32_t) + h * 4;
      const uint8_t *xp = x + c0;
      for (size_t g = 0; g < k4; g++) {
        __m128i r[4];
        for (size_t i = 0; i < 4; i++) {
          const size_t kk = 4 * g + i;
          r[i] = kk < k && nv > 0
                     ? _mm_maskz_mov_epi8(m, _mm_xor_si128(_mm_maskz_loadu_epi8(m, xp + kk * x_stride), vflip))
                     : _mm_setzero_si128();
        }
        const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), hi01 = _mm_unpackhi_epi8(r[0], r[1]);
        const __m128i lo23 = _mm_unpacklo_epi8(r[2], r[3]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
        __m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(lo01, lo23));
        v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(lo01, lo23), 1);
        v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(hi01, hi23), 2);
        v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(hi01, hi23), 3);
        _mm512_storeu_si512(b + g * nr * 4, v);
        vsum = _mm512_add_epi32(vsum, _mm512_madd_epi16(_mm512_maddubs_epi16(ones8, v), ones16));
      }
      /* int8 sums + 128 per row: the uint8-domain sums */
      vsum = _mm512_add_epi32(vsum, vk128);
      const __m512i vb = _mm512_maskz_sub_epi32(m, vbase, _mm512_mullo_epi32(vmul, vsum));
      _mm512_storeu_si512(out + h * sizeof(int32_t), vb);
      if (colsum != NULL) _mm512_mask_storeu_epi32(colsum + c0, m, vsum);
    }
    memset(out + nr * sizeof(int32_t) + k4 * nr * 4, 0, nr * sizeof(float));
  }
}
