/* The scalar twin of f32-maxpool: the reference loop's comparison. */
#include <float.h>

#include "f32-maxpool/f32-maxpool.h"

void q8rt_f32_maxpool_ukernel__scalar(size_t n, size_t q, size_t r, size_t k, size_t s, size_t d, size_t xq, size_t rs,
                                      size_t yq, const float *x, float *y, int acc) {
  for (size_t j = 0; j < q; j++, x += xq, y += yq) {
    for (size_t o = 0; o < n; o++) {
      float m = acc ? y[o] : -FLT_MAX;
      for (size_t i = 0; i < r; i++) {
        for (size_t t = 0; t < k; t++) {
          const float v = x[i * rs + o * s + t * d];
          if (v > m) m = v;
        }
      }
      y[o] = m;
    }
  }
}
