/* f32-maxpool, AVX-512: 16 outputs per vector at stride 1, the tail under a mask (other strides:
 * the scalar twin). */
#include <immintrin.h>

#include "f32-maxpool/f32-maxpool.h"

void q8rt_f32_maxpool_ukernel__avx512skx(size_t n, size_t k, size_t s, size_t d, const float *x, float *y) {
  if (s != 1) {
    q8rt_f32_maxpool_ukernel__scalar(n, k, s, d, x, y);
    return;
  }
  for (size_t o = 0; o < n; o += 16) {
    const __mmask16 mask = n - o >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - o)) - 1u);
    __m512 m = _mm512_maskz_loadu_ps(mask, y + o);
    for (size_t t = 0; t < k; t++) m = _mm512_max_ps(_mm512_maskz_loadu_ps(mask, x + o + t * d), m);
    _mm512_mask_storeu_ps(y + o, mask, m);
  }
}
