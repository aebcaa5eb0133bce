/* qu8-vmacc-i32 for AVX2, 8 outputs per step: the activation bytes (xor applied) widened to int32
 * lanes whose high halves are zero, vpmaddwd against (w, 0) word pairs gives x * w exactly
 * (|x * w| <= 255 * 32768 < 2^31), then the constant -x_zp * w is added (wrapping like the twin:
 * (x - zp) * w = x * w - zp * w modulo 2^32). Stride 2 (strided depthwise convolutions) gathers the
 * even bytes of 16 with one vpshufb; other strides and the tails run the scalar loop. */
#include <immintrin.h>

#include "qu8-vmacc-i32/qu8-vmacc-i32.h"

void q8rt_qu8_vmacc_i32_ukernel__avx2(size_t n, const uint8_t *x, size_t stride, uint8_t x_xor, int32_t x_zp_u8,
                                      int32_t w, uint32_t *acc) {
  const __m256i vw = _mm256_set1_epi32((int32_t)(uint16_t)(int16_t)w);
  const __m256i vc = _mm256_set1_epi32((int32_t)(0u - (uint32_t)x_zp_u8 * (uint32_t)w));
  const __m128i vxor = _mm_set1_epi8((char)x_xor);
  size_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) {
      const __m128i b = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(x + i)), vxor);
      const __m256i p = _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepu8_epi32(b), vw), vc);
      __m256i *a = (__m256i *)(acc + i);
      _mm256_storeu_si256(a, _mm256_add_epi32(_mm256_loadu_si256(a), p));
    }
  } else if (stride == 2) {
    const __m128i veven = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    /* 16 bytes from x + 2i reach x[2i + 15]; the last byte needed is x[2(n - 1)] */
    for (; i + 9 <= n; i += 8) {
      const __m128i b = _mm_shuffle_epi8(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(x + 2 * i)), vxor), veven);
      const __m256i p = _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepu8_epi32(b), vw), vc);
      __m256i *a = (__m256i *)(acc + i);
      _mm256_storeu_si256(a, _mm256_add_epi32(_mm256_loadu_si256(a), p));
    }
  }
  for (; i < n; i++) acc[i] += (uint32_t)(((int32_t)(x[i * stride] ^ x_xor) - x_zp_u8) * w);
}
