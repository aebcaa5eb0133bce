/* c[j] = fma(a, b[j], c[j]) with fmla: the same exactly rounded operation per element as the
 * scalar twin's fmaf, sixteen (then four, then one) at a time, so results are identical. */
#include <arm_neon.h>
#include <math.h>

#include "q8rt-kernels.h"

void q8rt_f32_vfmac_ukernel__neon(size_t n, float a, const float *b, float *c) {
  const float32x4_t va = vdupq_n_f32(a);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const float32x4_t c0 = vfmaq_f32(vld1q_f32(c + j), vld1q_f32(b + j), va);
    const float32x4_t c1 = vfmaq_f32(vld1q_f32(c + j + 4), vld1q_f32(b + j + 4), va);
    const float32x4_t c2 = vfmaq_f32(vld1q_f32(c + j + 8), vld1q_f32(b + j + 8), va);
    const float32x4_t c3 = vfmaq_f32(vld1q_f32(c + j + 12), vld1q_f32(b + j + 12), va);
    vst1q_f32(c + j, c0);
    vst1q_f32(c + j + 4, c1);
    vst1q_f32(c + j + 8, c2);
    vst1q_f32(c + j + 12, c3);
  }
  for (; j + 4 <= n; j += 4) vst1q_f32(c + j, vfmaq_f32(vld1q_f32(c + j), vld1q_f32(b + j), va));
  for (; j < n; j++) c[j] = fmaf(a, b[j], c[j]);
}
