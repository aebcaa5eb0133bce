/* f32-gemm, AVX-512: 8 rows x 32 columns of C held in 16 zmm accumulators for the whole k chain;
 * B's packed 32-column panel (k x 128 contiguous bytes) stays in L1 while the row tiles pass over
 * it. The last panel is zero-padded; masked stores keep C's columns past n untouched; row edges
 * take a shorter tile. A last panel of at most 16 columns (a 14x14 plane's 196 pixels end in 4)
 * runs only its first 16 lanes: half the fmas, each output's chain unchanged.
 * vfmadd231ps is the exactly rounded fma of the scalar twin, in the same k order.
 * The row loops carry `#pragma GCC unroll`: GCC 12 at -O2 does not unroll them on its own and then
 * keeps the accumulator arrays on the stack (a load and a store around every fma, measured 2.5x
 * slower on a 96->24 3x3 float Conv). */
#include <immintrin.h>

#include "f32-gemm/f32-gemm.h"

static inline __attribute__((always_inline)) void tile(const int mr, const int half, size_t k, const float *a,
                                                       size_t lda, const float *b, float *c, size_t ldc, __mmask16 m0,
                                                       __mmask16 m1) {
  __m512 acc0[8], acc1[8];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) acc0[r] = acc1[r] = _mm512_setzero_ps();
  for (size_t p = 0; p < k; p++) {
    const __m512 b0 = _mm512_loadu_ps(b + p * 32);
    const __m512 b1 = half ? b0 : _mm512_loadu_ps(b + p * 32 + 16);
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

static inline __attribute__((always_inline)) void panel(const int half, size_t m, size_t k, const float *a, size_t lda,
                                                        const float *bj, float *c, size_t ldc, __mmask16 m0,
                                                        __mmask16 m1) {
  size_t i = 0;
  for (; i + 8 <= m; i += 8) tile(8, half, k, a + i * lda, lda, bj, c + i * ldc, ldc, m0, m1);
  const float *ai = a + i * lda;
  float *ci = c + i * ldc;
  switch (m - i) {
    case 7: tile(7, half, k, ai, lda, bj, ci, ldc, m0, m1); break;
    case 6: tile(6, half, k, ai, lda, bj, ci, ldc, m0, m1); break;
    case 5: tile(5, half, k, ai, lda, bj, ci, ldc, m0, m1); break;
    case 4: tile(4, half, k, ai, lda, bj, ci, ldc, m0, m1); break;
    case 3: tile(3, half, k, ai, lda, bj, ci, ldc, m0, m1); break;
    case 2: tile(2, half, k, ai, lda, bj, ci, ldc, m0, m1); break;
    case 1: tile(1, half, k, ai, lda, bj, ci, ldc, m0, m1); break;
    default: break;
  }
}

/* One row (a recurrent step's h * R^T: 2048 columns over 4 MiB of B, bound by the core's L3 read
 * rate): each whole panel's two chains in a loop of their own, the row's values broadcast from a
 * register-held pointer; measured 4% faster per 4 MiB stream than the tile(1) loop (Zen 4, 32 KiB
 * panels, huge pages). The same fma per output in the same k order. */
static void row1(size_t n, size_t k, const float *a, const float *packed_b, float *c) {
  size_t j = 0;
  for (; j + 32 <= n; j += 32) {
    const float *b = packed_b + j * k;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    for (size_t p = 0; p < k; p++, b += 32) {
      const __m512 av = _mm512_set1_ps(a[p]);
      acc0 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b), acc0);
      acc1 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b + 16), acc1);
    }
    _mm512_storeu_ps(c + j, acc0);
    _mm512_storeu_ps(c + j + 16, acc1);
  }
  if (j < n) {
    const size_t nr = n - j;
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    if (nr <= 16) {
      tile(1, 1, k, a, 0, packed_b + j * k, c + j, 0, m0, m1);
    } else {
      tile(1, 0, k, a, 0, packed_b + j * k, c + j, 0, m0, m1);
    }
  }
}

void q8rt_f32_gemm_ukernel_8x32__avx512skx(size_t m, size_t n, size_t k, const float *a, size_t lda,
                                           const float *packed_b, float *c, size_t ldc) {
  if (m == 1) {
    row1(n, k, a, packed_b, c);
    return;
  }
  for (size_t j = 0; j < n; j += 32) {
    const size_t nr = n - j < 32 ? n - j : 32;
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? (__mmask16)0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    const float *bj = packed_b + j * k; /* panel j / NR */
    if (nr <= 16) {
      panel(1, m, k, a, lda, bj, c + j, ldc, m0, m1);
    } else {
      panel(0, m, k, a, lda, bj, c + j, ldc, m0, m1);
    }
  }
}
