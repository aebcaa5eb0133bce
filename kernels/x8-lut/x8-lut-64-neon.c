/* Byte table lookup y[i] = table[x[i]], AArch64 NEON: the 256-byte table in 16 q registers as four
 * 64-byte quarters; tbl on the first quarter gives 0 for indices >= 64, and tbx on each further
 * quarter with the index lowered by 64, 128, 192 replaces exactly the lanes whose index falls in
 * it (tbx leaves a lane with an out-of-range index unchanged). 64 bytes per step; the tail goes
 * through a stack copy, so nothing is read or written past n (in place works: each block is read
 * before it is written). */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"

static inline __attribute__((always_inline)) uint8x16_t lut16(uint8x16_t x, const uint8x16x4_t t[4]) {
  const uint8x16_t k64 = vdupq_n_u8(64);
  uint8x16_t y = vqtbl4q_u8(t[0], x);
  x = vsubq_u8(x, k64);
  y = vqtbx4q_u8(y, t[1], x);
  x = vsubq_u8(x, k64);
  y = vqtbx4q_u8(y, t[2], x);
  x = vsubq_u8(x, k64);
  return vqtbx4q_u8(y, t[3], x);
}

static inline __attribute__((always_inline)) void lut_row(size_t n, const uint8_t *x, uint8_t *y,
                                                          const uint8x16x4_t t[4]) {
  for (; n >= 64; n -= 64, x += 64, y += 64) {
    const uint8x16_t x0 = vld1q_u8(x), x1 = vld1q_u8(x + 16), x2 = vld1q_u8(x + 32), x3 = vld1q_u8(x + 48);
    vst1q_u8(y, lut16(x0, t));
    vst1q_u8(y + 16, lut16(x1, t));
    vst1q_u8(y + 32, lut16(x2, t));
    vst1q_u8(y + 48, lut16(x3, t));
  }
  for (; n >= 16; n -= 16, x += 16, y += 16) vst1q_u8(y, lut16(vld1q_u8(x), t));
  if (n != 0) {
    uint8_t buf[16] = {0};
    memcpy(buf, x, n);
    vst1q_u8(buf, lut16(vld1q_u8(buf), t));
    memcpy(y, buf, n);
  }
}

void q8rt_x8_lut_ukernel_64__neon(size_t n, const uint8_t *x, uint8_t *y, const uint8_t table[256]) {
  uint8x16x4_t t[4];
  for (int q = 0; q < 4; q++) t[q] = vld1q_u8_x4(table + 64 * q);
  lut_row(n, x, y, t);
}

/* The table stays in its 16 registers across the rows. */
void q8rt_x8_lut_rows_ukernel_64__neon(size_t rows, size_t n, const uint8_t *x, size_t x_stride, uint8_t *y,
                                       size_t y_stride, const uint8_t table[256]) {
  uint8x16x4_t t[4];
  for (int q = 0; q < 4; q++) t[q] = vld1q_u8_x4(table + 64 * q);
  for (size_t r = 0; r < rows; r++) lut_row(n, x + r * x_stride, y + r * y_stride, t);
}
