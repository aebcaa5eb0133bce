/* The scalar twin of f32-softmax-strided: column by column, f32-softmax's scalar twin on the
 * column's elements in place. */
#include <math.h>

#include "f32-softmax-strided/f32-softmax-strided.h"
#include "f32-softmax/f32-softmax.h"
#include "q8rt-math.h"

void q8rt_f32_softmax_strided_ukernel__scalar(size_t d, size_t n, size_t stride, const float *x, float *y) {
  for (size_t j = 0; j < n; j++) {
    float m[16], acc[16];
    for (int l = 0; l < 16; l++) m[l] = -INFINITY, acc[l] = 0.0f;
    for (size_t k = 0; k < d; k++) {
      const float v = x[k * stride + j];
      m[k % 16] = v > m[k % 16] ? v : m[k % 16];
    }
    for (int w = 8; w >= 1; w /= 2) {
      for (int l = 0; l < w; l++) m[l] = m[l + w] > m[l] ? m[l + w] : m[l];
    }
    const float mx = m[0];
    for (size_t k = 0; k < d; k++) {
      const float e = q8rt_exp_nonpositive(x[k * stride + j] - mx);
      y[k * stride + j] = e;
      acc[k % 16] += e;
    }
    for (int w = 8; w >= 1; w /= 2) {
      for (int l = 0; l < w; l++) acc[l] = acc[l] + acc[l + w];
    }
    if (acc[0] != acc[0]) { /* NaN in the column: which NaN the operations carry is not portable */
      for (size_t k = 0; k < d; k++) q8rt_fill_nan(1, &y[k * stride + j]);
      continue;
    }
    const float r = 1.0f / acc[0];
    for (size_t k = 0; k < d; k++) y[k * stride + j] = y[k * stride + j] * r;
  }
}
