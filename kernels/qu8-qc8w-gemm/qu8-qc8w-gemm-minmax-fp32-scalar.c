/* The scalar twin of the qu8-qc8w-gemm variants: reads the packed layout of any NR and defines
 * the bytes every optimized variant must produce (body in qu8-qc8w-gemm-scalar-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-scalar-impl.h"

void q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride,
                                                    const void *w, void *c, size_t c_stride,
                                                    const q8rt_qu8_requant_params *p, size_t nr) {
  gemm_scalar_minmax(mr, nc, kc, a, a_stride, w, c, c_stride, p, NULL, nr);
}
