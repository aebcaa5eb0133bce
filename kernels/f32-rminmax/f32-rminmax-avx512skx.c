/* f32-rminmax for AVX-512: 4 x 16 lanes of minima and maxima, the tail through masked loads that
 * fill the missing lanes with the running bound. vminps(v, m) returns m when v is NaN (the second
 * operand), as the twin's comparison keeps its bound. */
#include <immintrin.h>

#include "f32-rminmax/f32-rminmax.h"

void q8rt_f32_rminmax_ukernel__avx512skx(size_t n, const float *x, float *lo, float *hi) {
  __m512 l0 = _mm512_set1_ps(*lo), l1 = l0, l2 = l0, l3 = l0;
  __m512 h0 = _mm512_set1_ps(*hi), h1 = h0, h2 = h0, h3 = h0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    const __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
    l0 = _mm512_min_ps(v0, l0);
    l1 = _mm512_min_ps(v1, l1);
    l2 = _mm512_min_ps(v2, l2);
    l3 = _mm512_min_ps(v3, l3);
    h0 = _mm512_max_ps(v0, h0);
    h1 = _mm512_max_ps(v1, h1);
    h2 = _mm512_max_ps(v2, h2);
    h3 = _mm512_max_ps(v3, h3);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
    l0 = _mm512_min_ps(_mm512_mask_loadu_ps(l0, m, x + i), l0);
    h0 = _mm512_max_ps(_mm512_mask_loadu_ps(h0, m, x + i), h0);
  }
  l0 = _mm512_min_ps(_mm512_min_ps(l0, l1), _mm512_min_ps(l2, l3));
  h0 = _mm512_max_ps(_mm512_max_ps(h0, h1), _mm512_max_ps(h2, h3));
  *lo = _mm512_reduce_min_ps(l0);
  *hi = _mm512_reduce_max_ps(h0);
}
