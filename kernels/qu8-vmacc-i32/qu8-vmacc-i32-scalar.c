/* The scalar twin of qu8-vmacc-i32 (contract in qu8-vmacc-i32.h). */
#include "qu8-vmacc-i32/qu8-vmacc-i32.h"

void q8rt_qu8_vmacc_i32_ukernel__scalar(size_t n, const uint8_t *x, size_t stride, uint8_t x_xor, int32_t x_zp_u8,
                                        int32_t w, uint32_t *acc) {
  for (size_t i = 0; i < n; i++) acc[i] += (uint32_t)(((int32_t)(x[i * stride] ^ x_xor) - x_zp_u8) * w);
}
