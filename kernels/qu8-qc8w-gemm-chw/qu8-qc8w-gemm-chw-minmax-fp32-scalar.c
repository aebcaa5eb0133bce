/* The scalar twin of the qu8-qc8w-gemm-chw variants (layouts in q8rt-kernels.h): reads a packed
 * weight block of any MR and defines the bytes every variant must produce. */
#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-math.h"

void q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *x,
                                                        size_t x_stride, const void *w, uint8_t *y, size_t y_stride,
                                                        const q8rt_qu8_requant_params *p, size_t MR) {
  const size_t k4 = (kc + 3) / 4;
  const uint8_t *wb = (const uint8_t *)w;
  const int8_t *wp = (const int8_t *)(wb + MR * sizeof(int32_t));
  const uint8_t *sp = wb + MR * (sizeof(int32_t) + 4 * k4);
  for (size_t m = 0; m < mr; m++) {
    uint32_t bias;
    float scale;
    memcpy(&bias, wb + m * sizeof(int32_t), sizeof(bias));
    memcpy(&scale, sp + m * sizeof(float), sizeof(scale));
    for (size_t n = 0; n < nc; n++) {
      uint32_t acc = bias; /* wraps like the int32 accumulators of the vector kernels */
      for (size_t k = 0; k < kc; k++) {
        const uint8_t xv = x[(k / 4) * x_stride + 4 * n + (k % 4)];
        acc += (uint32_t)xv * (uint32_t)(int32_t)wp[((k / 4) * MR + m) * 4 + (k % 4)];
      }
      const int32_t q = q8rt_round_clamp((float)(int32_t)acc * scale, p->y_lo, p->y_hi) + p->y_zero_point;
      y[m * y_stride + n] = p->y_signed ? (uint8_t)(int8_t)q : (uint8_t)q;
    }
  }
}
