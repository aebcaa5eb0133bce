/* f32-gemmi: f32-gemm with A given by row pointers and column offsets (an indirect A): C[i][j] =
 * sum over p of a[i][aoff[p]] * B[p][j] for i < m, j < n, C row-major with row stride (elements)
 * ldc. For an unpadded convolution row i is an output pixel (a[i]: where its window starts in the
 * input) and aoff[p] where tap p (channel, kernel row, kernel column) lies from there, so the
 * lanes run along the output channels (B = W^T) and no im2col is written.
 * Each output is an fma chain over p ascending from +0.0f (the order of f32-gemm and of the float
 * Conv's reference loop). The variants read B packed as f32-gemm's (q8rt_f32_gemm_pack: panels
 * of NR columns, the last zero-padded) and take any n; the scalar twin reads B unpacked (row
 * stride ldb): it is the definition, the variants match it bit for bit. */
#ifndef Q8RT_F32_GEMMI_H
#define Q8RT_F32_GEMMI_H

#include <stddef.h>

typedef void (*q8rt_f32_gemmi_ukernel_fn)(size_t m, size_t n, size_t k, const float *const *a, const size_t *aoff,
                                          const float *packed_b, float *c, size_t ldc);

void q8rt_f32_gemmi_ukernel__scalar(size_t m, size_t n, size_t k, const float *const *a, const size_t *aoff,
                                    const float *b, size_t ldb, float *c, size_t ldc);

#define Q8RT_F32_GEMMI_UKERNEL(isa, fn, mr, nr)                                                                     \
  void fn(size_t m, size_t n, size_t k, const float *const *a, const size_t *aoff, const float *packed_b, float *c, \
          size_t ldc);
#include "f32-gemmi/f32-gemmi.inc"
#undef Q8RT_F32_GEMMI_UKERNEL

#endif
