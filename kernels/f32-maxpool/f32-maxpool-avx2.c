/* f32-maxpool, AVX2: 8 outputs per vector at stride 1; at stride 2 (3x3 and 2x2 stride-2 pooling)
 * the 16 inputs under 8 outputs as two vectors, their even elements picked by a shuffle and a lane
 * permute, for blocks that are not the last (the last block's odd element 15 may lie past the
 * row); the rest (other strides, tails): the scalar twin. */
#include <float.h>
#include <immintrin.h>

#include "f32-maxpool/f32-maxpool.h"

static void row(size_t n, size_t r, size_t k, size_t s, size_t d, size_t rs, const float *x, float *y, int acc) {
  size_t o = 0;
  if (s == 1) {
    for (; o + 8 <= n; o += 8) {
      __m256 m = acc ? _mm256_loadu_ps(y + o) : _mm256_set1_ps(-FLT_MAX);
      for (size_t i = 0; i < r; i++) {
        const float *xo = x + i * rs + o;
        for (size_t t = 0; t < k; t++) m = _mm256_max_ps(_mm256_loadu_ps(xo + t * d), m);
      }
      _mm256_storeu_ps(y + o, m);
    }
  } else if (s == 2) {
    for (; o + 8 < n; o += 8) {
      __m256 m = acc ? _mm256_loadu_ps(y + o) : _mm256_set1_ps(-FLT_MAX);
      for (size_t i = 0; i < r; i++) {
        const float *xo = x + i * rs + 2 * o;
        for (size_t t = 0; t < k; t++) {
          const float *p = xo + t * d;
          /* [p0 p2 p8 p10 | p4 p6 p12 p14] -> [p0 p2 p4 p6 | p8 p10 p12 p14] */
          const __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
          const __m256 v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
          m = _mm256_max_ps(v, m);
        }
      }
      _mm256_storeu_ps(y + o, m);
    }
  }
  if (o < n) q8rt_f32_maxpool_ukernel__scalar(n - o, 1, r, k, s, d, 0, rs, 0, x + o * s, y + o, acc);
}

void q8rt_f32_maxpool_ukernel__avx2(size_t n, size_t q, size_t r, size_t k, size_t s, size_t d, size_t xq, size_t rs,
                                    size_t yq, const float *x, float *y, int acc) {
  for (size_t j = 0; j < q; j++) row(n, r, k, s, d, rs, x + j * xq, y + j * yq, acc);
}
