/* f32-gemm, AVX2 + FMA3: 6 rows x 16 columns of C in 12 ymm accumulators for the whole k chain.
 * B comes in packed 16-column panels (the last zero-padded); vmaskmovps stores keep C's columns
 * past n untouched; row edges take a shorter tile. vfmadd231ps is the exactly rounded fma of the scalar twin, in the
 * same k order.
 * The row loops carry `#pragma GCC unroll`: GCC 12 at -O2 does not unroll them on its own and then
 * keeps the accumulator arrays on the stack (a load and a store around every fma, measured 2.5x
 * slower on a 96->24 3x3 float Conv). */
#include <immintrin.h>

#include "f32-gemm/f32-gemm.h"

static inline __m256i lane_mask(size_t lanes) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)lanes), idx);
}

static inline __attribute__((always_inline)) void tile(const int mr, size_t k, const float *a, size_t lda,
                                                       const float *b, float *c, size_t ldc, __m256i m0, __m256i m1) {
  __m256 acc0[6], acc1[6];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) acc0[r] = acc1[r] = _mm256_setzero_ps();
  for (size_t p = 0; p < k; p++) {
    const __m256 b0 = _mm256_loadu_ps(b + p * 16);
    const __m256 b1 = _mm256_loadu_ps(b + p * 16 + 8);
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
      const __m256 av = _mm256_broadcast_ss(a + (size_t)r * lda + p);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) {
    _mm256_maskstore_ps(c + (size_t)r * ldc, m0, acc0[r]);
    _mm256_maskstore_ps(c + (size_t)r * ldc + 8, m1, acc1[r]);
  }
}

void q8rt_f32_gemm_ukernel_6x16__avx2(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed_b,
                                      float *c, size_t ldc) {
  for (size_t j = 0; j < n; j += 16) {
    const size_t nr = n - j < 16 ? n - j : 16;
    const __m256i m0 = lane_mask(nr), m1 = lane_mask(nr > 8 ? nr - 8 : 0);
    const float *bj = packed_b + j * k; /* panel j / NR */
    size_t i = 0;
    for (; i + 6 <= m; i += 6) tile(6, k, a + i * lda, lda, bj, c + i * ldc + j, ldc, m0, m1);
    const float *ai = a + i * lda;
    float *ci = c + i * ldc + j;
    switch (m - i) {
      case 5: tile(5, k, ai, lda, bj, ci, ldc, m0, m1); break;
      case 4: tile(4, k, ai, lda, bj, ci, ldc, m0, m1); break;
      case 3: tile(3, k, ai, lda, bj, ci, ldc, m0, m1); break;
      case 2: tile(2, k, ai, lda, bj, ci, ldc, m0, m1); break;
      case 1: tile(1, k, ai, lda, bj, ci, ldc, m0, m1); break;
      default: break;
    }
  }
}
