/* f32-igemm: f32-gemm with B given by row pointers (an indirection buffer, as XNNPACK's f32-igemm):
 * C[i][j] = sum over p of A[i][p] * b[p][j] for i < m, j < n, A and C row-major with row strides
 * (elements) lda, ldc. Row p of B is wherever b[p] points: for a stride-1 NCHW convolution, an
 * input row at the tap's offset, a shared row of zeros for a tap in the padding, or a small copy
 * where a row crosses the input's edge — so no im2col panel is written for most of B.
 * Each output is an fma chain over p ascending from +0.0f (the order of f32-gemm and of the float
 * Conv's reference loop). The variants handle one panel: n <= NR, and every b[p] points at NR
 * readable floats (columns from n on are loaded and their results dropped). The scalar twin reads
 * only n floats per row and takes any n: it is the definition, the variants match it bit for bit. */
#ifndef Q8RT_F32_IGEMM_H
#define Q8RT_F32_IGEMM_H

#include <stddef.h>

typedef void (*q8rt_f32_igemm_ukernel_fn)(size_t m, size_t n, size_t k, const float *a, size_t lda,
                                          const float *const *b, float *c, size_t ldc);

void q8rt_f32_igemm_ukernel__scalar(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *const *b,
                                    float *c, size_t ldc);

#define Q8RT_F32_IGEMM_UKERNEL(isa, fn, mr, nr) \
  void fn(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *const *b, float *c, size_t ldc);
#include "f32-igemm/f32-igemm.inc"
#undef Q8RT_F32_IGEMM_UKERNEL

#endif
