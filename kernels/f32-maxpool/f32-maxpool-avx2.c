/* f32-maxpool, AVX2: 8 outputs per vector at stride 1 (other strides: the scalar twin). */
#include <immintrin.h>

#include "f32-maxpool/f32-maxpool.h"

void q8rt_f32_maxpool_ukernel__avx2(size_t n, size_t k, size_t s, size_t d, const float *x, float *y) {
  size_t o = 0;
  if (s == 1) {
    for (; o + 8 <= n; o += 8) {
      __m256 m = _mm256_loadu_ps(y + o);
      for (size_t t = 0; t < k; t++) m = _mm256_max_ps(_mm256_loadu_ps(x + o + t * d), m);
      _mm256_storeu_ps(y + o, m);
    }
  }
  if (o < n) q8rt_f32_maxpool_ukernel__scalar(n - o, k, s, d, x + o * s, y + o);
}
