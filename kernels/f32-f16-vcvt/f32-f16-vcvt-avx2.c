/* f32-f16-vcvt, AVX2 + F16C (Q8RT_ISA_AVX2 requires F16C: src/runtime/isa.c): vcvtps2ph with the
 * rounding in the immediate (nearest even, independent of MXCSR.RC), 16 per step. It is the
 * twin's definition: overflow to inf from 65520, subnormals rounded half to even, NaN quieted
 * with its sign and the top of its payload (the sweep test checks every class). A tail of n % 16
 * goes through a zero-padded stack copy. */
#include <immintrin.h>
#include <string.h>

#include "f32-f16-vcvt/f32-f16-vcvt.h"

#define F16C __attribute__((target("avx2,f16c")))

F16C void q8rt_f32_f16_vcvt_ukernel__avx2(size_t n, const float *x, uint16_t *y) {
  for (; n >= 16; n -= 16, x += 16, y += 16) {
    const __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(x), _MM_FROUND_TO_NEAREST_INT);
    const __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(x + 8), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128((__m128i *)(void *)y, a);
    _mm_storeu_si128((__m128i *)(void *)(y + 8), b);
  }
  if (n != 0) {
    float buf[16] = {0};
    uint16_t out[16];
    memcpy(buf, x, n * sizeof(float));
    _mm_storeu_si128((__m128i *)(void *)out, _mm256_cvtps_ph(_mm256_loadu_ps(buf), _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128((__m128i *)(void *)(out + 8),
                     _mm256_cvtps_ph(_mm256_loadu_ps(buf + 8), _MM_FROUND_TO_NEAREST_INT));
    memcpy(y, out, n * sizeof(uint16_t));
  }
}
