/* f32-deconv, AVX2: 6 output channels x 16 input columns of dots in 12 ymm accumulators for the
 * whole channel chain (vmulps then vaddps per channel, the twin's operations in its order); column
 * tails load under masks (vmaskmovps). The dots are added into y with vaddps at output stride 1,
 * one by one otherwise. */
#include <immintrin.h>

#include "f32-deconv/f32-deconv.h"

static inline __m256i lane_mask(size_t lanes) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)lanes), idx);
}

static inline __attribute__((always_inline)) void tile(const int mr, size_t n, size_t k, const float *x, size_t x_cs,
                                                       const float *w, size_t w_cs, size_t w_ms, float *y, size_t y_ms,
                                                       size_t y_s) {
  const __m256i m0 = lane_mask(n), m1 = lane_mask(n > 8 ? n - 8 : 0);
  __m256 a0[6], a1[6];
#pragma GCC unroll 6
  for (int r = 0; r < mr; r++) a0[r] = a1[r] = _mm256_setzero_ps();
  for (size_t c = 0; c < k; c++) {
    const __m256 x0 = _mm256_maskload_ps(x + c * x_cs, m0), x1 = _mm256_maskload_ps(x + c * x_cs + 8, m1);
    const float *wc = w + c * w_cs;
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
      const __m256 wv = _mm256_broadcast_ss(wc + (size_t)r * w_ms);
      a0[r] = _mm256_add_ps(a0[r], _mm256_mul_ps(x0, wv));
      a1[r] = _mm256_add_ps(a1[r], _mm256_mul_ps(x1, wv));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < mr; r++) {
    float *yr = y + (size_t)r * y_ms;
    if (y_s == 1) {
      _mm256_maskstore_ps(yr, m0, _mm256_add_ps(_mm256_maskload_ps(yr, m0), a0[r]));
      _mm256_maskstore_ps(yr + 8, m1, _mm256_add_ps(_mm256_maskload_ps(yr + 8, m1), a1[r]));
    } else {
      float d[16];
      _mm256_storeu_ps(d, a0[r]);
      _mm256_storeu_ps(d + 8, a1[r]);
      for (size_t j = 0; j < n; j++) yr[j * y_s] = yr[j * y_s] + d[j];
    }
  }
}

void q8rt_f32_deconv_ukernel_6x16__avx2(size_t m, size_t n, size_t k, const float *x, size_t x_cs, const float *w,
                                        size_t w_cs, size_t w_ms, float *y, size_t y_ms, size_t y_s) {
  for (size_t j = 0; j < n; j += 16) {
    const size_t nc = n - j < 16 ? n - j : 16;
    const float *xj = x + j;
    float *yj = y + j * y_s;
    size_t i = 0;
    for (; i + 6 <= m; i += 6) tile(6, nc, k, xj, x_cs, w + i * w_ms, w_cs, w_ms, yj + i * y_ms, y_ms, y_s);
    const float *wi = w + i * w_ms;
    float *yi = yj + i * y_ms;
    switch (m - i) {
      case 5: tile(5, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 4: tile(4, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 3: tile(3, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 2: tile(2, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 1: tile(1, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      default: break;
    }
  }
}
