/* The scalar twin of f32-igemm: the definition every variant matches bit for bit. */
#include <math.h>

#include "f32-igemm/f32-igemm.h"

void q8rt_f32_igemm_ukernel__scalar(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *const *b,
                                    float *c, size_t ldc) {
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (size_t p = 0; p < k; p++) acc = fmaf(a[i * lda + p], b[p][j], acc);
      c[i * ldc + j] = acc;
    }
  }
}
