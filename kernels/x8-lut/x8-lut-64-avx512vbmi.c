/* Byte table lookup, 64 bytes per step: the 256-entry table sits in four zmm registers; two
 * vpermi2b look up the low 7 bits in each half and the top bit picks the half. Tail: masked. */
#include <immintrin.h>

#include "q8rt-kernels.h"

static inline __attribute__((always_inline)) void lut_row(size_t n, const uint8_t *x, uint8_t *y, __m512i t0,
                                                          __m512i t1, __m512i t2, __m512i t3) {
  for (; n >= 64; n -= 64, x += 64, y += 64) {
    const __m512i v = _mm512_loadu_si512(x);
    const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_storeu_si512(y, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
  }
  if (n > 0) {
    const __mmask64 m = _bzhi_u64(~UINT64_C(0), (unsigned)n);
    const __m512i v = _mm512_maskz_loadu_epi8(m, x);
    const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_mask_storeu_epi8(y, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
  }
}

void q8rt_x8_lut_ukernel_64__avx512vbmi(size_t n, const uint8_t *x, uint8_t *y, const uint8_t table[256]) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  lut_row(n, x, y, t0, t1, t2, t3);
}

/* The table stays in its registers across the rows: a row of a few bytes (a convolution's pixel
 * of 24 channels) is one masked load, two vpermi2b and a masked store. */
void q8rt_x8_lut_rows_ukernel_64__avx512vbmi(size_t rows, size_t n, const uint8_t *x, size_t x_stride, uint8_t *y,
                                             size_t y_stride, const uint8_t table[256]) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  for (size_t r = 0; r < rows; r++) lut_row(n, x + r * x_stride, y + r * y_stride, t0, t1, t2, t3);
}
