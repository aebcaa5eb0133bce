/* The scalar twin of f32-gemmi (B unpacked: the definition every variant matches bit for bit), and
 * the portable 4x4 tile on packed B. */
#include <math.h>

#include "f32-gemmi/f32-gemmi.h"

void q8rt_f32_gemmi_ukernel__scalar(size_t m, size_t n, size_t k, const float *const *a, const size_t *aoff,
                                    const float *b, size_t ldb, float *c, size_t ldc) {
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (size_t p = 0; p < k; p++) acc = fmaf(a[i][aoff[p]], b[p * ldb + j], acc);
      c[i * ldc + j] = acc;
    }
  }
}

void q8rt_f32_gemmi_ukernel_4x4__scalar(size_t m, size_t n, size_t k, const float *const *a, const size_t *aoff,
                                        const float *packed_b, float *c, size_t ldc) {
  for (size_t j = 0; j < n; j += 4) {
    const float *bj = packed_b + j * k; /* panel j / 4 */
    const size_t nr = n - j < 4 ? n - j : 4;
    for (size_t i = 0; i < m; i += 4) {
      const size_t mr = m - i < 4 ? m - i : 4;
      float acc[4][4] = {{0.0f}};
      for (size_t p = 0; p < k; p++) {
        for (size_t r = 0; r < mr; r++) {
          const float av = a[i + r][aoff[p]];
          for (size_t t = 0; t < 4; t++) acc[r][t] = fmaf(av, bj[p * 4 + t], acc[r][t]);
        }
      }
      for (size_t r = 0; r < mr; r++) {
        for (size_t t = 0; t < nr; t++) c[(i + r) * ldc + j + t] = acc[r][t];
      }
    }
  }
}
