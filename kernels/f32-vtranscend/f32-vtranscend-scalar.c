/* The scalar twin of f32-vtranscend: the fmath.c functions themselves (and Elu, Selu on q8rt_expf). */
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

void q8rt_f32_velu_ukernel__scalar(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  const float alpha = p->alpha;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    y[i] = v >= 0.0f ? v : alpha * (q8rt_expf(v) - 1.0f);
  }
}

void q8rt_f32_vselu_ukernel__scalar(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p) {
  const float alpha = p->alpha, gamma = p->gamma;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    y[i] = v > 0.0f ? gamma * v : gamma * (alpha * (q8rt_expf(v) - 1.0f));
  }
}
