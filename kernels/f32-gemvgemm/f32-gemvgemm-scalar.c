/* The scalar twin of f32-gemvgemm: the definition every variant matches bit for bit. */
#include <math.h>

#include "f32-gemvgemm/f32-gemvgemm.h"

void q8rt_f32_gemvgemm_ukernel__scalar(size_t kr, const float *h, const float *rp, float *rc, size_t m, size_t kw,
                                       const float *a, size_t lda, const float *wp, float *c, size_t ldc) {
  for (size_t q = 0; q < 4; q++) {
    for (size_t j = 0; j < 32; j++) {
      float acc = 0.0f;
      for (size_t p = 0; p < kr; p++) acc = fmaf(h[p], rp[q * kr * 32 + p * 32 + j], acc);
      rc[q * 32 + j] = acc;
    }
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < 32; j++) {
      float acc = 0.0f;
      for (size_t p = 0; p < kw; p++) acc = fmaf(a[i * lda + p], wp[p * 32 + j], acc);
      c[i * ldc + j] = acc;
    }
  }
}
