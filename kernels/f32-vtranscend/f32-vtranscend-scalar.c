/* The scalar twin of f32-vtranscend: the fmath.c functions themselves. */
#include "common/fmath.h"
#include "f32-vtranscend/f32-vtranscend.h"

void q8rt_f32_vexp_ukernel__scalar(size_t n, const float *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = q8rt_expf(x[i]);
}

void q8rt_f32_vlog_ukernel__scalar(size_t n, const float *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = q8rt_logf(x[i]);
}

void q8rt_f32_verf_ukernel__scalar(size_t n, const float *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = q8rt_erff(x[i]);
}
