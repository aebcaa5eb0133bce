/* q8-softmax-strided: QLinearSoftmax along an axis that is not the last. n columns side by side:
 * column j (0 <= j < n) holds the d >= 1 values x[k * stride + j], k = 0..d-1, and is one softmax row
 * of q8-softmax's formula (q8-softmax.h): its maximum, the sum of its table entries in k order, its
 * outputs to y[k * stride + j]. y may be x. The SIMD variants put consecutive columns in vector lanes,
 * so every lane does the scalar twin's operations for its own column in the same order: the same
 * bytes, with no transpose. */
#ifndef Q8RT_Q8_SOFTMAX_STRIDED_H
#define Q8RT_Q8_SOFTMAX_STRIDED_H

#include <stddef.h>
#include <stdint.h>

#include "q8-softmax/q8-softmax.h"

typedef void (*q8rt_q8_softmax_strided_ukernel_fn)(size_t d, size_t n, size_t stride, const uint8_t *x, uint8_t *y,
                                                   const float table[256], const q8rt_q8_softmax_params *p);

#define Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL(isa, fn)                                                   \
  void fn(size_t d, size_t n, size_t stride, const uint8_t *x, uint8_t *y, const float table[256], \
          const q8rt_q8_softmax_params *p);
#include "q8-softmax-strided/q8-softmax-strided.inc"
#undef Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL

#endif
