/* f32-rminmax: the minimum and maximum of a float32 row, NaNs ignored
 *   *lo = min(*lo, x[i]), *hi = max(*hi, x[i])  over i < n with x[i] not NaN
 * (the caller starts them at FLT_MAX / -FLT_MAX, or at a previous row's result). The values are
 * those of any order of comparisons; only the sign of a zero result may depend on the order (the
 * lanes' reduction), which DynamicQuantizeLinear's parameters never see: min(lo, 0) and
 * max(hi, 0) of +-0 give the same scale and zero point. DynamicQuantizeLinear
 * (src/ops/dynamic_quantize_linear.c) and the dynamically quantized LSTM read it. */
#ifndef Q8RT_F32_RMINMAX_H
#define Q8RT_F32_RMINMAX_H

#include <stddef.h>

typedef void (*q8rt_f32_rminmax_ukernel_fn)(size_t n, const float *x, float *lo, float *hi);

void q8rt_f32_rminmax_ukernel__scalar(size_t n, const float *x, float *lo, float *hi);
#define Q8RT_F32_RMINMAX_UKERNEL(isa, fn) void fn(size_t n, const float *x, float *lo, float *hi);
#include "f32-rminmax/f32-rminmax.inc"
#undef Q8RT_F32_RMINMAX_UKERNEL

#endif
