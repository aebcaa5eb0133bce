/* f32-softmax-strided, AVX2: 8 columns per pass, one per lane, the last pass through vmaskmovps
 * (masked-off lanes are neither read nor written; the full passes with plain loads and stores). The twin's 16 row lanes
 * are 16 registers (the loops over them unrolled, so no lane is indexed at run time): the maximum with vmaxps(x, m) (x
 * > m ? x : m, as the twin), folded in the twin's order; the exp of q8rt-math.h (q8rt_exp8_avx2); the sums the same
 * way; a NaN sum gives the quiet NaN in that lane; then the products with 1 / sum. */
#include <immintrin.h>
#include <math.h>

#include "f32-softmax-strided/f32-softmax-strided.h"
#include "q8rt-exp-simd.h"

static const int32_t g_mask_tab[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* vmaskmovps only for a partial pass: its store form is slow on some CPUs (AMD) */
static inline __attribute__((always_inline)) __m256 load8(const float *p, size_t c, __m256i mask) {
  return c == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}
static inline __attribute__((always_inline)) void store8(float *p, __m256 v, size_t c, __m256i mask) {
  if (c == 8) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, mask, v);
  }
}

void q8rt_f32_softmax_strided_ukernel_8__avx2(size_t d, size_t n, size_t stride, const float *x, float *y) {
  const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
  for (size_t j = 0; j < n; j += 8) {
    const size_t c = n - j < 8 ? n - j : 8;
    const __m256i mask = _mm256_loadu_si256((const __m256i *)(const void *)(g_mask_tab + 8 - c));
    const float *xc = x + j;
    float *yc = y + j;
    __m256 m[16], a[16];
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++) m[l] = _mm256_set1_ps(-INFINITY), a[l] = _mm256_setzero_ps();
    for (size_t k0 = 0; k0 < d; k0 += 16) {
#pragma GCC unroll 16
      for (size_t l = 0; l < 16; l++) {
        if (k0 + l < d) m[l] = _mm256_max_ps(load8(xc + (k0 + l) * stride, c, mask), m[l]);
      }
    }
#pragma GCC unroll 4
    for (int w = 8; w >= 1; w /= 2) {
#pragma GCC unroll 8
      for (int l = 0; l < w; l++) m[l] = _mm256_max_ps(m[l + w], m[l]);
    }
    const __m256 mx = m[0];
    for (size_t k0 = 0; k0 < d; k0 += 16) {
#pragma GCC unroll 16
      for (size_t l = 0; l < 16; l++) {
        if (k0 + l < d) {
          const size_t o = (k0 + l) * stride;
          const __m256 e = q8rt_exp8_avx2(_mm256_sub_ps(load8(xc + o, c, mask), mx));
          store8(yc + o, e, c, mask);
          a[l] = _mm256_add_ps(a[l], e);
        }
      }
    }
#pragma GCC unroll 4
    for (int w = 8; w >= 1; w /= 2) {
#pragma GCC unroll 8
      for (int l = 0; l < w; l++) a[l] = _mm256_add_ps(a[l], a[l + w]);
    }
    const __m256 nan = _mm256_cmp_ps(a[0], a[0], _CMP_UNORD_Q);
    const __m256 r = _mm256_div_ps(_mm256_set1_ps(1.0f), a[0]);
    for (size_t k = 0; k < d; k++) {
      const __m256 v = _mm256_mul_ps(load8(yc + k * stride, c, mask), r);
      store8(yc + k * stride, _mm256_blendv_ps(v, qnan, nan), c, mask);
    }
  }
}
