/* x8-rsum, AVX2. Signed input is biased to unsigned (x ^ 0x80 = x + 128) and the bias removed at
 * the end (128 per element), so both types take the unsigned route; all arithmetic is integer,
 * so the sums equal the scalar twin's exactly (uint32 wraparound included).
 *   rsum: vpsadbw adds 8 bytes into a 64-bit lane (no overflow for any n), 32 bytes per step.
 *   csum: 32 channels at a time (then 16, then 8), bytes widened to 16 bits and added for up to 256
 *         pixels (at most 256 * 255 = 65280 < 2^16), then widened into 32-bit totals; the last < 8
 *         channels by the scalar twin. */
#include <immintrin.h>

#include "x8-rsum/x8-rsum.h"

void q8rt_x8_rsum_ukernel__avx2(size_t rows, size_t n, const uint8_t *x, size_t stride, int is_signed, int32_t *out) {
  const __m256i flip = _mm256_set1_epi8(is_signed ? (char)0x80 : 0);
  const uint8_t xor8 = is_signed ? 0x80 : 0;
  for (size_t r = 0; r < rows; r++) {
    const uint8_t *p = x + r * stride;
    __m256i acc = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      const __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + i)), flip);
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, _mm256_setzero_si256()));
    }
    const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    uint64_t s = (uint64_t)_mm_cvtsi128_si64(s2) + (uint64_t)_mm_extract_epi64(s2, 1);
    for (; i < n; i++) s += (uint8_t)(p[i] ^ xor8);
    if (is_signed) s -= (uint64_t)128 * n;
    out[r] = (int32_t)(uint32_t)s;
  }
}

void q8rt_x8_csum_ukernel__avx2(size_t pixels, size_t channels, const uint8_t *x, size_t stride, int is_signed,
                                int32_t *out) {
  const __m256i flip = _mm256_set1_epi8(is_signed ? (char)0x80 : 0);
  const uint32_t bias = is_signed ? (uint32_t)(128u * (uint32_t)pixels) : 0u;
  size_t c = 0;
  for (; c + 32 <= channels; c += 32) {
    __m256i t0 = _mm256_setzero_si256(), t1 = t0, t2 = t0, t3 = t0; /* 32-bit totals, 8 channels each */
    for (size_t p0 = 0; p0 < pixels; p0 += 256) {
      const size_t p1 = pixels - p0 < 256 ? pixels : p0 + 256;
      __m256i lo = _mm256_setzero_si256(), hi = lo; /* 16-bit partial sums, channels 0-15 and 16-31 */
      for (size_t p = p0; p < p1; p++) {
        const __m256i v =
            _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(x + p * stride + c)), flip);
        lo = _mm256_add_epi16(lo, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v)));
        hi = _mm256_add_epi16(hi, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1)));
      }
      t0 = _mm256_add_epi32(t0, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(lo)));
      t1 = _mm256_add_epi32(t1, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(lo, 1)));
      t2 = _mm256_add_epi32(t2, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(hi)));
      t3 = _mm256_add_epi32(t3, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(hi, 1)));
    }
    const __m256i b = _mm256_set1_epi32((int)bias);
    _mm256_storeu_si256((__m256i *)(void *)(out + c), _mm256_sub_epi32(t0, b));
    _mm256_storeu_si256((__m256i *)(void *)(out + c + 8), _mm256_sub_epi32(t1, b));
    _mm256_storeu_si256((__m256i *)(void *)(out + c + 16), _mm256_sub_epi32(t2, b));
    _mm256_storeu_si256((__m256i *)(void *)(out + c + 24), _mm256_sub_epi32(t3, b));
  }
  if (c + 16 <= channels) { /* squeeze-excite blocks pool 16-channel chunks: keep them on SIMD */
    const __m128i flip16 = _mm256_castsi256_si128(flip);
    __m256i t0 = _mm256_setzero_si256(), t1 = t0;
    for (size_t p0 = 0; p0 < pixels; p0 += 256) {
      const size_t p1 = pixels - p0 < 256 ? pixels : p0 + 256;
      __m256i s16 = _mm256_setzero_si256();
      for (size_t p = p0; p < p1; p++) {
        const __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(x + p * stride + c)), flip16);
        s16 = _mm256_add_epi16(s16, _mm256_cvtepu8_epi16(v));
      }
      t0 = _mm256_add_epi32(t0, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(s16)));
      t1 = _mm256_add_epi32(t1, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(s16, 1)));
    }
    const __m256i b = _mm256_set1_epi32((int)bias);
    _mm256_storeu_si256((__m256i *)(void *)(out + c), _mm256_sub_epi32(t0, b));
    _mm256_storeu_si256((__m256i *)(void *)(out + c + 8), _mm256_sub_epi32(t1, b));
    c += 16;
  }
  if (c + 8 <= channels) {
    const __m128i flip8 = _mm256_castsi256_si128(flip);
    __m256i t0 = _mm256_setzero_si256();
    for (size_t p0 = 0; p0 < pixels; p0 += 256) {
      const size_t p1 = pixels - p0 < 256 ? pixels : p0 + 256;
      __m128i s16 = _mm_setzero_si128();
      for (size_t p = p0; p < p1; p++) {
        const __m128i v = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(x + p * stride + c)), flip8);
        s16 = _mm_add_epi16(s16, _mm_cvtepu8_epi16(v));
      }
      t0 = _mm256_add_epi32(t0, _mm256_cvtepu16_epi32(s16));
    }
    _mm256_storeu_si256((__m256i *)(void *)(out + c), _mm256_sub_epi32(t0, _mm256_set1_epi32((int)bias)));
    c += 8;
  }
  if (c < channels) q8rt_x8_csum_ukernel__scalar(pixels, channels - c, x + c, stride, is_signed, out + c);
}
