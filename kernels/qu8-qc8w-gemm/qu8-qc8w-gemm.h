/* qu8-qc8w-gemm helpers beyond q8rt-kernels.h: the pack-time proof that lets the vpmaddubsw
 * variants run exactly, and the prototypes of those variants. */
#ifndef Q8RT_QU8_QC8W_GEMM_H
#define Q8RT_QU8_QC8W_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "q8rt-kernels.h"

/* True when every pair of weights that vpmaddubsw adds into one int16, (k0, k1) and (k2, k3) of
 * each group of 4 k of each channel (a missing k past K counts as 0), has |w0| + |w1| <= 128.
 * Then 255 * |w0| + 255 * |w1| <= 32640 and the saturating int16 pair sum is exact for any u8
 * activations. w: [n][k], zero point removed, as given to q8rt_qu8_qc8w_gemm_pack. */
bool q8rt_qu8_qc8w_gemm_pairs_safe(size_t n, size_t k, const int8_t *w);

/* Variants listed in qu8-qc8w-gemm.inc with Q8RT_GEMM_UKERNEL_PAIRS_SAFE: a dispatcher may call
 * them only for weights where q8rt_qu8_qc8w_gemm_pairs_safe holds (checked once at pack time). */
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_PAIRS_SAFE(isa, fn, mr, nr)                                                  \
  void fn(size_t mr_, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, \
          size_t c_stride, const q8rt_qu8_requant_params *p);
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_PAIRS_SAFE

/* int32-output variants (Q8RT_GEMM_UKERNEL_I32): c is int32_t [mr][nc] with c_stride in bytes,
 * c[m][n] = the wrapping int32 accumulator bias'[n] + sum_k (a[m][k] ^ x_xor) * w[n][k]; only
 * p->x_xor is read. The scalar twin takes the packing's NR. */
void q8rt_qu8_qc8w_gemm_i32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride,
                                            const void *w, void *c, size_t c_stride, const q8rt_qu8_requant_params *p,
                                            size_t nr);
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_I32(isa, fn, mr, nr)                                                         \
  void fn(size_t mr_, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, \
          size_t c_stride, const q8rt_qu8_requant_params *p);
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_I32

/* Few-channel variants (Q8RT_GEMM_UKERNEL_FEWN, q8rt_qu8_gemm_ukernel_fn; weights packed with NR = 1). */
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_FEWN(isa, fn, mr, nr)                                                        \
  void fn(size_t mr_, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, \
          size_t c_stride, const q8rt_qu8_requant_params *p);
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_FEWN

/* Segmented-row variants (Q8RT_GEMM_UKERNEL_SEG, q8rt_qu8_gemm_seg_ukernel_fn). */
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_SEG(isa, fn, mr, nr)                                                         \
  void fn(size_t mr_, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, \
          size_t c_stride, const q8rt_qu8_requant_params *p, const q8rt_gemm_segs *segs);
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_SEG

#endif
