/* The scalar twin of f32-vmulcaddc. */
#include "f32-vmulcaddc/f32-vmulcaddc.h"

void q8rt_f32_vmulcaddc_ukernel__scalar(size_t n, const float *x, float s, float b, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = x[i] * s + b;
}
