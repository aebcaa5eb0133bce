/* f32-dwconv-hwc, the scalar twin: the definition in f32-dwconv-hwc.h, one lane at a time. */
#include "f32-dwconv-hwc/f32-dwconv-hwc.h"

void q8rt_f32_dwconv_hwc_ukernel__scalar(size_t cb, size_t oh, size_t ow, size_t kh, size_t kw, size_t s1, size_t s2,
                                         size_t d1, size_t d2, const float *x, size_t x_rs, const float *w,
                                         const float *b, float *y) {
  for (size_t o1 = 0; o1 < oh; o1++) {
    for (size_t o2 = 0; o2 < ow; o2++) {
      for (size_t l = 0; l < cb; l++) {
        float acc = 0.0f;
        for (size_t r = 0; r < kh; r++) {
          for (size_t t = 0; t < kw; t++) {
            acc = acc + x[((o1 * s1 + r * d1) * x_rs + o2 * s2 + t * d2) * cb + l] * w[(r * kw + t) * cb + l];
          }
        }
        y[(o1 * ow + o2) * cb + l] = b != NULL ? acc + b[l] : acc;
      }
    }
  }
}
