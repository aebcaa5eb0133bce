/* f32-vmulcaddc, AVX-512: 16 elements per step (vmulps then vaddps), the tail under a mask. */
#include <immintrin.h>

#include "f32-vmulcaddc/f32-vmulcaddc.h"

void q8rt_f32_vmulcaddc_ukernel__avx512skx(size_t n, const float *x, float s, float b, float *y) {
  const __m512 vs = _mm512_set1_ps(s), vb = _mm512_set1_ps(b);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vs), vb));
  }
}
