/* f16-f32-vcvt, the scalar twin: the element function of f16-f32-vcvt.h per element. */
#include "f16-f32-vcvt/f16-f32-vcvt.h"

void q8rt_f16_f32_vcvt_ukernel__scalar(size_t n, const uint16_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = q8rt_f16_f32_element(x[i]);
}
