/* f32-gemmi, AVX-512: 8 rows x 32 columns of C held in 16 zmm accumulators for the whole k chain
 * (f32-gemm's tile with A read through row pointers and column offsets): per k one offset, the
 * packed panel's two 16-float rows and 8 broadcasts, then 16 vfmadd231ps — the exactly rounded fma
 * of the scalar twin, in the same k order. Masked stores keep C's columns past n untouched; a
 * last panel of at most 16 columns runs only its first 16 lanes; row edges take a shorter tile.
 * The row loops carry `#pragma GCC unroll` (see f32-gemm's AVX-512 variant). */
#include <immintrin.h>

#include "f32-gemmi/f32-gemmi.h"

static inline __attribute__((always_inline)) void tile(const int mr, const int half, size_t k, const float *const *a,
                                                       const size_t *aoff, const float *b, float *c, size_t ldc,
                                                       __mmask16 m0, __mmask16 m1) {
  __m512 acc0[8], acc1[8];
  const float *ar[8];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) {
    acc0[r] = acc1[r] = _mm512_setzero_ps();
    ar[r] = a[r];
  }
  for (size_t p = 0; p < k; p++) {
    const size_t o = aoff[p];
    const __m512 b0 = _mm512_loadu_ps(b + p * 32);
    const __m512 b1 = half ? b0 : _mm512_loadu_ps(b + p * 32 + 16);
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
      const __m512 av = _mm512_set1_ps(ar[r][o]);
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

static inline __attribute__((always_inline)) void panel(const int half, size_t m, size_t k, const float *const *a,
                                                        const size_t *aoff, const float *bj, float *c, size_t ldc,
                                                        __mmask16 m0, __mmask16 m1) {
  size_t i = 0;
  for (; i + 8 <= m; i += 8) tile(8, half, k, a + i, aoff, bj, c + i * ldc, ldc, m0, m1);
  const float *const *ai = a + i;
  float *ci = c + i * ldc;
  switch (m - i) {
    case 7: tile(7, half, k, ai, aoff, bj, ci, ldc, m0, m1); break;
    case 6: tile(6, half, k, ai, aoff, bj, ci, ldc, m0, m1); break;
    case 5: tile(5, half, k, ai, aoff, bj, ci, ldc, m0, m1); break;
    case 4: tile(4, half, k, ai, aoff, bj, ci, ldc, m0, m1); break;
    case 3: tile(3, half, k, ai, aoff, bj, ci, ldc, m0, m1); break;
    case 2: tile(2, half, k, ai, aoff, bj, ci, ldc, m0, m1); break;
    case 1: tile(1, half, k, ai, aoff, bj, ci, ldc, m0, m1); break;
    default: break;
  }
}

void q8rt_f32_gemmi_ukernel_8x32__avx512skx(size_t m, size_t n, size_t k, const float *const *a, const size_t *aoff,
                                            const float *packed_b, float *c, size_t ldc) {
  for (size_t j = 0; j < n; j += 32) {
    const size_t nr = n - j < 32 ? n - j : 32;
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? (__mmask16)0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    const float *bj = packed_b + j * k; /* panel j / NR */
    if (nr <= 16) {
      panel(1, m, k, a, aoff, bj, c + j, ldc, m0, m1);
    } else {
      panel(0, m, k, a, aoff, bj, c + j, ldc, m0, m1);
    }
  }
}
