/* f32-maxpool: one row of max-pool outputs, accumulated into y, taps in order:
 *   for o < n: for t < k: if (x[o * s + t * d] > y[o]) y[o] = x[o * s + t * d]
 * MaxPool calls it once per input row of the window (rows in the window's order), with y first
 * set to -FLT_MAX, so each output sees exactly the comparisons of the reference loop in the same
 * order. The SIMD variants use max(v, y) (vmaxps returns its second operand when the values are
 * equal, ±0 included, or either is NaN), which is that comparison lane by lane: same bytes. */
#ifndef Q8RT_F32_MAXPOOL_H
#define Q8RT_F32_MAXPOOL_H

#include <stddef.h>

typedef void (*q8rt_f32_maxpool_ukernel_fn)(size_t n, size_t k, size_t s, size_t d, const float *x, float *y);

void q8rt_f32_maxpool_ukernel__scalar(size_t n, size_t k, size_t s, size_t d, const float *x, float *y);

#define Q8RT_F32_MAXPOOL_UKERNEL(isa, fn) void fn(size_t n, size_t k, size_t s, size_t d, const float *x, float *y);
#include "f32-maxpool/f32-maxpool.inc"
#undef Q8RT_F32_MAXPOOL_UKERNEL

#endif
