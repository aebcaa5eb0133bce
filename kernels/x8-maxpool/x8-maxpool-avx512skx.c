/* x8-maxpool, AVX-512 BW: 64 outputs per vector at stride 1, the tail under a mask; other strides:
 * the scalar twin. */
#include <immintrin.h>

#include "x8-maxpool/x8-maxpool.h"

#define X8_MAXPOOL_AVX512(name, T, scalar, vmax)                                                \
  void name(size_t n, size_t k, size_t s, size_t d, const T *x, T *y) {                         \
    if (s != 1) {                                                                               \
      scalar(n, k, s, d, x, y);                                                                 \
      return;                                                                                   \
    }                                                                                           \
    for (size_t o = 0; o < n; o += 64) {                                                        \
      const __mmask64 mask = n - o >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - o)) - 1);     \
      __m512i m = _mm512_maskz_loadu_epi8(mask, y + o);                                         \
      for (size_t t = 0; t < k; t++) m = vmax(m, _mm512_maskz_loadu_epi8(mask, x + o + t * d)); \
      _mm512_mask_storeu_epi8(y + o, mask, m);                                                  \
    }                                                                                           \
  }

X8_MAXPOOL_AVX512(q8rt_u8_maxpool_ukernel__avx512skx, uint8_t, q8rt_u8_maxpool_ukernel__scalar, _mm512_max_epu8)
X8_MAXPOOL_AVX512(q8rt_s8_maxpool_ukernel__avx512skx, int8_t, q8rt_s8_maxpool_ukernel__scalar, _mm512_max_epi8)
