/* x8-zip-x4, NEON: 16 bytes of each of the 4 rows, xored, interleaved by one st4 (64 bytes); the
 * tail on the scalar twin. Reads exactly rows[j][i], i < n. */
#include <arm_neon.h>

#include "q8rt-kernels.h"

void q8rt_x8_zip_x4_ukernel__neon(size_t n, const uint8_t *const rows[4], uint8_t x_xor, uint8_t *out) {
  const uint8x16_t vx = vdupq_n_u8(x_xor);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint8x16x4_t v;
    v.val[0] = veorq_u8(vld1q_u8(rows[0] + i), vx);
    v.val[1] = veorq_u8(vld1q_u8(rows[1] + i), vx);
    v.val[2] = veorq_u8(vld1q_u8(rows[2] + i), vx);
    v.val[3] = veorq_u8(vld1q_u8(rows[3] + i), vx);
    vst4q_u8(out + 4 * i, v);
  }
  if (i < n) {
    const uint8_t *const rest[4] = {rows[0] + i, rows[1] + i, rows[2] + i, rows[3] + i};
    q8rt_x8_zip_x4_ukernel__scalar(n - i, rest, x_xor, out + 4 * i);
  }
}
