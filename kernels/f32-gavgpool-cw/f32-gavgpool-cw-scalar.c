/* The scalar twin of f32-gavgpool-cw (contract in f32-gavgpool-cw.h): one plane at a time. */
#include "f32-gavgpool-cw/f32-gavgpool-cw.h"

void q8rt_f32_gavgpool_cw_ukernel__scalar(size_t pixels, size_t channels, const float *x, float count, float *y) {
  for (size_t c = 0; c < channels; c++) {
    const float *xc = x + c * pixels;
    float l0 = 0.0f, l1 = 0.0f, l2 = 0.0f, l3 = 0.0f;
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      l0 += xc[i];
      l1 += xc[i + 1];
      l2 += xc[i + 2];
      l3 += xc[i + 3];
    }
    float sum = (l0 + l2) + (l1 + l3);
    for (; i < pixels; i++) sum += xc[i];
    y[c] = sum / count;
  }
}
