/* qu8-vmacc-i32: one weight times a strided row of 8-bit activations, accumulated in int32
 *   acc[i] += ((x[i * stride] ^ x_xor) - x_zp_u8) * w      for i < n   (wrapping, as uint32)
 * x_xor = 0x80 reads int8 activations in the uint8 domain (x_zp_u8 = x_zp + 128 then); w must fit
 * int16 (ConvInteger's depthwise weights minus their zero point: |w| <= 255). Reads exactly the
 * bytes x[i * stride], i < n (a kernel may read between them, never past the last). The
 * depthwise ConvInteger route calls it once per tap and output row. */
#ifndef Q8RT_QU8_VMACC_I32_H
#define Q8RT_QU8_VMACC_I32_H

#include <stddef.h>
#include <stdint.h>

typedef void (*q8rt_qu8_vmacc_i32_ukernel_fn)(size_t n, const uint8_t *x, size_t stride, uint8_t x_xor, int32_t x_zp_u8,
                                              int32_t w, uint32_t *acc);

void q8rt_qu8_vmacc_i32_ukernel__scalar(size_t n, const uint8_t *x, size_t stride, uint8_t x_xor, int32_t x_zp_u8,
                                        int32_t w, uint32_t *acc);
#define Q8RT_QU8_VMACC_I32_UKERNEL(isa, fn) \
  void fn(size_t n, const uint8_t *x, size_t stride, uint8_t x_xor, int32_t x_zp_u8, int32_t w, uint32_t *acc);
#include "qu8-vmacc-i32/qu8-vmacc-i32.inc"
#undef Q8RT_QU8_VMACC_I32_UKERNEL

#endif
