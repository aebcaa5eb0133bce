/* q8-softmax-strided, AVX2: 8 columns per pass, one per lane; the last pass (n % 8 columns) goes
 * through 8-byte buffers so nothing outside the n columns is read or written. The maximum on the 8
 * bytes of each k (vpmaxub / vpmaxsb); the table index (uint8)(adj + x) as a byte add, since adj + x
 * and its low byte agree mod 256; the entries by vgatherdps, summed in k order per lane (the twin's
 * chain); for d <= EBUF they are kept for the output pass instead of gathered again. The outputs:
 * multiply, divide (IEEE per lane, as the twin), round half to even with vroundps (independent of
 * MXCSR), vcvttps2dq (INT32_MIN out of range and for NaN, as q8rt_cvt_rne), + y_zp with
 * wraparound, min qmax, the low bytes. */
#include <immintrin.h>
#include <string.h>

#include "q8-softmax-strided/q8-softmax-strided.h"

#define EBUF 32

static inline __attribute__((always_inline)) __m128i load8(const uint8_t *p, size_t c) {
  if (c == 8) return _mm_loadl_epi64((const __m128i *)(const void *)p);
  uint8_t t[8] = {0};
  memcpy(t, p, c);
  return _mm_loadl_epi64((const __m128i *)(const void *)t);
}

void q8rt_q8_softmax_strided_ukernel_8__avx2(size_t d, size_t n, size_t stride, const uint8_t *x, uint8_t *y,
                                             const float table[256], const q8rt_q8_softmax_params *p) {
  const int s = p->is_signed;
  const __m128i vbase = _mm_set1_epi8((char)(s ? 127 : 255));
  const __m256 vf = _mm256_set1_ps(p->y_factor);
  const __m256i vzp = _mm256_set1_epi32(p->y_zp), vmax = _mm256_set1_epi32(p->qmax);
  const __m256i low8 = _mm256_set1_epi32(0xff);
  __m256 ebuf[EBUF];
  for (size_t j = 0; j < n; j += 8) {
    const size_t c = n - j < 8 ? n - j : 8;
    const uint8_t *xc = x + j;
    uint8_t *yc = y + j;
    __m128i mx = load8(xc, c);
    for (size_t k = 1; k < d; k++) {
      const __m128i v = load8(xc + k * stride, c);
      mx = s ? _mm_max_epi8(mx, v) : _mm_max_epu8(mx, v);
    }
    const __m128i adj = _mm_sub_epi8(vbase, mx);
    __m256 sum = _mm256_setzero_ps();
    for (size_t k = 0; k < d; k++) {
      const __m256i idx = _mm256_cvtepu8_epi32(_mm_add_epi8(load8(xc + k * stride, c), adj));
      const __m256 e = _mm256_i32gather_ps(table, idx, 4);
      if (k < EBUF) ebuf[k] = e;
      sum = _mm256_add_ps(sum, e);
    }
    for (size_t k = 0; k < d; k++) {
      __m256 e;
      if (k < EBUF) {
        e = ebuf[k];
      } else {
        const __m256i idx = _mm256_cvtepu8_epi32(_mm_add_epi8(load8(xc + k * stride, c), adj));
        e = _mm256_i32gather_ps(table, idx, 4);
      }
      const __m256 v = _mm256_div_ps(_mm256_mul_ps(e, vf), sum);
      const __m256i q = _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      const __m256i r = _mm256_and_si256(_mm256_min_epi32(_mm256_add_epi32(q, vzp), vmax), low8);
      const __m128i r16 = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
      const __m128i r8 = _mm_packus_epi16(r16, r16);
      if (c == 8) {
        _mm_storel_epi64((__m128i *)(void *)(yc + k * stride), r8);
      } else {
        uint8_t t[8];
        _mm_storel_epi64((__m128i *)(void *)t, r8);
        memcpy(yc + k * stride, t, c);
      }
    }
  }
}
