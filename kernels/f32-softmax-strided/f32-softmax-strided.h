/* f32-softmax-strided: Softmax along an axis that is not the last. n columns side by side: column j
 * (0 <= j < n) holds the d >= 1 floats x[k * stride + j], k = 0..d-1, and is one f32-softmax row
 * (f32-softmax.h: the maximum and the sum over 16 lanes, element k in lane k % 16, folded pairwise;
 * a NaN sum gives the quiet NaN 0x7fc00000 for the whole column), written to y[k * stride + j]. y
 * may be x. The SIMD variants put consecutive columns in vector lanes and keep the 16 lanes of the
 * row as 16 registers (or memory slots), so every lane does the scalar twin's operations for its
 * column in the same order: the same bits, with no transpose. */
#ifndef Q8RT_F32_SOFTMAX_STRIDED_H
#define Q8RT_F32_SOFTMAX_STRIDED_H

#include <stddef.h>
#include <stdint.h>

typedef void (*q8rt_f32_softmax_strided_ukernel_fn)(size_t d, size_t n, size_t stride, const float *x, float *y);

#define Q8RT_F32_SOFTMAX_STRIDED_UKERNEL(isa, fn) void fn(size_t d, size_t n, size_t stride, const float *x, float *y);
#include "f32-softmax-strided/f32-softmax-strided.inc"
#undef Q8RT_F32_SOFTMAX_STRIDED_UKERNEL

#endif
