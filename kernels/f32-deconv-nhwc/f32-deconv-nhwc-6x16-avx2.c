/* f32-deconv-nhwc, AVX2: 6 input pixels x 16 output channels of dots in 12 ymm accumulators for the
 * whole channel chain (a broadcast input value times two vectors of weights with vmulps, then
 * vaddps: the twin's operations in its order); channel tails load and store under masks
 * (vmaskmovps). */
#include <immintrin.h>

#include "f32-deconv-nhwc/f32-deconv-nhwc.h"

static inline __m256i lane_mask(size_t lanes) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)lanes), idx);
}

static __attribute__((noinline)) void add_pixel(float *y, __m256 d0, __m256 d1, __m256i m0, __m256i m1) {
  _mm256_maskstore_ps(y, m0, _mm256_add_ps(_mm256_maskload_ps(y, m0), d0));
  _mm256_maskstore_ps(y + 8, m1, _mm256_add_ps(_mm256_maskload_ps(y + 8, m1), d1));
}

static inline __attribute__((always_inline)) void tile(const int mr, size_t m, size_t k, const float *x, size_t x_ps,
                                                       const float *w, size_t w_cs, float *y, size_t y_ps) {
  const __m256i m0 = lane_mask(m), m1 = lane_mask(m > 8 ? m - 8 : 0);
  __m256 a0[6], a1[6];
#pragma GCC unroll 6
  for (int r = 0; r < mr; r++) a0[r] = a1[r] = _mm256_setzero_ps();
  for (size_t c = 0; c < k; c++) {
    const __m256 w0 = _mm256_maskload_ps(w + c * w_cs, m0), w1 = _mm256_maskload_ps(w + c * w_cs + 8, m1);
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
      const __m256 xv = _mm256_broadcast_ss(x + (size_t)r * x_ps + c);
      a0[r] = _mm256_add_ps(a0[r], _mm256_mul_ps(xv, w0));
      a1[r] = _mm256_add_ps(a1[r], _mm256_mul_ps(xv, w1));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < mr; r++) add_pixel(y + (size_t)r * y_ps, a0[r], a1[r], m0, m1);
}

void q8rt_f32_deconv_nhwc_ukernel_6x16__avx2(size_t n, size_t m, size_t k, const float *x, size_t x_ps, const float *w,
                                             size_t w_cs, float *y, size_t y_ps) {
  for (size_t i = 0; i < m; i += 16) {
    const size_t mc = m - i < 16 ? m - i : 16;
    const float *wi = w + i;
    size_t j = 0;
    for (; j + 6 <= n; j += 6) tile(6, mc, k, x + j * x_ps, x_ps, wi, w_cs, y + j * y_ps + i, y_ps);
    const float *xj = x + j * x_ps;
    float *yj = y + j * y_ps + i;
    switch (n - j) {
      case 5: tile(5, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 4: tile(4, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 3: tile(3, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 2: tile(2, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 1: tile(1, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      default: break;
    }
  }
}
