/* x8-zip-x4: 4 byte rows interleaved into 4-byte groups (the k4 panel of the NCHW GEMM), 32
 * bytes of each row per step: two rounds of unpacks (bytes of row pairs, then 16-bit pairs) work
 * within 128-bit lanes, so the 128-bit halves are put back in order with vperm2i128; tails by the
 * scalar loop. */
#include <immintrin.h>

#include "q8rt-kernels.h"

void q8rt_x8_zip_x4_ukernel__avx2(size_t n, const uint8_t *const rows[4], uint8_t x_xor, uint8_t *out) {
  const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
  const __m256i vx = _mm256_set1_epi8((char)x_xor);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(r0 + i)), vx);
    const __m256i b = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(r1 + i)), vx);
    const __m256i c = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(r2 + i)), vx);
    const __m256i d = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(r3 + i)), vx);
    const __m256i ab_lo = _mm256_unpacklo_epi8(a, b), ab_hi = _mm256_unpackhi_epi8(a, b);
    const __m256i cd_lo = _mm256_unpacklo_epi8(c, d), cd_hi = _mm256_unpackhi_epi8(c, d);
    /* per 128-bit lane L: z0 = pixels 0-3, z1 = 4-7, z2 = 8-11, z3 = 12-15 of that lane's 16 */
    const __m256i z0 = _mm256_unpacklo_epi16(ab_lo, cd_lo), z1 = _mm256_unpackhi_epi16(ab_lo, cd_lo);
    const __m256i z2 = _mm256_unpacklo_epi16(ab_hi, cd_hi), z3 = _mm256_unpackhi_epi16(ab_hi, cd_hi);
    __m256i *o = (__m256i *)(void *)(out + 4 * i);
    _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(z0, z1, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(z2, z3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(z0, z1, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(z2, z3, 0x31));
  }
  for (; i < n; i++) {
    out[4 * i + 0] = r0[i] ^ x_xor;
    out[4 * i + 1] = r1[i] ^ x_xor;
    out[4 * i + 2] = r2[i] ^ x_xor;
    out[4 * i + 3] = r3[i] ^ x_xor;
  }
}
