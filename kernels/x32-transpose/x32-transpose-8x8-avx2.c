/* x32-transpose, 8x8 blocks in AVX registers (unpack, shuffle, then 128-bit lane swaps: bit moves
 * only). A block at the edge (fewer than 8 rows or columns left) takes the same path with masked
 * loads and stores (vmaskmovps neither reads nor writes the masked-off elements): a 14x14 or 7x7
 * plane's transposes (f32-dwconv-hwc, the W^T route) were half or all scalar edges. The block's
 * loops are unrolled by pragma: GCC -O2 kept them as loops over arrays on the stack, a store and
 * a reload per step (~3x the time). */
#include <immintrin.h>

#include "x32-transpose/x32-transpose.h"

static inline __attribute__((always_inline)) void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
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
}

static void block8(const uint32_t *x, size_t x_stride, uint32_t *y, size_t y_stride) {
  __m256 r[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps((const float *)(const void *)(x + (size_t)i * x_stride));
  transpose8(r);
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) _mm256_storeu_ps((float *)(void *)(y + (size_t)i * y_stride), r[i]);
}

/* ra rows of cb elements (1..8 each): the missing rows are zeros, never stored */
static void block8_edge(const uint32_t *x, size_t x_stride, uint32_t *y, size_t y_stride, size_t ra, size_t cb) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i cols = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)cb), lane);
  const __m256i rows = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)ra), lane);
  __m256 r[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    r[i] = (size_t)i < ra ? _mm256_maskload_ps((const float *)(const void *)(x + (size_t)i * x_stride), cols)
                          : _mm256_setzero_ps();
  }
  transpose8(r);
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    if ((size_t)i < cb) _mm256_maskstore_ps((float *)(void *)(y + (size_t)i * y_stride), rows, r[i]);
  }
}

void q8rt_x32_transpose_ukernel_8x8__avx2(size_t a, size_t b, const uint32_t *x, size_t x_stride, uint32_t *y,
                                          size_t y_stride) {
  for (size_t i = 0; i < a; i += 8) {
    const size_t ra = a - i < 8 ? a - i : 8;
    for (size_t j = 0; j < b; j += 8) {
      const size_t cb = b - j < 8 ? b - j : 8;
      if (ra == 8 && cb == 8) {
        block8(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride);
      } else {
        block8_edge(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride, ra, cb);
      }
    }
  }
}
