/* f32-maxpool, AVX-512: 16 outputs per vector, the tail under a mask. Stride 1: plain loads;
 * stride 2 (3x3 and 2x2 stride-2 pooling): the 32 inputs under 16 outputs loaded as two vectors
 * and their even elements picked by one permute; other strides: a gather. Masked loads and
 * gathers read only the elements the scalar twin reads (or, at stride 2, the odd ones between). */
#include <immintrin.h>
#include <stdint.h>

#include "f32-maxpool/f32-maxpool.h"

void q8rt_f32_maxpool_ukernel__avx512skx(size_t n, size_t k, size_t s, size_t d, const float *x, float *y) {
  if (s == 1) {
    for (size_t o = 0; o < n; o += 16) {
      const __mmask16 mask = n - o >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - o)) - 1u);
      __m512 m = _mm512_maskz_loadu_ps(mask, y + o);
      for (size_t t = 0; t < k; t++) m = _mm512_max_ps(_mm512_maskz_loadu_ps(mask, x + o + t * d), m);
      _mm512_mask_storeu_ps(y + o, mask, m);
    }
    return;
  }
  if (s == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (size_t o = 0; o < n; o += 16) {
      const size_t cnt = n - o >= 16 ? 16 : n - o;
      const __mmask16 mask = cnt == 16 ? (__mmask16)0xffff : (__mmask16)((1u << cnt) - 1u);
      /* inputs 0 .. 2 * cnt - 2 of the block: the last output's element and the odd ones between */
      const size_t span = 2 * cnt - 1;
      const __mmask16 mlo = span >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << span) - 1u);
      const __mmask16 mhi = span <= 16 ? (__mmask16)0 : (__mmask16)((1u << (span - 16)) - 1u);
      __m512 m = _mm512_maskz_loadu_ps(mask, y + o);
      const float *xo = x + 2 * o;
      if (mhi == 0) { /* at most 8 outputs: one load (a load under an all-zero mask cost ~0.19 us a call on this EPYC,
                         Zen 4) */
        for (size_t t = 0; t < k; t++)
          m = _mm512_max_ps(_mm512_permutexvar_ps(even, _mm512_maskz_loadu_ps(mlo, xo + t * d)), m);
      } else {
        for (size_t t = 0; t < k; t++) {
          const float *p = xo + t * d;
          const __m512 v =
              _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(mlo, p), even, _mm512_maskz_loadu_ps(mhi, p + 16));
          m = _mm512_max_ps(v, m);
        }
      }
      _mm512_mask_storeu_ps(y + o, mask, m);
    }
    return;
  }
  if (s > (size_t)(INT32_MAX / 16)) { /* the gather's int32 offsets */
    q8rt_f32_maxpool_ukernel__scalar(n, k, s, d, x, y);
    return;
  }
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32((int)s));
  for (size_t o = 0; o < n; o += 16) {
    const __mmask16 mask = n - o >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - o)) - 1u);
    __m512 m = _mm512_maskz_loadu_ps(mask, y + o);
    const float *xo = x + o * s;
    for (size_t t = 0; t < k; t++) {
      m = _mm512_max_ps(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, idx, xo + t * d, 4), m);
    }
    _mm512_mask_storeu_ps(y + o, mask, m);
  }
}
