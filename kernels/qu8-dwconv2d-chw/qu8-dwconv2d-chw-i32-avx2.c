/* qu8-dwconv2d-chw for AVX2: 8 outputs per ymm, 4 ymm accumulators (32 outputs) kept in registers
 * over all taps. Each tap's bytes become int32 lanes whose high word is zero (stride 1: vpmovzxbd
 * of 8 bytes; stride 2: vpmovzxbw of 16 bytes, whose odd word each lane then ignores), vpmaddwd
 * against the word pair (w, 0) gives x * w exactly, vpaddd wraps like the twin (int32 sums in any
 * order). The tail (the outputs after the last whole group, and the last group of stride 2, whose
 * 16-byte load would pass the row's last byte) is one group of the row's last 8 outputs; rows of
 * fewer than 8 (9 at stride 2) outputs one group on a zeroed stack copy of the kernel rows' bytes
 * (kernel width x dilation up to 49); other strides run the scalar twin. */
#include <immintrin.h>
#include <string.h>

#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.h"

static inline __m256i dw_load8(const uint8_t *p, size_t sw, __m128i vxor) {
  if (sw == 1) {
    return _mm256_cvtepu8_epi32(_mm_xor_si128(_mm_loadl_epi64((const __m128i *)p), vxor));
  }
  return _mm256_cvtepu8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)p), vxor));
}

void q8rt_qu8_dwconv2d_chw_i32_ukernel__avx2(size_t ow, size_t kh, size_t kw, const uint8_t *x, size_t row_stride,
                                             size_t sw, size_t dw, uint8_t x_xor, const int32_t *w, int32_t bias,
                                             int32_t *y) {
  if (sw != 1 && sw != 2) {
    q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(ow, kh, kw, x, row_stride, sw, dw, x_xor, w, bias, y);
    return;
  }
  const __m128i vxor = _mm_set1_epi8((char)x_xor);
  const __m256i vbias = _mm256_set1_epi32(bias);
  /* stride 2 reads 16 bytes for 8 outputs: the group must not be the row's last */
  const size_t vec_end = sw == 1 ? ow : ow > 0 ? ow - 1 : 0;
  size_t ox = 0;
  for (; ox + 32 <= vec_end; ox += 32) {
    __m256i a0 = vbias, a1 = vbias, a2 = vbias, a3 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) {
        const __m256i vw = _mm256_set1_epi32((int32_t)(uint16_t)(int16_t)w[ky * kw + kx]);
        const uint8_t *p = r + kx * dw;
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(dw_load8(p, sw, vxor), vw));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(dw_load8(p + 8 * sw, sw, vxor), vw));
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(dw_load8(p + 16 * sw, sw, vxor), vw));
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(dw_load8(p + 24 * sw, sw, vxor), vw));
      }
    }
    _mm256_storeu_si256((__m256i *)(y + ox), a0);
    _mm256_storeu_si256((__m256i *)(y + ox + 8), a1);
    _mm256_storeu_si256((__m256i *)(y + ox + 16), a2);
    _mm256_storeu_si256((__m256i *)(y + ox + 24), a3);
  }
  for (; ox + 8 <= vec_end; ox += 8) {
    __m256i a0 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) {
        const __m256i vw = _mm256_set1_epi32((int32_t)(uint16_t)(int16_t)w[ky * kw + kx]);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(dw_load8(r + kx * dw, sw, vxor), vw));
      }
    }
    _mm256_storeu_si256((__m256i *)(y + ox), a0);
  }
  if (ox == ow) return;
  /* the last 8 outputs as one group ending at ow, recomputing some already stored (the same
   * sums): stride 1 reads exactly their bytes; stride 2 loads the 16 bytes from one before the
   * group's first (inside the row when the group does not start it, ow >= 9) and takes each
   * lane's high word, so nothing past the last byte the sums name is read */
  if (ow >= (sw == 1 ? 8u : 9u)) {
    const size_t t = ow - 8;
    __m256i a0 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + t * sw;
      for (size_t kx = 0; kx < kw; kx++) {
        const __m256i vw = _mm256_set1_epi32((int32_t)(uint16_t)(int16_t)w[ky * kw + kx]);
        __m256i v;
        if (sw == 1) {
          v = dw_load8(r + kx * dw, 1, vxor);
        } else {
          const __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r + kx * dw - 1)), vxor);
          v = _mm256_srli_epi32(_mm256_cvtepu8_epi16(b), 16);
        }
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(v, vw));
      }
    }
    _mm256_storeu_si256((__m256i *)(y + t), a0);
    return;
  }
  /* a row too short for a group (here ox = 0): each kernel row's bytes copied into a zeroed stack
   * row, one group computed there (lanes past ow read the zeros and are dropped) */
  if ((kw - 1) * dw <= 48) {
    uint8_t buf[64] = {0};
    const size_t span = (ow - 1) * sw + (kw - 1) * dw + 1; /* <= 7 * 2 + 48 + 1 */
    __m256i a0 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      memcpy(buf, x + ky * row_stride, span);
      for (size_t kx = 0; kx < kw; kx++) {
        const __m256i vw = _mm256_set1_epi32((int32_t)(uint16_t)(int16_t)w[ky * kw + kx]);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(dw_load8(buf + kx * dw, sw, vxor), vw));
      }
    }
    int32_t out[8];
    _mm256_storeu_si256((__m256i *)out, a0);
    memcpy(y, out, ow * sizeof(int32_t));
    return;
  }
  q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(ow - ox, kh, kw, x + ox * sw, row_stride, sw, dw, x_xor, w, bias, y + ox);
}
