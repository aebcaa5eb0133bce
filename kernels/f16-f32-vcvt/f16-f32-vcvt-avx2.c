/* f16-f32-vcvt, AVX2 + F16C (Q8RT_ISA_AVX2 requires F16C: src/runtime/isa.c): vcvtph2ps, 16 per
 * step. The widening is exact for every non-NaN input; vcvtph2ps quiets a signalling NaN (sets
 * float32 bit 22), the twin keeps the payload as it is, so NaN lanes (|h| > 0x7c00) take the
 * twin's bits, sign | 0x7f800000 | (h & 0x3ff) << 13, computed with integer operations (only in
 * a step of 16 that holds a NaN: one 16-bit compare per 8 decides). A tail of
 * n % 16 goes through a zero-padded stack copy. */
#include <immintrin.h>
#include <string.h>

#include "f16-f32-vcvt/f16-f32-vcvt.h"

#define F16C __attribute__((target("avx2,f16c")))

static inline F16C __attribute__((always_inline)) __m256 cvt8(__m128i h) {
  const __m256 hw = _mm256_cvtph_ps(h);
  const __m256i w = _mm256_cvtepu16_epi32(h);
  const __m256i mag = _mm256_and_si256(w, _mm256_set1_epi32(0x7fff));
  const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7c00));
  /* (mag << 13) = 0x0f800000 | man << 13 for a NaN; + 0x70000000 = 0x7f800000 | man << 13 */
  const __m256i bits = _mm256_or_si256(_mm256_add_epi32(_mm256_slli_epi32(mag, 13), _mm256_set1_epi32(0x70000000)),
                                       _mm256_slli_epi32(_mm256_xor_si256(w, mag), 16));
  return _mm256_blendv_ps(hw, _mm256_castsi256_ps(bits), _mm256_castsi256_ps(nan));
}

F16C void q8rt_f16_f32_vcvt_ukernel__avx2(size_t n, const uint16_t *x, float *y) {
  const __m128i vmag = _mm_set1_epi16(0x7fff), vinf = _mm_set1_epi16(0x7c00);
  for (; n >= 16; n -= 16, x += 16, y += 16) {
    const __m128i h0 = _mm_loadu_si128((const __m128i *)(const void *)x);
    const __m128i h1 = _mm_loadu_si128((const __m128i *)(const void *)(x + 8));
    /* a NaN among the 16 (|h| > 0x7c00, a signed 16-bit compare of values <= 0x7fff)? */
    const __m128i any =
        _mm_or_si128(_mm_cmpgt_epi16(_mm_and_si128(h0, vmag), vinf), _mm_cmpgt_epi16(_mm_and_si128(h1, vmag), vinf));
    if (_mm_testz_si128(any, any)) {
      _mm256_storeu_ps(y, _mm256_cvtph_ps(h0));
      _mm256_storeu_ps(y + 8, _mm256_cvtph_ps(h1));
    } else {
      _mm256_storeu_ps(y, cvt8(h0));
      _mm256_storeu_ps(y + 8, cvt8(h1));
    }
  }
  if (n != 0) {
    uint16_t buf[16] = {0};
    float out[16];
    memcpy(buf, x, n * sizeof(uint16_t));
    _mm256_storeu_ps(out, cvt8(_mm_loadu_si128((const __m128i *)(const void *)buf)));
    _mm256_storeu_ps(out + 8, cvt8(_mm_loadu_si128((const __m128i *)(const void *)(buf + 8))));
    memcpy(y, out, n * sizeof(float));
  }
}
