/* f16-f32-vcvt for NEON: fcvtl (vcvt_f32_f16, ARMv8 base: Cortex-A53 has it), 8 per step, the
 * tail on the scalar twin. fcvtl quiets a signalling NaN; NaN lanes (|h| > 0x7c00) take the
 * twin's bits, sign | 0x7f800000 | (h & 0x3ff) << 13. */
#include <arm_neon.h>

#include "f16-f32-vcvt/f16-f32-vcvt.h"

static inline float32x4_t cvt4(uint16x4_t h) {
  const float32x4_t hw = vcvt_f32_f16(vreinterpret_f16_u16(h));
  const uint32x4_t w = vmovl_u16(h);
  const uint32x4_t mag = vandq_u32(w, vdupq_n_u32(0x7fff));
  const uint32x4_t nan = vcgtq_u32(mag, vdupq_n_u32(0x7c00));
  const uint32x4_t bits =
      vorrq_u32(vaddq_u32(vshlq_n_u32(mag, 13), vdupq_n_u32(0x70000000)), vshlq_n_u32(veorq_u32(w, mag), 16));
  return vbslq_f32(nan, vreinterpretq_f32_u32(bits), hw);
}

void q8rt_f16_f32_vcvt_ukernel__neon(size_t n, const uint16_t *x, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t h = vld1q_u16(x + i);
    vst1q_f32(y + i, cvt4(vget_low_u16(h)));
    vst1q_f32(y + i + 4, cvt4(vget_high_u16(h)));
  }
  q8rt_f16_f32_vcvt_ukernel__scalar(n - i, x + i, y + i);
}
