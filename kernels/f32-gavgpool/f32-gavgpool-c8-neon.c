/* f32-gavgpool, AArch64 NEON: 8 channels at a time (two vectors, four running sums each: eight
 * independent add chains), then 4, the last channels by the scalar twin. */
#include <arm_neon.h>

#include "f32-gavgpool/f32-gavgpool.h"

void q8rt_f32_gavgpool_ukernel_c8__neon(size_t pixels, size_t channels, const float *x, size_t stride, float count,
                                        float *y) {
  const float32x4_t vc = vdupq_n_f32(count);
  size_t c = 0;
  for (; c + 8 <= channels; c += 8) {
    const float *xc = x + c;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      const float *p = xc + i * stride;
      a0 = vaddq_f32(a0, vld1q_f32(p));
      b0 = vaddq_f32(b0, vld1q_f32(p + 4));
      a1 = vaddq_f32(a1, vld1q_f32(p + stride));
      b1 = vaddq_f32(b1, vld1q_f32(p + stride + 4));
      a2 = vaddq_f32(a2, vld1q_f32(p + 2 * stride));
      b2 = vaddq_f32(b2, vld1q_f32(p + 2 * stride + 4));
      a3 = vaddq_f32(a3, vld1q_f32(p + 3 * stride));
      b3 = vaddq_f32(b3, vld1q_f32(p + 3 * stride + 4));
    }
    float32x4_t sa = vaddq_f32(vaddq_f32(a0, a2), vaddq_f32(a1, a3));
    float32x4_t sb = vaddq_f32(vaddq_f32(b0, b2), vaddq_f32(b1, b3));
    for (; i < pixels; i++) {
      sa = vaddq_f32(sa, vld1q_f32(xc + i * stride));
      sb = vaddq_f32(sb, vld1q_f32(xc + i * stride + 4));
    }
    vst1q_f32(y + c, vdivq_f32(sa, vc));
    vst1q_f32(y + c + 4, vdivq_f32(sb, vc));
  }
  for (; c + 4 <= channels; c += 4) {
    const float *xc = x + c;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      const float *p = xc + i * stride;
      a0 = vaddq_f32(a0, vld1q_f32(p));
      a1 = vaddq_f32(a1, vld1q_f32(p + stride));
      a2 = vaddq_f32(a2, vld1q_f32(p + 2 * stride));
      a3 = vaddq_f32(a3, vld1q_f32(p + 3 * stride));
    }
    float32x4_t s = vaddq_f32(vaddq_f32(a0, a2), vaddq_f32(a1, a3));
    for (; i < pixels; i++) s = vaddq_f32(s, vld1q_f32(xc + i * stride));
    vst1q_f32(y + c, vdivq_f32(s, vc));
  }
  if (c < channels) q8rt_f32_gavgpool_ukernel__scalar(pixels, channels - c, x + c, stride, count, y + c);
}
