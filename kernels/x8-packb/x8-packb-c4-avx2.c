/* x8-packb for AVX2, 16 columns at a time: the 16 bytes of each of 4 rows (zero rows past k) are
 * xored into the int8 domain and interleaved bytes then words into 16 columns of 4 k (two 32-byte
 * stores, columns 0-7 and 8-15); column sums add the int8 bytes (vpmaddubsw against ones, then
 * vpmaddwd: exact, at most 4 x 128 per column and step) and 128 per row after the loop, all in
 * wrapping uint32 arithmetic like the scalar twin's. A block of fewer than 16 real columns reads
 * its rows through a zeroed stack copy of the real bytes (nothing past n is read) and zeroes the
 * padded columns after the xor. nr must be a multiple of 16 (the AVX2 GEMM variants have 16);
 * otherwise the scalar twin runs. */
#include <immintrin.h>
#include <string.h>

#include "x8-packb/x8-packb.h"

static inline __attribute__((always_inline)) __m128i row16(const uint8_t *p, size_t nv, __m128i flip, __m128i keep) {
  if (nv == 16) return _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p), flip);
  uint8_t buf[16] = {0};
  memcpy(buf, p, nv);
  return _mm_and_si128(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)buf), flip), keep);
}

void q8rt_x8_packb_ukernel_c4__avx2(size_t k, size_t n, const uint8_t *x, size_t x_stride, uint8_t x_xor, size_t nr,
                                    uint32_t bias_base, uint32_t bias_mul, void *packed, uint32_t *colsum) {
  if (nr % 16 != 0) {
    q8rt_x8_packb_ukernel_c4__scalar(k, n, x, x_stride, x_xor, nr, bias_base, bias_mul, packed, colsum);
    return;
  }
  const size_t k4 = (k + 3) / 4;
  const size_t block = q8rt_x8_packb_block_bytes(k, nr);
  const __m128i vflip = _mm_set1_epi8((char)(x_xor ^ 0x80));
  const __m128i lanes8 = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m256i lanes32lo = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lanes32hi = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const __m256i vk128 = _mm256_set1_epi32((int32_t)(128u * (uint32_t)k));
  const __m256i vbase = _mm256_set1_epi32((int32_t)bias_base);
  const __m256i vmul = _mm256_set1_epi32((int32_t)bias_mul);
  uint8_t *out = packed;
  for (size_t n0 = 0; n0 < n; n0 += nr, out += block) {
    for (size_t h = 0; h < nr; h += 16) {
      const size_t c0 = n0 + h;
      const size_t nv = c0 >= n ? 0 : n - c0 < 16 ? n - c0 : 16;
      /* byte lanes < nv (the real columns) */
      const __m128i keep = _mm_cmpgt_epi8(_mm_set1_epi8((char)nv), lanes8);
      __m256i vsum0 = _mm256_setzero_si256(), vsum1 = _mm256_setzero_si256();
      uint8_t *b = out + nr * sizeof(int32_t) + h * 4;
      const uint8_t *xp = x + c0;
      for (size_t g = 0; g < k4; g++) {
        __m128i r[4];
        for (size_t i = 0; i < 4; i++) {
          const size_t kk = 4 * g + i;
          r[i] = kk < k && nv > 0 ? row16(xp + kk * x_stride, nv, vflip, keep) : _mm_setzero_si128();
        }
        const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), hi01 = _mm_unpackhi_epi8(r[0], r[1]);
        const __m128i lo23 = _mm_unpacklo_epi8(r[2], r[3]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
        const __m256i v0 = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(lo01, lo23)),
                                                   _mm_unpackhi_epi16(lo01, lo23), 1);
        const __m256i v1 = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(hi01, hi23)),
                                                   _mm_unpackhi_epi16(hi01, hi23), 1);
        _mm256_storeu_si256((__m256i *)(void *)(b + g * nr * 4), v0);
        _mm256_storeu_si256((__m256i *)(void *)(b + g * nr * 4 + 32), v1);
        vsum0 = _mm256_add_epi32(vsum0, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v0), ones16));
        vsum1 = _mm256_add_epi32(vsum1, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v1), ones16));
      }
      /* int8 sums + 128 per row: the uint8-domain sums; bias 0 in padded columns */
      vsum0 = _mm256_add_epi32(vsum0, vk128);
      vsum1 = _mm256_add_epi32(vsum1, vk128);
      const __m256i vnv = _mm256_set1_epi32((int32_t)nv);
      const __m256i m0 = _mm256_cmpgt_epi32(vnv, lanes32lo), m1 = _mm256_cmpgt_epi32(vnv, lanes32hi);
      const __m256i vb0 = _mm256_and_si256(m0, _mm256_sub_epi32(vbase, _mm256_mullo_epi32(vmul, vsum0)));
      const __m256i vb1 = _mm256_and_si256(m1, _mm256_sub_epi32(vbase, _mm256_mullo_epi32(vmul, vsum1)));
      _mm256_storeu_si256((__m256i *)(void *)(out + h * sizeof(int32_t)), vb0);
      _mm256_storeu_si256((__m256i *)(void *)(out + h * sizeof(int32_t) + 32), vb1);
      if (colsum != NULL && nv > 0) {
        if (nv == 16) {
          _mm256_storeu_si256((__m256i *)(void *)(colsum + c0), vsum0);
          _mm256_storeu_si256((__m256i *)(void *)(colsum + c0 + 8), vsum1);
        } else {
          uint32_t s[16];
          _mm256_storeu_si256((__m256i *)(void *)s, vsum0);
          _mm256_storeu_si256((__m256i *)(void *)(s + 8), vsum1);
          memcpy(colsum + c0, s, nv * sizeof(uint32_t));
        }
      }
    }
    memset(out + nr * sizeof(int32_t) + k4 * nr * 4, 0, nr * sizeof(float));
  }
}
