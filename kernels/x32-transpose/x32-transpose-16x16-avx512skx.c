/* x32-transpose, 16x16 blocks in AVX-512 registers (unpack, shuffle, then two 128-bit lane
 * shuffles: bit moves only). A block at the edge (fewer than 16 rows or columns left) takes the
 * same path with masked loads and stores (masked-off elements are neither read nor written): the
 * depthwise channel-block route's rows of a 16-channel block (14 or 28 pixels) and its bands back
 * were half edges on the 8x8 AVX2 blocks. */
#include <immintrin.h>

#include "x32-transpose/x32-transpose.h"

static inline __attribute__((always_inline)) void block16(const uint32_t *x, size_t x_stride, uint32_t *y,
                                                          size_t y_stride, size_t ra, size_t cb) {
  const __mmask16 cols = (__mmask16)(cb >= 16 ? 0xffffu : (1u << cb) - 1u);
  const __mmask16 rows = (__mmask16)(ra >= 16 ? 0xffffu : (1u << ra) - 1u);
  __m512 r[16], t[16], u[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) {
    r[i] = (size_t)i < ra ? _mm512_maskz_loadu_ps(cols, (const float *)(const void *)(x + (size_t)i * x_stride))
                          : _mm512_setzero_ps();
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* u[4q + j], 128-bit lane k: rows 4q .. 4q + 3 of column 4k + j */
#pragma GCC unroll 4
  for (int q = 0; q < 4; q++) {
    u[4 * q + 0] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
    u[4 * q + 1] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0xEE);
    u[4 * q + 2] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
    u[4 * q + 3] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xEE);
  }
  /* column 4k + j: lane k of u[j], u[4 + j], u[8 + j], u[12 + j] */
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++) {
    const __m512 ab_lo = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 ab_hi = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 cd_lo = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 cd_hi = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(3, 2, 3, 2));
    r[j] = _mm512_shuffle_f32x4(ab_lo, cd_lo, _MM_SHUFFLE(2, 0, 2, 0));
    r[4 + j] = _mm512_shuffle_f32x4(ab_lo, cd_lo, _MM_SHUFFLE(3, 1, 3, 1));
    r[8 + j] = _mm512_shuffle_f32x4(ab_hi, cd_hi, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + j] = _mm512_shuffle_f32x4(ab_hi, cd_hi, _MM_SHUFFLE(3, 1, 3, 1));
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) {
    if ((size_t)i < cb) _mm512_mask_storeu_ps((float *)(void *)(y + (size_t)i * y_stride), rows, r[i]);
  }
}

static void block16_full(const uint32_t *x, size_t x_stride, uint32_t *y, size_t y_stride) {
  block16(x, x_stride, y, y_stride, 16, 16);
}
static void block16_edge(const uint32_t *x, size_t x_stride, uint32_t *y, size_t y_stride, size_t ra, size_t cb) {
  block16(x, x_stride, y, y_stride, ra, cb);
}

void q8rt_x32_transpose_ukernel_16x16__avx512skx(size_t a, size_t b, const uint32_t *x, size_t x_stride, uint32_t *y,
                                                 size_t y_stride) {
  for (size_t i = 0; i < a; i += 16) {
    const size_t ra = a - i < 16 ? a - i : 16;
    for (size_t j = 0; j < b; j += 16) {
      const size_t cb = b - j < 16 ? b - j : 16;
      if (ra == 16 && cb == 16) {
        block16_full(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride);
      } else {
        block16_edge(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride, ra, cb);
      }
    }
  }
}
