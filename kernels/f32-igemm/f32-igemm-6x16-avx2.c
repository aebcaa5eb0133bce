/* f32-igemm, AVX2 + FMA3: 6 rows x 16 columns of C in 12 ymm accumulators for the whole k chain;
 * each k step loads B's row from wherever its pointer says (two 8-float loads). vmaskmovps stores
 * keep C's columns past n untouched; row edges take a shorter tile. vfmadd231ps is the exactly
 * rounded fma of the scalar twin, in the same k order. `#pragma GCC unroll` as in f32-gemm's AVX2
 * variant (keeps the accumulators in registers). */
#include <immintrin.h>

#include "f32-igemm/f32-igemm.h"

static inline __m256i lane_mask(size_t lanes) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)lanes), idx);
}

static inline __attribute__((always_inline)) void tile(const int mr, size_t k, const float *a, size_t lda,
                                                       const float *const *b, float *c, size_t ldc, __m256i m0,
                                                       __m256i m1) {
  __m256 acc0[6], acc1[6];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) acc0[r] = acc1[r] = _mm256_setzero_ps();
  for (size_t p = 0; p < k; p++) {
    const float *bp = b[p];
    const __m256 b0 = _mm256_loadu_ps(bp);
    const __m256 b1 = _mm256_loadu_ps(bp + 8);
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

void q8rt_f32_igemm_ukernel_6x16__avx2(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *const *b,
                                       float *c, size_t ldc) {
  const __m256i m0 = lane_mask(n), m1 = lane_mask(n > 8 ? n - 8 : 0);
  size_t i = 0;
  for (; i + 6 <= m; i += 6) tile(6, k, a + i * lda, lda, b, c + i * ldc, ldc, m0, m1);
  const float *ai = a + i * lda;
  float *ci = c + i * ldc;
  switch (m - i) {
    case 5: tile(5, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 4: tile(4, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 3: tile(3, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 2: tile(2, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 1: tile(1, k, ai, lda, b, ci, ldc, m0, m1); break;
    default: break;
  }
}
