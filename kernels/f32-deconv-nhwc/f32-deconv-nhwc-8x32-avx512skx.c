/* f32-deconv-nhwc, AVX-512: 8 input pixels x 32 output channels of dots in 16 zmm accumulators for
 * the whole channel chain (a broadcast input value times two vectors of weights with vmulps, then
 * vaddps: the twin's operations in its order); channel tails load and store under masks. */
#include <immintrin.h>

#include "f32-deconv-nhwc/f32-deconv-nhwc.h"

static inline __mmask16 first_lanes(size_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u); }

/* y[i] += dots i < m of one output pixel. Out of line: keeps the unrolled tiles small for the
 * fuzz build's -O1 sanitizer compile. */
static __attribute__((noinline)) void add_pixel(float *y, __m512 d0, __m512 d1, __mmask16 m0, __mmask16 m1) {
  _mm512_mask_storeu_ps(y, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, y), d0));
  _mm512_mask_storeu_ps(y + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, y + 16), d1));
}

static inline __attribute__((always_inline)) void tile(const int mr, size_t m, size_t k, const float *x, size_t x_ps,
                                                       const float *w, size_t w_cs, float *y, size_t y_ps) {
  const __mmask16 m0 = first_lanes(m), m1 = m > 16 ? first_lanes(m - 16) : (__mmask16)0;
  __m512 a0[8], a1[8];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) a0[r] = a1[r] = _mm512_setzero_ps();
  for (size_t c = 0; c < k; c++) {
    const __m512 w0 = _mm512_maskz_loadu_ps(m0, w + c * w_cs), w1 = _mm512_maskz_loadu_ps(m1, w + c * w_cs + 16);
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
      const __m512 xv = _mm512_set1_ps(x[(size_t)r * x_ps + c]);
      a0[r] = _mm512_add_ps(a0[r], _mm512_mul_ps(xv, w0));
      a1[r] = _mm512_add_ps(a1[r], _mm512_mul_ps(xv, w1));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) add_pixel(y + (size_t)r * y_ps, a0[r], a1[r], m0, m1);
}

void q8rt_f32_deconv_nhwc_ukernel_8x32__avx512skx(size_t n, size_t m, size_t k, const float *x, size_t x_ps,
                                                  const float *w, size_t w_cs, float *y, size_t y_ps) {
  for (size_t i = 0; i < m; i += 32) {
    const size_t mc = m - i < 32 ? m - i : 32;
    const float *wi = w + i;
    size_t j = 0;
    for (; j + 8 <= n; j += 8) tile(8, mc, k, x + j * x_ps, x_ps, wi, w_cs, y + j * y_ps + i, y_ps);
    const float *xj = x + j * x_ps;
    float *yj = y + j * y_ps + i;
    switch (n - j) {
      case 7: tile(7, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 6: tile(6, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 5: tile(5, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 4: tile(4, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 3: tile(3, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 2: tile(2, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      case 1: tile(1, mc, k, xj, x_ps, wi, w_cs, yj, y_ps); break;
      default: break;
    }
  }
}
