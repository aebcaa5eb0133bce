/* The scalar twin of the int32-output qu8-qc8w-gemm variants (Q8RT_GEMM_UKERNEL_I32 in the .inc):
 * the same packed layout and accumulator as the requantizing twin, stored as int32 (the packed
 * scales are not read). ConvInteger and MatMulInteger outputs are these accumulators. */
#include <string.h>

#include "q8rt-kernels.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

void q8rt_qu8_qc8w_gemm_i32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride,
                                            const void *w, void *c, size_t c_stride, const q8rt_qu8_requant_params *p,
                                            size_t nr) {
  const size_t k4 = (kc + 3) / 4;
  const size_t block_bytes = nr * (sizeof(int32_t) + 4 * k4 + sizeof(float));
  const uint8_t *blk = (const uint8_t *)w;
  const uint8_t x_xor = p->x_xor;
  for (size_t n0 = 0; n0 < nc; n0 += nr, blk += block_bytes) {
    const size_t nb = nc - n0 < nr ? nc - n0 : nr;
    const int8_t *wp = (const int8_t *)(blk + nr * sizeof(int32_t));
    for (size_t j = 0; j < nb; j++) {
      uint32_t bias;
      memcpy(&bias, blk + j * sizeof(int32_t), sizeof(bias));
      for (size_t m = 0; m < mr; m++) {
        const uint8_t *ar = a + m * a_stride;
        uint32_t acc = bias; /* wraps like the int32 accumulators of the vector kernels */
        for (size_t k = 0; k < kc; k++) {
          const int32_t wv = wp[((k / 4) * nr + j) * 4 + (k % 4)];
          acc += (uint32_t)(ar[k] ^ x_xor) * (uint32_t)wv;
        }
        const int32_t v = (int32_t)acc;
        memcpy((uint8_t *)c + m * c_stride + (n0 + j) * sizeof(int32_t), &v, sizeof(v));
      }
    }
  }
}
