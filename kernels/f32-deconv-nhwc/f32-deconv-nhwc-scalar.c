/* f32-deconv-nhwc, the scalar twin: the definition in f32-deconv-nhwc.h, one output at a time. */
#include "f32-deconv-nhwc/f32-deconv-nhwc.h"

void q8rt_f32_deconv_nhwc_ukernel__scalar(size_t n, size_t m, size_t k, const float *x, size_t x_ps, const float *w,
                                          size_t w_cs, float *y, size_t y_ps) {
  for (size_t j = 0; j < n; j++) {
    for (size_t i = 0; i < m; i++) {
      float dot = 0.0f;
      for (size_t c = 0; c < k; c++) dot = dot + x[j * x_ps + c] * w[c * w_cs + i];
      y[j * y_ps + i] = y[j * y_ps + i] + dot;
    }
  }
}
