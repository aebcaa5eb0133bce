/* [a][b] -> [b][a] bytes, AVX-512 VBMI, for few rows (a < 16) and dense result rows (y_stride == a):
 * the layout change of a 3- or 6-row block into channels-last pixels (QuantizeSpaceToDepth's Focus
 * rows, a 3-channel image's NCHW -> NHWC). The result of a 64-column window is a * 64 contiguous
 * bytes, a zmm vectors: byte o of vector v is p = 64 v + o of the window's result, row p % a of
 * column p / a. Each vector is built by a masked vpermb per source row (the row's 64 window bytes
 * as the table, the column indices of v as the index, the bytes of that row as the mask): a * a
 * permutes a window instead of the 16x16 unpack blocks, whose rows past a are zeros and whose
 * result rows of a bytes are stored one by one (YOLOX's 6-row Focus transpose ran at ~4.5 GB/s).
 * The last b % 64 columns are the same window with masked loads and stores: nothing outside the
 * block is read or written. Other shapes go to the AVX2 kernel. */
#include <immintrin.h>

#include "q8rt-kernels.h"

#define TR_MAX_ROWS 15

void q8rt_x8_transpose_ukernel_64__avx512vbmi(size_t a, size_t b, const uint8_t *x, size_t x_stride, uint8_t *y,
                                              size_t y_stride) {
  if (a == 0 || a > TR_MAX_ROWS || y_stride != a) {
    q8rt_x8_transpose_ukernel_16x16__avx2(a, b, x, x_stride, y, y_stride);
    return;
  }
  if (a == 1) { /* a copy (ceil(2^16 / 1) does not fit the multiplier below) */
    for (size_t j = 0; j < b; j += 64) {
      const __mmask64 m = b - j >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (b - j)) - 1;
      _mm512_mask_storeu_epi8(y + j, m, _mm512_maskz_loadu_epi8(m, x + j));
    }
    return;
  }
  /* idx[v]: column p / a of each byte of vector v (p < 64 a < 1024: the 16-bit multiply-high by
   * ceil(2^16 / a) is exact, its error below 1/64 < 1/a); mask[v][i]: the bytes of row i, the
   * period-a pattern of bit 0 shifted to (i - 64 v) mod a */
  __m512i idx[TR_MAX_ROWS];
  uint64_t mask[TR_MAX_ROWS][TR_MAX_ROWS];
  uint64_t base = 0;
  for (size_t o = 0; o < 64; o += a) base |= (uint64_t)1 << o;
  const __m512i mul = _mm512_set1_epi16((short)((65536 + a - 1) / a));
  const __m512i iota = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12,
                                        11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  for (size_t v = 0; v < a; v++) {
    const __m512i p0 = _mm512_add_epi16(iota, _mm512_set1_epi16((short)(64 * v)));
    const __m512i p1 = _mm512_add_epi16(p0, _mm512_set1_epi16(32));
    const __m256i c0 = _mm512_cvtepi16_epi8(_mm512_mulhi_epu16(p0, mul));
    const __m256i c1 = _mm512_cvtepi16_epi8(_mm512_mulhi_epu16(p1, mul));
    idx[v] = _mm512_inserti64x4(_mm512_castsi256_si512(c0), c1, 1);
    for (size_t i = 0; i < a; i++) {
      const size_t s = (i + a * 64 - (64 * v) % a) % a;
      mask[v][i] = base << s;
    }
  }
  __m512i r[TR_MAX_ROWS];
  for (size_t j = 0; j < b; j += 64) {
    const size_t w = b - j < 64 ? b - j : 64;
    const __mmask64 in = w == 64 ? ~(__mmask64)0 : ((__mmask64)1 << w) - 1;
    for (size_t i = 0; i < a; i++) r[i] = _mm512_maskz_loadu_epi8(in, x + i * x_stride + j);
    uint8_t *out = y + j * a;
    const size_t bytes = w * a;
    for (size_t v = 0; v < a && 64 * v < bytes; v++) {
      __m512i o = _mm512_setzero_si512();
      for (size_t i = 0; i < a; i++) o = _mm512_mask_permutexvar_epi8(o, mask[v][i], idx[v], r[i]);
      const size_t left = bytes - 64 * v;
      const __mmask64 m = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
      _mm512_mask_storeu_epi8(out + 64 * v, m, o);
    }
  }
}
