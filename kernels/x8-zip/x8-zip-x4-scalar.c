/* x8-zip-x4, scalar: out[4 * i + j] = rows[j][i] ^ x_xor for i < n, j < 4. */
#include "q8rt-kernels.h"

void q8rt_x8_zip_x4_ukernel__scalar(size_t n, const uint8_t *const rows[4], uint8_t x_xor, uint8_t *out) {
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < 4; j++) out[4 * i + j] = rows[j][i] ^ x_xor;
  }
}
