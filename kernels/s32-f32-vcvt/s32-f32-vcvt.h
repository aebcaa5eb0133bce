/* s32-f32-vcvt: the output stage of ConvInteger's NCHW routes, one output row at a time
 *   v[i] = acc[i] + c - e * colsum[i]                      (wrapping int32; colsum NULL: no term)
 *   mode INT32:      y[i] = v[i]                            (int32 output: ConvInteger as written)
 *   mode SCALE:      y[i] = (float)v[i] * scale             (float output: a fused Cast -> Mul)
 *   mode SCALE_BIAS: y[i] = (float)v[i] * scale + bias      (a fused Cast -> Mul -> Add)
 *   mode SCALE_BIASV: y[i] = (float)v[i] * scale + biasv[i] (the same, a bias per column: MatMul)
 * The float modes are the fused nodes' own float32 operations in their order: the int32 -> float
 * conversion rounds to nearest even, one multiply, one add, never a fused multiply-add (the
 * bytes equal running Cast, Mul and Add). acc and y may be the same buffer. */
#ifndef Q8RT_S32_F32_VCVT_H
#define Q8RT_S32_F32_VCVT_H

#include <stddef.h>
#include <stdint.h>

enum { Q8RT_S32_VCVT_INT32 = 0, Q8RT_S32_VCVT_SCALE = 1, Q8RT_S32_VCVT_SCALE_BIAS = 2, Q8RT_S32_VCVT_SCALE_BIASV = 3 };

typedef struct q8rt_s32_vcvt_params {
  uint32_t c, e;
  float scale, bias;
  int mode;
  const float *biasv; /* SCALE_BIASV: n values */
} q8rt_s32_vcvt_params;

typedef void (*q8rt_s32_f32_vcvt_ukernel_fn)(size_t n, const int32_t *acc, const uint32_t *colsum, void *y,
                                             const q8rt_s32_vcvt_params *p);

void q8rt_s32_f32_vcvt_ukernel__scalar(size_t n, const int32_t *acc, const uint32_t *colsum, void *y,
                                       const q8rt_s32_vcvt_params *p);
#define Q8RT_S32_F32_VCVT_UKERNEL(isa, fn) \
  void fn(size_t n, const int32_t *acc, const uint32_t *colsum, void *y, const q8rt_s32_vcvt_params *p);
#include "s32-f32-vcvt/s32-f32-vcvt.inc"
#undef Q8RT_S32_F32_VCVT_UKERNEL

#endif
