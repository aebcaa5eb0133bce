/* f32-vmulcaddc, AArch64 NEON: 8 elements per step, vmulq then vaddq (two roundings, never the
 * fused fmla, which would differ from the twin), the tail by the scalar twin. */
#include <arm_neon.h>

#include "f32-vmulcaddc/f32-vmulcaddc.h"

void q8rt_f32_vmulcaddc_ukernel__neon(size_t n, const float *x, float s, float b, float *y) {
  const float32x4_t vs = vdupq_n_f32(s), vb = vdupq_n_f32(b);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float32x4_t a0 = vmulq_f32(vld1q_f32(x + i), vs);
    const float32x4_t a1 = vmulq_f32(vld1q_f32(x + i + 4), vs);
    vst1q_f32(y + i, vaddq_f32(a0, vb));
    vst1q_f32(y + i + 4, vaddq_f32(a1, vb));
  }
  if (i < n) q8rt_f32_vmulcaddc_ukernel__scalar(n - i, x + i, s, b, y + i);
}
