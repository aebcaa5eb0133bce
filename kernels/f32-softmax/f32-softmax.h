/* f32-softmax: one contiguous row of n >= 1 floats, y = softmax(x):
 *   m   = the row maximum over 16 lanes (element i in lane i % 16, each lane m = x > m ? x : m from
 *         -inf, so NaN never becomes the maximum), the lanes folded pairwise (lane j with j + 8,
 *         then j + 4, j + 2, j + 1; the higher lane first in the comparison)
 *   e_i = q8rt_exp_nonpositive(x_i - m)        (q8rt-math.h: the same bits on every ISA)
 *   sum = the e_i summed in the same 16 lanes from +0, folded the same way
 *   y_i = e_i * (1 / sum)
 * The sum is NaN exactly when the row holds a NaN, or +inf (inf - inf), or only -inf; then every
 * output is the quiet NaN 0x7fc00000: which NaN the operations would carry depends on the compiler's
 * operand order for fma and on the ISA. y may be x (in place). Every variant gives the scalar twin's
 * bytes. */
#ifndef Q8RT_F32_SOFTMAX_H
#define Q8RT_F32_SOFTMAX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The NaN row of f32-softmax. */
static inline void q8rt_fill_nan(size_t n, float *y) {
  const uint32_t qnan = 0x7fc00000u;
  for (size_t i = 0; i < n; i++) memcpy(&y[i], &qnan, sizeof(qnan));
}

typedef void (*q8rt_f32_softmax_ukernel_fn)(size_t n, const float *x, float *y);

#define Q8RT_F32_SOFTMAX_UKERNEL(isa, fn) void fn(size_t n, const float *x, float *y);
#include "f32-softmax/f32-softmax.inc"
#undef Q8RT_F32_SOFTMAX_UKERNEL

#endif
