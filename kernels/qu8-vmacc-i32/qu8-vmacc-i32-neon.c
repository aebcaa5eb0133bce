/* qu8-vmacc-i32, AArch64 NEON, 8 outputs per step: the activation bytes (xor applied) widened to
 * 16 bits, smull against w (|x * w| <= 255 * 32768 < 2^31: exact), then the constant -x_zp * w
 * and the accumulator added in unsigned lanes (wrapping like the twin: (x - zp) * w = x * w - zp * w
 * modulo 2^32). Stride 2 (strided depthwise convolutions) takes the even bytes of 16 with ld2;
 * other strides and the tails run the scalar loop. */
#include <arm_neon.h>

#include "qu8-vmacc-i32/qu8-vmacc-i32.h"

static inline void macc8(uint8x8_t b, int16x4_t vw, uint32x4_t vc, uint32_t *acc) {
  const int16x8_t x16 = vreinterpretq_s16_u16(vmovl_u8(b));
  const uint32x4_t p0 = vaddq_u32(vreinterpretq_u32_s32(vmull_s16(vget_low_s16(x16), vw)), vc);
  const uint32x4_t p1 = vaddq_u32(vreinterpretq_u32_s32(vmull_s16(vget_high_s16(x16), vw)), vc);
  vst1q_u32(acc, vaddq_u32(vld1q_u32(acc), p0));
  vst1q_u32(acc + 4, vaddq_u32(vld1q_u32(acc + 4), p1));
}

void q8rt_qu8_vmacc_i32_ukernel__neon(size_t n, const uint8_t *x, size_t stride, uint8_t x_xor, int32_t x_zp_u8,
                                      int32_t w, uint32_t *acc) {
  const int16x4_t vw = vdup_n_s16((int16_t)w);
  const uint32x4_t vc = vdupq_n_u32(0u - (uint32_t)x_zp_u8 * (uint32_t)w);
  const uint8x8_t vxor = vdup_n_u8(x_xor);
  size_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) macc8(veor_u8(vld1_u8(x + i), vxor), vw, vc, acc + i);
  } else if (stride == 2) {
    /* 16 bytes from x + 2i reach x[2i + 15]; the last byte needed is x[2(n - 1)] */
    for (; i + 9 <= n; i += 8) macc8(veor_u8(vld2_u8(x + 2 * i).val[0], vxor), vw, vc, acc + i);
  }
  for (; i < n; i++) acc[i] += (uint32_t)(((int32_t)(x[i * stride] ^ x_xor) - x_zp_u8) * w);
}
