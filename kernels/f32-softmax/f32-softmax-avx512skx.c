/* f32-softmax, AVX-512: the twin's 16 lanes are one register. The maximum with vmaxps(x, m) (x > m ?
 * x : m, as the twin), the exp of q8rt-math.h with its fmaf as vfmadd (vpslld builds 2^n), the sum
 * lane by lane, the tail of each pass under a mask (masked-off lanes keep their value: the twin adds
 * nothing there), the folds in the twin's order. */
#include <immintrin.h>
#include <math.h>

#include "f32-softmax/f32-softmax.h"
#include "q8rt-exp-simd.h"
#include "q8rt-math.h"

void q8rt_f32_softmax_ukernel__avx512skx(size_t n, const float *x, float *y) {
  __m512 m = _mm512_set1_ps(-INFINITY);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) m = _mm512_max_ps(_mm512_loadu_ps(x + i), m);
  const __mmask16 tail = (__mmask16)((1u << (n - i)) - 1u);
  if (i < n) m = _mm512_mask_max_ps(m, tail, _mm512_maskz_loadu_ps(tail, x + i), m);
  const __m256 m8 = _mm256_max_ps(_mm512_extractf32x8_ps(m, 1), _mm512_castps512_ps256(m));
  const __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(m8, 1), _mm256_castps256_ps128(m8));
  const __m128 m2 = _mm_max_ps(_mm_movehl_ps(m4, m4), m4);
  const __m512 vmx = _mm512_set1_ps(_mm_cvtss_f32(_mm_max_ps(_mm_movehdup_ps(m2), m2)));

  __m512 acc = _mm512_setzero_ps();
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 e = q8rt_exp16_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmx));
    _mm512_storeu_ps(y + i, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (i < n) {
    const __m512 e = q8rt_exp16_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), vmx));
    _mm512_mask_storeu_ps(y + i, tail, e);
    acc = _mm512_mask_add_ps(acc, tail, acc, e);
  }
  const __m256 a8 = _mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1));
  const __m128 a4 = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
  const __m128 a2 = _mm_add_ps(a4, _mm_movehl_ps(a4, a4));
  const float sum = _mm_cvtss_f32(_mm_add_ps(a2, _mm_movehdup_ps(a2)));

  if (sum != sum) {
    q8rt_fill_nan(n, y);
    return;
  }
  const __m512 r = _mm512_set1_ps(1.0f / sum);
  for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), r));
  if (i < n) _mm512_mask_storeu_ps(y + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + i), r));
}
