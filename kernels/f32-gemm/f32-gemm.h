/* f32-gemm: C[m][n] = A[m][k] x B[k][n], A and C row-major with row strides (elements) lda, ldc.
 * Each output is an fma chain over k ascending from +0.0f, the order of ONNX Runtime's SGEMM that
 * q8rt's float MatMul reproduces. The variants keep MR x NR outputs in registers for the whole
 * chain and read B packed in column panels of NR (q8rt_f32_gemm_pack: panel after panel, each
 * k rows of NR contiguous floats, the last panel zero-padded), so each tile streams one contiguous
 * block instead of k rows a whole B row apart. The scalar twin reads B unpacked (row stride ldb):
 * it is the definition, the variants must match it bit for bit. */
#ifndef Q8RT_F32_GEMM_H
#define Q8RT_F32_GEMM_H

#include <stddef.h>

typedef void (*q8rt_f32_gemm_ukernel_fn)(size_t m, size_t n, size_t k, const float *a, size_t lda,
                                         const float *packed_b, float *c, size_t ldc);

/* Floats of B [k][n] packed for panels of nr columns. */
static inline size_t q8rt_f32_gemm_packed_size(size_t k, size_t n, size_t nr) { return (n + nr - 1) / nr * nr * k; }
void q8rt_f32_gemm_pack(size_t k, size_t n, size_t nr, const float *b, size_t ldb, float *packed);
/* The same panels from B given transposed: bt [n][k] with row stride ldbt (Gemm transB = 1). */
void q8rt_f32_gemm_pack_t(size_t k, size_t n, size_t nr, const float *bt, size_t ldbt, float *packed);

void q8rt_f32_gemm_ukernel__scalar(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                                   float *c, size_t ldc);

#define Q8RT_F32_GEMM_UKERNEL(isa, fn, mr, nr) \
  void fn(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed_b, float *c, size_t ldc);
#include "f32-gemm/f32-gemm.inc"
#undef Q8RT_F32_GEMM_UKERNEL

#endif
