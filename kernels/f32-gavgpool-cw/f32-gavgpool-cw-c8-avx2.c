/* f32-gavgpool-cw, AVX2 (128-bit vectors: one holds a plane's four running sums): 8 planes at a
 * time for eight independent add chains, then one at a time. */
#include <immintrin.h>

#include "f32-gavgpool-cw/f32-gavgpool-cw.h"

/* (s0 + s2) + (s1 + s3), then the last pixels, then the division: the twin's operations */
static inline float finish(__m128 v, const float *xc, size_t i, size_t pixels, float count) {
  const __m128 h = _mm_add_ps(v, _mm_movehl_ps(v, v));
  float sum = _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
  for (; i < pixels; i++) sum += xc[i];
  return sum / count;
}

void q8rt_f32_gavgpool_cw_ukernel_c8__avx2(size_t pixels, size_t channels, const float *x, float count, float *y) {
  size_t c = 0;
  for (; c + 8 <= channels; c += 8) {
    const float *x0 = x + c * pixels, *x1 = x0 + pixels, *x2 = x1 + pixels, *x3 = x2 + pixels;
    const float *x4 = x3 + pixels, *x5 = x4 + pixels, *x6 = x5 + pixels, *x7 = x6 + pixels;
    __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      a0 = _mm_add_ps(a0, _mm_loadu_ps(x0 + i));
      a1 = _mm_add_ps(a1, _mm_loadu_ps(x1 + i));
      a2 = _mm_add_ps(a2, _mm_loadu_ps(x2 + i));
      a3 = _mm_add_ps(a3, _mm_loadu_ps(x3 + i));
      a4 = _mm_add_ps(a4, _mm_loadu_ps(x4 + i));
      a5 = _mm_add_ps(a5, _mm_loadu_ps(x5 + i));
      a6 = _mm_add_ps(a6, _mm_loadu_ps(x6 + i));
      a7 = _mm_add_ps(a7, _mm_loadu_ps(x7 + i));
    }
    y[c] = finish(a0, x0, i, pixels, count);
    y[c + 1] = finish(a1, x1, i, pixels, count);
    y[c + 2] = finish(a2, x2, i, pixels, count);
    y[c + 3] = finish(a3, x3, i, pixels, count);
    y[c + 4] = finish(a4, x4, i, pixels, count);
    y[c + 5] = finish(a5, x5, i, pixels, count);
    y[c + 6] = finish(a6, x6, i, pixels, count);
    y[c + 7] = finish(a7, x7, i, pixels, count);
  }
  for (; c < channels; c++) {
    const float *xc = x + c * pixels;
    __m128 a = _mm_setzero_ps();
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) a = _mm_add_ps(a, _mm_loadu_ps(xc + i));
    y[c] = finish(a, xc, i, pixels, count);
  }
}
