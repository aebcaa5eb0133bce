/* f32-igemm, AVX-512: 8 rows x 32 columns of C held in 16 zmm accumulators for the whole k chain;
 * each k step loads B's row from wherever its pointer says (two 16-float loads), broadcasts one A
 * value per row and issues 16 vfmadd231ps — the exactly rounded fma of the scalar twin, in the same
 * k order. Masked stores keep C's columns past n untouched; row edges take a shorter tile. A call
 * of at most 16 columns (the last piece of a flat tile, a row of at most 16 outputs) runs only
 * the first 16 lanes: half the fmas and loads, each output's chain unchanged.
 * The row loops carry `#pragma GCC unroll` for the reason given in f32-gemm's AVX-512 variant
 * (otherwise GCC keeps the accumulators on the stack). */
#include <immintrin.h>

#include "f32-igemm/f32-igemm.h"

static inline __attribute__((always_inline)) void tile(const int mr, const int half, size_t k, const float *a,
                                                       size_t lda, const float *const *b, float *c, size_t ldc,
                                                       __mmask16 m0, __mmask16 m1) {
  __m512 acc0[8], acc1[8];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) acc0[r] = acc1[r] = _mm512_setzero_ps();
  for (size_t p = 0; p < k; p++) {
    const float *bp = b[p];
    const __m512 b0 = _mm512_loadu_ps(bp);
    const __m512 b1 = half ? b0 : _mm512_loadu_ps(bp + 16);
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
      const __m512 av = _mm512_set1_ps(a[(size_t)r * lda + p]);
      acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
      if (!half) acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) {
    _mm512_mask_storeu_ps(c + (size_t)r * ldc, m0, acc0[r]);
    if (!half) _mm512_mask_storeu_ps(c + (size_t)r * ldc + 16, m1, acc1[r]);
  }
}

static inline __attribute__((always_inline)) void rows(const int half, size_t m, size_t k, const float *a, size_t lda,
                                                       const float *const *b, float *c, size_t ldc, __mmask16 m0,
                                                       __mmask16 m1) {
  size_t i = 0;
  for (; i + 8 <= m; i += 8) tile(8, half, k, a + i * lda, lda, b, c + i * ldc, ldc, m0, m1);
  const float *ai = a + i * lda;
  float *ci = c + i * ldc;
  switch (m - i) {
    case 7: tile(7, half, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 6: tile(6, half, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 5: tile(5, half, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 4: tile(4, half, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 3: tile(3, half, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 2: tile(2, half, k, ai, lda, b, ci, ldc, m0, m1); break;
    case 1: tile(1, half, k, ai, lda, b, ci, ldc, m0, m1); break;
    default: break;
  }
}

void q8rt_f32_igemm_ukernel_8x32__avx512skx(size_t m, size_t n, size_t k, const float *a, size_t lda,
                                            const float *const *b, float *c, size_t ldc) {
  const __mmask16 m0 = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
  const __mmask16 m1 = n >= 32 ? (__mmask16)0xffff : n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
  if (n <= 16) {
    rows(1, m, k, a, lda, b, c, ldc, m0, m1);
  } else {
    rows(0, m, k, a, lda, b, c, ldc, m0, m1);
  }
}
