/* x8-maxpool, AVX2: 32 outputs per vector at stride 1 (vpmaxub / vpmaxsb); other strides and the
 * tail: the scalar twin. */
#include <immintrin.h>

#include "x8-maxpool/x8-maxpool.h"

#define X8_MAXPOOL_AVX2(name, T, scalar, vmax)                                             \
  void name(size_t n, size_t k, size_t s, size_t d, const T *x, T *y) {                    \
    size_t o = 0;                                                                          \
    if (s == 1) {                                                                          \
      for (; o + 32 <= n; o += 32) {                                                       \
        __m256i m = _mm256_loadu_si256((const __m256i *)(const void *)(y + o));            \
        for (size_t t = 0; t < k; t++) {                                                   \
          m = vmax(m, _mm256_loadu_si256((const __m256i *)(const void *)(x + o + t * d))); \
        }                                                                                  \
        _mm256_storeu_si256((__m256i *)(void *)(y + o), m);                                \
      }                                                                                    \
    }                                                                                      \
    if (o < n) scalar(n - o, k, s, d, x + o * s, y + o);                                   \
  }

X8_MAXPOOL_AVX2(q8rt_u8_maxpool_ukernel__avx2, uint8_t, q8rt_u8_maxpool_ukernel__scalar, _mm256_max_epu8)
X8_MAXPOOL_AVX2(q8rt_s8_maxpool_ukernel__avx2, int8_t, q8rt_s8_maxpool_ukernel__scalar, _mm256_max_epi8)
