/* DequantizeLinear, AVX2: y = (float)(x - zp) * scale, bit-identical to the scalar variants (the
 * int32 subtraction is exact, vcvtdq2ps of |values| < 2^24 is exact, one IEEE multiply).
 * 32 elements per iteration; a tail of n % 32 goes through stack copies, so nothing is read or
 * written past n. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

static inline __attribute__((always_inline)) void q8_f32_32(const uint8_t *x, float *y, __m256i vzp, __m256 vscale,
                                                            int is_signed) {
  for (int i = 0; i < 4; i++) {
    const __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(x + 8 * i));
    const __m256i v = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    _mm256_storeu_ps(y + 8 * i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, vzp)), vscale));
  }
}

static inline __attribute__((always_inline)) void q8_f32(size_t n, const uint8_t *x, float *y,
                                                         const q8rt_qint_f32_vcvt_params *p, int is_signed) {
  const __m256 vscale = _mm256_set1_ps(p->scale);
  const __m256i vzp = _mm256_set1_epi32(p->zero_point);
  for (; n >= 32; n -= 32, x += 32, y += 32) q8_f32_32(x, y, vzp, vscale, is_signed);
  if (n != 0) {
    uint8_t buf[32] = {0};
    float out[32];
    memcpy(buf, x, n);
    q8_f32_32(buf, out, vzp, vscale, is_signed);
    memcpy(y, out, n * sizeof(float));
  }
}

void q8rt_qu8_f32_vcvt_ukernel__avx2(size_t n, const uint8_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  q8_f32(n, x, y, p, 0);
}

void q8rt_qs8_f32_vcvt_ukernel__avx2(size_t n, const int8_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  q8_f32(n, (const uint8_t *)x, y, p, 1);
}

/* int32 inputs (zp 0, checked at load; Cast int32 -> float passes scale 1): vcvtdq2ps rounds to
 * nearest like the twin's (float) conversion, then the one multiply. 16 per step, the last n % 16
 * through a stack copy. */
static inline __attribute__((always_inline)) void qs32_f32_16(const int32_t *x, float *y, __m256i vzp, __m256 vscale) {
  for (int i = 0; i < 2; i++) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + 8 * i));
    _mm256_storeu_ps(y + 8 * i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, vzp)), vscale));
  }
}

void q8rt_qs32_f32_vcvt_ukernel__avx2(size_t n, const int32_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  const __m256 vscale = _mm256_set1_ps(p->scale);
  const __m256i vzp = _mm256_set1_epi32(p->zero_point);
  for (; n >= 16; n -= 16, x += 16, y += 16) qs32_f32_16(x, y, vzp, vscale);
  if (n != 0) {
    int32_t buf[16] = {0};
    float out[16];
    memcpy(buf, x, n * sizeof(int32_t));
    qs32_f32_16(buf, out, vzp, vscale);
    memcpy(y, out, n * sizeof(float));
  }
}
