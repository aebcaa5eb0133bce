/* f32-igemm in portable C, for CPUs without a SIMD variant: 4 rows x 4 columns of C in 16 local
 * accumulators for the whole k chain, each updated with fmaf exactly where the SIMD variants issue
 * their fused multiply-add, k ascending from +0.0f: the bits of the scalar twin. One panel (n <= 4);
 * each B row's 4 floats are read, the columns past n computed and dropped. */
#include <math.h>

#include "f32-igemm/f32-igemm.h"

void q8rt_f32_igemm_ukernel_4x4__scalar(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *const *b,
                                        float *c, size_t ldc) {
  for (size_t i = 0; i < m; i += 4) {
    const size_t mr = m - i < 4 ? m - i : 4;
    const float *a0 = a + i * lda;
    const float *a1 = mr > 1 ? a0 + lda : a0; /* rows past m repeat row 0 and are not stored */
    const float *a2 = mr > 2 ? a1 + lda : a0;
    const float *a3 = mr > 3 ? a2 + lda : a0;
    float acc[4][4] = {{0.0f}};
    for (size_t p = 0; p < k; p++) {
      const float *bp = b[p];
      const float av[4] = {a0[p], a1[p], a2[p], a3[p]};
      for (int r = 0; r < 4; r++) {
        for (int t = 0; t < 4; t++) acc[r][t] = fmaf(av[r], bp[t], acc[r][t]);
      }
    }
    for (size_t r = 0; r < mr; r++) {
      for (size_t t = 0; t < n; t++) c[(i + r) * ldc + t] = acc[r][t];
    }
  }
}
