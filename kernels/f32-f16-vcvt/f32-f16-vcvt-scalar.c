/* f32-f16-vcvt, the scalar twin: the element function of f32-f16-vcvt.h per element. */
#include "f32-f16-vcvt/f32-f16-vcvt.h"

void q8rt_f32_f16_vcvt_ukernel__scalar(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = q8rt_f32_f16_element(x[i]);
}
