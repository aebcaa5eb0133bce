/* f32-gemvgemm: a one-row GEMM over four 32-column panels (a recurrent step's h * R^T) and a GEMM
 * tile of up to 8 rows x 32 columns (x * W^T rows for later steps) in one loop. The row streams
 * up to 128 KiB of packed B from L3 per call and leaves the core's fma units mostly idle; the tile
 * is compute-bound and reads little, so run side by side the tile's fmas partly fill the row's
 * wait for memory. The two computations share nothing:
 *   rc[32 q + j] = sum_{p < kr} h[p] * rp[q * kr * 32 + p * 32 + j]    q < 4, j < 32
 *   c[i * ldc + j] = sum_{p < kw} a[i * lda + p] * wp[p * 32 + j]      i < m (0..8), j < 32
 * each an fma chain over p ascending from +0.0f, as f32-gemm computes it on panels packed for
 * NR = 32 (q8rt_f32_gemm_pack_t): the same bits as q8rt_f32_gemm_ukernel__scalar. m = 0: the row
 * only (a and wp are not read). */
#ifndef Q8RT_F32_GEMVGEMM_H
#define Q8RT_F32_GEMVGEMM_H

#include <stddef.h>

typedef void (*q8rt_f32_gemvgemm_ukernel_fn)(size_t kr, const float *h, const float *rp, float *rc, size_t m, size_t kw,
                                             const float *a, size_t lda, const float *wp, float *c, size_t ldc);

void q8rt_f32_gemvgemm_ukernel__scalar(size_t kr, const float *h, const float *rp, float *rc, size_t m, size_t kw,
                                       const float *a, size_t lda, const float *wp, float *c, size_t ldc);

#define Q8RT_F32_GEMVGEMM_UKERNEL(isa, fn)                                                                        \
  void fn(size_t kr, const float *h, const float *rp, float *rc, size_t m, size_t kw, const float *a, size_t lda, \
          const float *wp, float *c, size_t ldc);
#include "f32-gemvgemm/f32-gemvgemm.inc"
#undef Q8RT_F32_GEMVGEMM_UKERNEL

#endif
