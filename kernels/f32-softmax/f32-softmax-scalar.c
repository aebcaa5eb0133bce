/* The scalar twin of f32-softmax (f32-softmax.h has the definition, lanes and folding order). */
#include <math.h>

#include "f32-softmax/f32-softmax.h"
#include "q8rt-math.h"

void q8rt_f32_softmax_ukernel__scalar(size_t n, const float *x, float *y) {
  float m[16], acc[16];
  for (int j = 0; j < 16; j++) m[j] = -INFINITY, acc[j] = 0.0f;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    m[i % 16] = v > m[i % 16] ? v : m[i % 16];
  }
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) m[j] = m[j + w] > m[j] ? m[j + w] : m[j];
  }
  const float mx = m[0];
  for (size_t i = 0; i < n; i++) {
    const float e = q8rt_exp_nonpositive(x[i] - mx);
    y[i] = e;
    acc[i % 16] += e;
  }
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) acc[j] = acc[j] + acc[j + w];
  }
  if (acc[0] != acc[0]) { /* NaN in the row: which NaN the operations carry is not portable */
    q8rt_fill_nan(n, y);
    return;
  }
  const float r = 1.0f / acc[0];
  for (size_t i = 0; i < n; i++) y[i] = y[i] * r;
}
