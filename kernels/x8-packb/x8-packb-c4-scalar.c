/* The scalar twin of x8-packb (contract in x8-packb.h). */
#include <string.h>

#include "x8-packb/x8-packb.h"

void q8rt_x8_packb_ukernel_c4__scalar(size_t k, size_t n, const uint8_t *x, size_t x_stride, uint8_t x_xor, size_t nr,
                                      uint32_t bias_base, uint32_t bias_mul, void *packed, uint32_t *colsum) {
  const size_t k4 = (k + 3) / 4;
  uint8_t *out = packed;
  for (size_t n0 = 0; n0 < n; n0 += nr) {
    const size_t nb = n - n0 < nr ? n - n0 : nr;
    uint8_t *bias = out;
    uint8_t *b = out + nr * sizeof(int32_t);
    for (size_t j = 0; j < nr; j++) {
      uint32_t sum = 0;
      for (size_t g = 0; g < k4; g++) {
        for (size_t i = 0; i < 4; i++) {
          const size_t kk = 4 * g + i;
          uint8_t v = 0;
          if (j < nb && kk < k) {
            const uint8_t u = x[kk * x_stride + n0 + j] ^ x_xor;
            sum += u;
            v = u ^ 0x80;
          }
          b[(g * nr + j) * 4 + i] = v;
        }
      }
      const uint32_t bj = j < nb ? bias_base - bias_mul * sum : 0u;
      memcpy(bias + j * sizeof(uint32_t), &bj, sizeof(bj));
      if (colsum != NULL && j < nb) colsum[n0 + j] = sum;
    }
    memset(b + k4 * nr * 4, 0, nr * sizeof(float));
    out += q8rt_x8_packb_block_bytes(k, nr);
  }
}
