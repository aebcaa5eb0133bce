/* f32-f16-vcvt for NEON: fcvtn (vcvt_f16_f32, ARMv8 base: Cortex-A53 has it), rounding by
 * FPCR.RMode (nearest even, the default q8rt never changes), 8 per step, the tail on the scalar
 * twin. With FPCR.DN clear (the default) a NaN keeps its sign and the top of its payload, quieted:
 * the twin's definition (the sweep test checks every class under qemu). */
#include <arm_neon.h>

#include "f32-f16-vcvt/f32-f16-vcvt.h"

void q8rt_f32_f16_vcvt_ukernel__neon(size_t n, const float *x, uint16_t *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x4_t a = vcvt_f16_f32(vld1q_f32(x + i));
    const float16x4_t b = vcvt_f16_f32(vld1q_f32(x + i + 4));
    vst1q_u16(y + i, vcombine_u16(vreinterpret_u16_f16(a), vreinterpret_u16_f16(b)));
  }
  q8rt_f32_f16_vcvt_ukernel__scalar(n - i, x + i, y + i);
}
