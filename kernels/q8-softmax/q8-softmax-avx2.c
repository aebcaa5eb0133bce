/* q8-softmax, AVX2: the row maximum 32 bytes at a time (vpmaxub / vpmaxsb), the sum in index
 * order exactly as the scalar twin (a sequential float chain: the order is part of the result),
 * then the outputs 8 at a time: table gather, multiply, divide (IEEE per lane, the same
 * operations as the scalar twin), round half to even with vroundps (independent of MXCSR), then
 * vcvttps2dq (INT32_MIN out of range and for NaN, as the twin), + y_zp with wraparound, min qmax. */
#include <immintrin.h>

#include "q8-softmax/q8-softmax.h"

void q8rt_q8_softmax_ukernel__avx2(size_t d, const uint8_t *x, uint8_t *y, const float table[256],
                                   const q8rt_q8_softmax_params *p) {
  const int s = p->is_signed;
  int32_t xmax = -1000;
  size_t k = 0;
  if (d >= 32) {
    __m256i m = _mm256_loadu_si256((const __m256i *)(const void *)x);
    for (k = 32; k + 32 <= d; k += 32) {
      const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + k));
      m = s ? _mm256_max_epi8(m, v) : _mm256_max_epu8(m, v);
    }
    uint8_t lanes[32];
    _mm256_storeu_si256((__m256i *)(void *)lanes, m);
    for (int i = 0; i < 32; i++) {
      const int32_t v = s ? (int32_t)(int8_t)lanes[i] : (int32_t)lanes[i];
      if (v > xmax) xmax = v;
    }
  }
  for (; k < d; k++) {
    const int32_t v = s ? (int32_t)(int8_t)x[k] : (int32_t)x[k];
    if (v > xmax) xmax = v;
  }
  const int32_t adj = (s ? 127 : 255) - xmax;
  float sum = 0.0f;
  for (k = 0; k < d; k++) sum += table[(uint8_t)(adj + (s ? (int32_t)(int8_t)x[k] : (int32_t)x[k]))];
  const __m256i vadj = _mm256_set1_epi32(adj), low8 = _mm256_set1_epi32(0xff);
  const __m256 vf = _mm256_set1_ps(p->y_factor), vsum = _mm256_set1_ps(sum);
  const __m256i vzp = _mm256_set1_epi32(p->y_zp), vmax = _mm256_set1_epi32(p->qmax);
  for (k = 0; k + 8 <= d; k += 8) {
    const __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(x + k));
    const __m256i xi = s ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    const __m256i idx = _mm256_and_si256(_mm256_add_epi32(xi, vadj), low8);
    const __m256 e = _mm256_i32gather_ps(table, idx, 4);
    const __m256 v = _mm256_div_ps(_mm256_mul_ps(e, vf), vsum);
    const __m256i q = _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i r = _mm256_min_epi32(_mm256_add_epi32(q, vzp), vmax);
    int32_t out[8];
    _mm256_storeu_si256((__m256i *)(void *)out, r);
    for (int i = 0; i < 8; i++) y[k + (size_t)i] = (uint8_t)out[i];
  }
  if (k < d) {
    /* the last d % 8 outputs: the same operations one lane at a time */
    for (; k < d; k++) {
      const int32_t xi = s ? (int32_t)(int8_t)x[k] : (int32_t)x[k];
      const float e = table[(uint8_t)(adj + xi)];
      const __m128 v = _mm_div_ss(_mm_mul_ss(_mm_set_ss(e), _mm_set_ss(p->y_factor)), _mm_set_ss(sum));
      const __m128i q = _mm_cvttps_epi32(_mm_round_ss(v, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      int32_t r = (int32_t)((uint32_t)_mm_cvtsi128_si32(q) + (uint32_t)p->y_zp);
      if (r > p->qmax) r = p->qmax;
      y[k] = (uint8_t)r;
    }
  }
}
