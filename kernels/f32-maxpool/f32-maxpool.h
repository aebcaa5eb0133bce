/* f32-maxpool: q rows of n max-pool outputs (yq apart, their inputs xq apart), each output the
 * maximum over r input rows rs elements apart, rows then taps in order, starting from y (acc) or
 * from -FLT_MAX (!acc; y is not read):
 *   for j < q: for o < n: m = acc ? y[j * yq + o] : -FLT_MAX;
 *     for i < r: for t < k: v = x[j * xq + i * rs + o * s + t * d]; if (v > m) m = v;
 *     y[j * yq + o] = m
 * MaxPool calls it once per plane and window depth for the output rows whose windows lie inside
 * the input (the window's rows in the window's order; acc from the second depth on), once per
 * other output row, and per window row on the 8-bit kernels' plan, so each output sees exactly the
 * comparisons of the reference loop in the same order. The SIMD variants use max(v, m) (vmaxps
 * returns its second operand when the values are equal, ±0 included, or either is NaN), which is
 * that comparison lane by lane: same bytes. */
#ifndef Q8RT_F32_MAXPOOL_H
#define Q8RT_F32_MAXPOOL_H

#include <stddef.h>

typedef void (*q8rt_f32_maxpool_ukernel_fn)(size_t n, size_t q, size_t r, size_t k, size_t s, size_t d, size_t xq,
                                            size_t rs, size_t yq, const float *x, float *y, int acc);

void q8rt_f32_maxpool_ukernel__scalar(size_t n, size_t q, size_t r, size_t k, size_t s, size_t d, size_t xq, size_t rs,
                                      size_t yq, const float *x, float *y, int acc);

#define Q8RT_F32_MAXPOOL_UKERNEL(isa, fn)                                                                              \
  void fn(size_t n, size_t q, size_t r, size_t k, size_t s, size_t d, size_t xq, size_t rs, size_t yq, const float *x, \
          float *y, int acc);
#include "f32-maxpool/f32-maxpool.inc"
#undef Q8RT_F32_MAXPOOL_UKERNEL

#endif
