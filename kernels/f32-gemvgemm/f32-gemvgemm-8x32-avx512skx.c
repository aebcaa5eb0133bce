/* f32-gemvgemm, AVX-512: the row's four panels on 8 accumulators (two per panel, one k step of
 * each per iteration) and the tile's m <= 8 rows on 2 m accumulators, one k step of the tile per
 * iteration while both run, then whichever is longer alone. vfmadd231ps is the exactly rounded fma
 * of the scalar twin, in the same k order. */
#include <immintrin.h>

#include "f32-gemvgemm/f32-gemvgemm.h"

static inline __attribute__((always_inline)) void run(const int mr, size_t kr, const float *h, const float *rp,
                                                      float *rc, size_t kw, const float *a, size_t lda, const float *wp,
                                                      float *c, size_t ldc) {
  __m512 r[8], x0[8], x1[8];
#pragma GCC unroll 8
  for (int q = 0; q < 8; q++) r[q] = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int i = 0; i < mr; i++) x0[i] = x1[i] = _mm512_setzero_ps();
  const size_t kc = mr > 0 && kw < kr ? kw : kr;
  const float *b = rp;
  size_t p = 0;
  for (; p < kc; p++, b += 32) {
    const __m512 hv = _mm512_set1_ps(h[p]);
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
      r[2 * q] = _mm512_fmadd_ps(hv, _mm512_loadu_ps(b + (size_t)q * kr * 32), r[2 * q]);
      r[2 * q + 1] = _mm512_fmadd_ps(hv, _mm512_loadu_ps(b + (size_t)q * kr * 32 + 16), r[2 * q + 1]);
    }
    if (mr > 0) {
      const __m512 b0 = _mm512_loadu_ps(wp + p * 32), b1 = _mm512_loadu_ps(wp + p * 32 + 16);
#pragma GCC unroll 8
      for (int i = 0; i < mr; i++) {
        const __m512 av = _mm512_set1_ps(a[(size_t)i * lda + p]);
        x0[i] = _mm512_fmadd_ps(av, b0, x0[i]);
        x1[i] = _mm512_fmadd_ps(av, b1, x1[i]);
      }
    }
  }
  for (size_t pr = p; pr < kr; pr++, b += 32) {
    const __m512 hv = _mm512_set1_ps(h[pr]);
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
      r[2 * q] = _mm512_fmadd_ps(hv, _mm512_loadu_ps(b + (size_t)q * kr * 32), r[2 * q]);
      r[2 * q + 1] = _mm512_fmadd_ps(hv, _mm512_loadu_ps(b + (size_t)q * kr * 32 + 16), r[2 * q + 1]);
    }
  }
  if (mr > 0) {
    for (size_t pw = p; pw < kw; pw++) {
      const __m512 b0 = _mm512_loadu_ps(wp + pw * 32), b1 = _mm512_loadu_ps(wp + pw * 32 + 16);
#pragma GCC unroll 8
      for (int i = 0; i < mr; i++) {
        const __m512 av = _mm512_set1_ps(a[(size_t)i * lda + pw]);
        x0[i] = _mm512_fmadd_ps(av, b0, x0[i]);
        x1[i] = _mm512_fmadd_ps(av, b1, x1[i]);
      }
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < 8; q++) _mm512_storeu_ps(rc + q * 16, r[q]);
#pragma GCC unroll 8
  for (int i = 0; i < mr; i++) {
    _mm512_storeu_ps(c + (size_t)i * ldc, x0[i]);
    _mm512_storeu_ps(c + (size_t)i * ldc + 16, x1[i]);
  }
}

void q8rt_f32_gemvgemm_ukernel_8x32__avx512skx(size_t kr, const float *h, const float *rp, float *rc, size_t m,
                                               size_t kw, const float *a, size_t lda, const float *wp, float *c,
                                               size_t ldc) {
  switch (m) {
    case 0: run(0, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    case 1: run(1, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    case 2: run(2, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    case 3: run(3, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    case 4: run(4, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    case 5: run(5, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    case 6: run(6, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    case 7: run(7, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
    default: run(8, kr, h, rp, rc, kw, a, lda, wp, c, ldc); break;
  }
}
