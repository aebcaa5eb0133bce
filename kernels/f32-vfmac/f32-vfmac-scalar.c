/* c[j] = fma(a, b[j], c[j]): one exactly rounded multiply-add per element (the float MatMul's
 * inner step, an fma chain over k per output, as ONNX Runtime's MLAS SGEMM computes it). */
#include <math.h>

#include "q8rt-kernels.h"

void q8rt_f32_vfmac_ukernel__scalar(size_t n, float a, const float *b, float *c) {
  for (size_t j = 0; j < n; j++) c[j] = fmaf(a, b[j], c[j]);
}
