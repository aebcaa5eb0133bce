/* f32-softmax, AVX2: the twin's 16 lanes are two registers (lanes 0-7, 8-15), blocks of 16 in
 * order; the last n % 16 elements go through the twin's own scalar steps on the lanes stored to
 * memory (element i into lane i % 16), so every lane sees the twin's operations in its order. The
 * maximum with vmaxps(x, m), the exp of q8rt-math.h with its fmaf as vfmadd, the folds in the twin's
 * order. */
#include <immintrin.h>
#include <math.h>

#include "f32-softmax/f32-softmax.h"
#include "q8rt-exp-simd.h"
#include "q8rt-math.h"

void q8rt_f32_softmax_ukernel__avx2(size_t n, const float *x, float *y) {
  float lanes[16];
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
  }
  _mm256_storeu_ps(lanes, m0);
  _mm256_storeu_ps(lanes + 8, m1);
  for (size_t k = i; k < n; k++) lanes[k - i] = x[k] > lanes[k - i] ? x[k] : lanes[k - i];
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) lanes[j] = lanes[j + w] > lanes[j] ? lanes[j + w] : lanes[j];
  }
  const float mx = lanes[0];
  const __m256 vmx = _mm256_set1_ps(mx);

  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  for (i = 0; i + 16 <= n; i += 16) {
    const __m256 e0 = q8rt_exp8_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmx));
    const __m256 e1 = q8rt_exp8_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vmx));
    _mm256_storeu_ps(y + i, e0);
    _mm256_storeu_ps(y + i + 8, e1);
    a0 = _mm256_add_ps(a0, e0);
    a1 = _mm256_add_ps(a1, e1);
  }
  _mm256_storeu_ps(lanes, a0);
  _mm256_storeu_ps(lanes + 8, a1);
  for (size_t k = i; k < n; k++) {
    const float e = q8rt_exp_nonpositive(x[k] - mx);
    y[k] = e;
    lanes[k - i] += e;
  }
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) lanes[j] = lanes[j] + lanes[j + w];
  }

  if (lanes[0] != lanes[0]) {
    q8rt_fill_nan(n, y);
    return;
  }
  const float r = 1.0f / lanes[0];
  const __m256 vr = _mm256_set1_ps(r);
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), vr));
  for (; i < n; i++) y[i] = y[i] * r;
}
