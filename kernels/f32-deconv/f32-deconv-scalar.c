/* f32-deconv, the scalar twin: the definition in f32-deconv.h, one output at a time. */
#include "f32-deconv/f32-deconv.h"

void q8rt_f32_deconv_ukernel__scalar(size_t m, size_t n, size_t k, const float *x, size_t x_cs, const float *w,
                                     size_t w_cs, size_t w_ms, float *y, size_t y_ms, size_t y_s) {
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      float dot = 0.0f;
      for (size_t c = 0; c < k; c++) dot = dot + x[c * x_cs + j] * w[c * w_cs + i * w_ms];
      y[i * y_ms + j * y_s] = y[i * y_ms + j * y_s] + dot;
    }
  }
}
