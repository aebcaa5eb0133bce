/* c[j] = fma(a, b[j], c[j]) with vfmadd: the same exactly rounded operation per element as the
 * scalar twin's fmaf, eight (then one) at a time, so results are identical. */
#include <immintrin.h>
#include <math.h>

#include "q8rt-kernels.h"

void q8rt_f32_vfmac_ukernel__avx2(size_t n, float a, const float *b, float *c) {
  const __m256 va = _mm256_set1_ps(a);
  size_t j = 0;
  for (; j + 32 <= n; j += 32) {
    __m256 c0 = _mm256_loadu_ps(c + j), c1 = _mm256_loadu_ps(c + j + 8);
    __m256 c2 = _mm256_loadu_ps(c + j + 16), c3 = _mm256_loadu_ps(c + j + 24);
    c0 = _mm256_fmadd_ps(va, _mm256_loadu_ps(b + j), c0);
    c1 = _mm256_fmadd_ps(va, _mm256_loadu_ps(b + j + 8), c1);
    c2 = _mm256_fmadd_ps(va, _mm256_loadu_ps(b + j + 16), c2);
    c3 = _mm256_fmadd_ps(va, _mm256_loadu_ps(b + j + 24), c3);
    _mm256_storeu_ps(c + j, c0);
    _mm256_storeu_ps(c + j + 8, c1);
    _mm256_storeu_ps(c + j + 16, c2);
    _mm256_storeu_ps(c + j + 24, c3);
  }
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(c + j, _mm256_fmadd_ps(va, _mm256_loadu_ps(b + j), _mm256_loadu_ps(c + j)));
  }
  for (; j < n; j++) {
    const __m128 r = _mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b[j]), _mm_set_ss(c[j]));
    c[j] = _mm_cvtss_f32(r);
  }
}
