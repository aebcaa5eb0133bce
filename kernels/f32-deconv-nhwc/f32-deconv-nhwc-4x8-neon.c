/* f32-deconv-nhwc, AArch64 NEON: 4 input pixels x 8 output channels of dots in 8 q accumulators for
 * the whole channel chain (a broadcast input value times two vectors of weights with fmul, then
 * fadd, not fmla: the twin's operations in its order). Channel tails (fewer than 8) and pixels
 * past the last whole group of 4 run the twin. */
#include <arm_neon.h>

#include "f32-deconv-nhwc/f32-deconv-nhwc.h"

void q8rt_f32_deconv_nhwc_ukernel_4x8__neon(size_t n, size_t m, size_t k, const float *x, size_t x_ps, const float *w,
                                            size_t w_cs, float *y, size_t y_ps) {
  const size_t n4 = n / 4 * 4, m8 = m / 8 * 8;
  for (size_t j = 0; j < n4; j += 4) {
    const float *x0 = x + j * x_ps, *x1 = x0 + x_ps, *x2 = x1 + x_ps, *x3 = x2 + x_ps;
    for (size_t i = 0; i < m8; i += 8) {
      float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
      for (size_t c = 0; c < k; c++) {
        const float32x4_t w0 = vld1q_f32(w + c * w_cs + i), w1 = vld1q_f32(w + c * w_cs + i + 4);
        const float32x4_t v0 = vdupq_n_f32(x0[c]), v1 = vdupq_n_f32(x1[c]), v2 = vdupq_n_f32(x2[c]),
                          v3 = vdupq_n_f32(x3[c]);
        c00 = vaddq_f32(c00, vmulq_f32(v0, w0));
        c01 = vaddq_f32(c01, vmulq_f32(v0, w1));
        c10 = vaddq_f32(c10, vmulq_f32(v1, w0));
        c11 = vaddq_f32(c11, vmulq_f32(v1, w1));
        c20 = vaddq_f32(c20, vmulq_f32(v2, w0));
        c21 = vaddq_f32(c21, vmulq_f32(v2, w1));
        c30 = vaddq_f32(c30, vmulq_f32(v3, w0));
        c31 = vaddq_f32(c31, vmulq_f32(v3, w1));
      }
      float *y0 = y + j * y_ps + i, *y1 = y0 + y_ps, *y2 = y1 + y_ps, *y3 = y2 + y_ps;
      vst1q_f32(y0, vaddq_f32(vld1q_f32(y0), c00));
      vst1q_f32(y0 + 4, vaddq_f32(vld1q_f32(y0 + 4), c01));
      vst1q_f32(y1, vaddq_f32(vld1q_f32(y1), c10));
      vst1q_f32(y1 + 4, vaddq_f32(vld1q_f32(y1 + 4), c11));
      vst1q_f32(y2, vaddq_f32(vld1q_f32(y2), c20));
      vst1q_f32(y2 + 4, vaddq_f32(vld1q_f32(y2 + 4), c21));
      vst1q_f32(y3, vaddq_f32(vld1q_f32(y3), c30));
      vst1q_f32(y3 + 4, vaddq_f32(vld1q_f32(y3 + 4), c31));
    }
  }
  if (m8 < m) q8rt_f32_deconv_nhwc_ukernel__scalar(n4, m - m8, k, x, x_ps, w + m8, w_cs, y + m8, y_ps);
  if (n4 < n) q8rt_f32_deconv_nhwc_ukernel__scalar(n - n4, m, k, x + n4 * x_ps, x_ps, w, w_cs, y + n4 * y_ps, y_ps);
}
