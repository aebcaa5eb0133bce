/* f32-vmulcaddc, AVX2: 16 elements per step (vmulps then vaddps), the tail by the scalar twin. */
#include <immintrin.h>

#include "f32-vmulcaddc/f32-vmulcaddc.h"

void q8rt_f32_vmulcaddc_ukernel__avx2(size_t n, const float *x, float s, float b, float *y) {
  const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(b);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(x + i), vs);
    const __m256 a1 = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8), vs);
    _mm256_storeu_ps(y + i, _mm256_add_ps(a0, vb));
    _mm256_storeu_ps(y + i + 8, _mm256_add_ps(a1, vb));
  }
  if (i < n) q8rt_f32_vmulcaddc_ukernel__scalar(n - i, x + i, s, b, y + i);
}
