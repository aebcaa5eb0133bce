/* f32-softmax-strided, AVX-512: 16 columns per pass, one per lane, the last pass under a mask
 * (masked loads and stores: nothing outside the n columns is read or written). The twin's 16 row
 * lanes are 16 registers (the loops over them unrolled, so no lane is indexed at run time): the
 * maximum with vmaxps(x, m) (x > m ? x : m, as the twin), folded in the twin's order; the exp of
 * q8rt-math.h (q8rt_exp16_avx512); the sums the same way; a NaN sum gives the quiet NaN in that
 * lane; then the products with 1 / sum. */
#include <immintrin.h>
#include <math.h>

#include "f32-softmax-strided/f32-softmax-strided.h"
#include "q8rt-exp-simd.h"

void q8rt_f32_softmax_strided_ukernel_16__avx512skx(size_t d, size_t n, size_t stride, const float *x, float *y) {
  const __m512 qnan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000));
  for (size_t j = 0; j < n; j += 16) {
    const size_t c = n - j < 16 ? n - j : 16;
    const __mmask16 mask = (__mmask16)((1u << c) - 1u);
    const float *xc = x + j;
    float *yc = y + j;
    __m512 m[16], a[16];
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++) m[l] = _mm512_set1_ps(-INFINITY), a[l] = _mm512_setzero_ps();
    for (size_t k0 = 0; k0 < d; k0 += 16) {
#pragma GCC unroll 16
      for (size_t l = 0; l < 16; l++) {
        if (k0 + l < d) m[l] = _mm512_max_ps(_mm512_maskz_loadu_ps(mask, xc + (k0 + l) * stride), m[l]);
      }
    }
#pragma GCC unroll 4
    for (int w = 8; w >= 1; w /= 2) {
#pragma GCC unroll 8
      for (int l = 0; l < w; l++) m[l] = _mm512_max_ps(m[l + w], m[l]);
    }
    const __m512 mx = m[0];
    for (size_t k0 = 0; k0 < d; k0 += 16) {
#pragma GCC unroll 16
      for (size_t l = 0; l < 16; l++) {
        if (k0 + l < d) {
          const size_t o = (k0 + l) * stride;
          const __m512 e = q8rt_exp16_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, xc + o), mx));
          _mm512_mask_storeu_ps(yc + o, mask, e);
          a[l] = _mm512_add_ps(a[l], e);
        }
      }
    }
#pragma GCC unroll 4
    for (int w = 8; w >= 1; w /= 2) {
#pragma GCC unroll 8
      for (int l = 0; l < w; l++) a[l] = _mm512_add_ps(a[l], a[l + w]);
    }
    const __mmask16 nan = _mm512_cmp_ps_mask(a[0], a[0], _CMP_UNORD_Q);
    const __m512 r = _mm512_div_ps(_mm512_set1_ps(1.0f), a[0]);
    for (size_t k = 0; k < d; k++) {
      const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, yc + k * stride), r);
      _mm512_mask_storeu_ps(yc + k * stride, mask, _mm512_mask_mov_ps(v, nan, qnan));
    }
  }
}
