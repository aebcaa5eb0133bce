/* The scalar twin of the segmented-row qu8-qc8w-gemm variants: the contiguous twin's arithmetic
 * with byte k of row m read at a + m * a_stride + off[k / len] + k % len (body in
 * qu8-qc8w-gemm-scalar-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-scalar-impl.h"

void q8rt_qu8_qc8w_gemm_seg_minmax_fp32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                        size_t a_stride, const void *w, void *c, size_t c_stride,
                                                        const q8rt_qu8_requant_params *p, const q8rt_gemm_segs *segs,
                                                        size_t nr) {
  gemm_scalar_minmax(mr, nc, kc, a, a_stride, w, c, c_stride, p, segs, nr);
}
