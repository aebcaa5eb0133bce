/* x32-transpose, 8x8 blocks in AVX registers (unpack, shuffle, then 128-bit lane swaps: bit moves
 * only); the edges by the scalar loop. The block's loops are unrolled by pragma: GCC -O2 kept them
 * as loops over arrays on the stack, a store and reload per step (~3x the time on depthwise
 * blocks, f32-dwconv-hwc's copies). */
#include <immintrin.h>

#include "x32-transpose/x32-transpose.h"

static void block8(const uint32_t *x, size_t x_stride, uint32_t *y, size_t y_stride) {
  __m256 r[8], t[8], u[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps((const float *)(const void *)(x + (size_t)i * x_stride));
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; i++) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) _mm256_storeu_ps((float *)(void *)(y + (size_t)i * y_stride), r[i]);
}

void q8rt_x32_transpose_ukernel_8x8__avx2(size_t a, size_t b, const uint32_t *x, size_t x_stride, uint32_t *y,
                                          size_t y_stride) {
  const size_t a8 = a & ~(size_t)7, b8 = b & ~(size_t)7;
  for (size_t i = 0; i < a8; i += 8) {
    for (size_t j = 0; j < b8; j += 8) block8(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride);
    for (size_t ii = i; ii < i + 8; ii++) {
      for (size_t j = b8; j < b; j++) y[j * y_stride + ii] = x[ii * x_stride + j];
    }
  }
  for (size_t i = a8; i < a; i++) {
    for (size_t j = 0; j < b; j++) y[j * y_stride + i] = x[i * x_stride + j];
  }
}
