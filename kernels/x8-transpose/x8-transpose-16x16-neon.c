/* [a][b] (row stride x_stride) -> [b][a] (row stride y_stride) for bytes, AArch64 NEON: 16x16 blocks transposed in
 * registers, edges by the scalar loop (the same bytes as the scalar twin: a transpose has no arithmetic). */
#include <arm_neon.h>

#include "q8rt-kernels.h"

/* Four rounds of the byte "perfect shuffle" out[2i] = zip1(in[i], in[i+8]), out[2i+1] = zip2(in[i], in[i+8]): writing
 * an element's place as the 8 bits (register, byte), each round rotates them left by one, so four rounds swap register
 * and byte, which is the transpose. */
static void block16(const uint8_t *x, size_t x_stride, uint8_t *y, size_t y_stride) {
  uint8x16_t r[16], t[16];
  for (int i = 0; i < 16; i++) r[i] = vld1q_u8(x + (size_t)i * x_stride);
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 8; i++) {
      t[2 * i] = vzip1q_u8(r[i], r[i + 8]);
      t[2 * i + 1] = vzip2q_u8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
  }
  for (int i = 0; i < 16; i++) vst1q_u8(y + (size_t)i * y_stride, r[i]);
}

void q8rt_x8_transpose_ukernel_16x16__neon(size_t a, size_t b, const uint8_t *x, size_t x_stride, uint8_t *y,
                                           size_t y_stride) {
  const size_t a16 = a & ~(size_t)15, b16 = b & ~(size_t)15;
  for (size_t i = 0; i < a16; i += 16) {
    for (size_t j = 0; j < b16; j += 16) block16(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride);
    for (size_t ii = i; ii < i + 16; ii++) {
      for (size_t j = b16; j < b; j++) y[j * y_stride + ii] = x[ii * x_stride + j];
    }
  }
  for (size_t i = a16; i < a; i++) {
    for (size_t j = 0; j < b; j++) y[j * y_stride + i] = x[i * x_stride + j];
  }
}
