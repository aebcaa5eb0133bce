/* f32-vmulcaddc: y[i] = x[i] * s + b over one row (BatchNormalization's per-channel affine step),
 * a rounded multiply then a rounded add (no fused multiply-add, as the rest of the library is
 * built with -ffp-contract=off), so every variant gives the scalar twin's bytes. */
#ifndef Q8RT_F32_VMULCADDC_H
#define Q8RT_F32_VMULCADDC_H

#include <stddef.h>

typedef void (*q8rt_f32_vmulcaddc_ukernel_fn)(size_t n, const float *x, float s, float b, float *y);

void q8rt_f32_vmulcaddc_ukernel__scalar(size_t n, const float *x, float s, float b, float *y);

#define Q8RT_F32_VMULCADDC_UKERNEL(isa, fn) void fn(size_t n, const float *x, float s, float b, float *y);
#include "f32-vmulcaddc/f32-vmulcaddc.inc"
#undef Q8RT_F32_VMULCADDC_UKERNEL

#endif
