/* f32-f16-vcvt, AVX-512: vcvtps2ph zmm with the rounding in the immediate (nearest even,
 * exceptions suppressed), 32 per step, the tail with masked loads and stores. It is the twin's
 * definition for every input class (the sweep test checks each). */
#include <immintrin.h>

#include "f32-f16-vcvt/f32-f16-vcvt.h"

#define CVT16(v) _mm512_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

void q8rt_f32_f16_vcvt_ukernel__avx512skx(size_t n, const float *x, uint16_t *y) {
  for (; n >= 32; n -= 32, x += 32, y += 32) {
    const __m256i a = CVT16(_mm512_loadu_ps(x));
    const __m256i b = CVT16(_mm512_loadu_ps(x + 16));
    _mm256_storeu_si256((__m256i *)(void *)y, a);
    _mm256_storeu_si256((__m256i *)(void *)(y + 16), b);
  }
  for (; n != 0;) {
    const size_t k = n < 16 ? n : 16;
    const __mmask16 m = (__mmask16)((1u << k) - 1u);
    _mm256_mask_storeu_epi16(y, m, CVT16(_mm512_maskz_loadu_ps(m, x)));
    n -= k, x += k, y += k;
  }
}
