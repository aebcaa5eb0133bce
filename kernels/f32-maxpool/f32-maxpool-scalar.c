/* The scalar twin of f32-maxpool: the reference loop's comparison. */
#include "f32-maxpool/f32-maxpool.h"

void q8rt_f32_maxpool_ukernel__scalar(size_t n, size_t k, size_t s, size_t d, const float *x, float *y) {
  for (size_t o = 0; o < n; o++) {
    float m = y[o];
    for (size_t t = 0; t < k; t++) {
      const float v = x[o * s + t * d];
      if (v > m) m = v;
    }
    y[o] = m;
  }
}
