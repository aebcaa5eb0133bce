/* f32-rminmax for AVX2: 4 x 8 lanes of minima and maxima, the tail on the scalar twin. vminps(v,
 * m) returns m when v is NaN (the second operand), as the twin's comparison keeps its bound. */
#include <immintrin.h>

#include "f32-rminmax/f32-rminmax.h"

void q8rt_f32_rminmax_ukernel__avx2(size_t n, const float *x, float *lo, float *hi) {
  __m256 l0 = _mm256_set1_ps(*lo), l1 = l0, l2 = l0, l3 = l0;
  __m256 h0 = _mm256_set1_ps(*hi), h1 = h0, h2 = h0, h3 = h0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    l0 = _mm256_min_ps(v0, l0);
    l1 = _mm256_min_ps(v1, l1);
    l2 = _mm256_min_ps(v2, l2);
    l3 = _mm256_min_ps(v3, l3);
    h0 = _mm256_max_ps(v0, h0);
    h1 = _mm256_max_ps(v1, h1);
    h2 = _mm256_max_ps(v2, h2);
    h3 = _mm256_max_ps(v3, h3);
  }
  l0 = _mm256_min_ps(_mm256_min_ps(l0, l1), _mm256_min_ps(l2, l3));
  h0 = _mm256_max_ps(_mm256_max_ps(h0, h1), _mm256_max_ps(h2, h3));
  float ls[8], hs[8];
  _mm256_storeu_ps(ls, l0);
  _mm256_storeu_ps(hs, h0);
  float l = ls[0], h = hs[0];
  for (int j = 1; j < 8; j++) {
    l = ls[j] < l ? ls[j] : l;
    h = hs[j] > h ? hs[j] : h;
  }
  q8rt_f32_rminmax_ukernel__scalar(n - i, x + i, &l, &h);
  *lo = l;
  *hi = h;
}
