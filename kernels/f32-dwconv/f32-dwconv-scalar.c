/* f32-dwconv, the scalar twin: the definition in f32-dwconv.h, one output at a time. */
#include "f32-dwconv/f32-dwconv.h"

void q8rt_f32_dwconv_ukernel__scalar(size_t n, size_t rows, size_t kw, size_t s, size_t d, size_t pad, size_t in_w,
                                     const float *x, size_t x_rs, const float *w, float *y) {
  for (size_t o = 0; o < n; o++) {
    float acc = y[o];
    for (size_t r = 0; r < rows; r++) {
      const float *xr = x + r * x_rs, *wr = w + r * kw;
      for (size_t t = 0; t < kw; t++) {
        const size_t i = o * s + t * d; /* the input column plus pad */
        if (i >= pad && i - pad < in_w) acc = acc + xr[i - pad] * wr[t];
      }
    }
    y[o] = acc;
  }
}
