/* f32-gavgpool-cw, AArch64 NEON (one vector holds a plane's four running sums): 4 planes at a
 * time for four independent add chains, then one at a time. */
#include <arm_neon.h>

#include "f32-gavgpool-cw/f32-gavgpool-cw.h"

/* (s0 + s2) + (s1 + s3), then the last pixels, then the division: the twin's operations */
static inline float finish(float32x4_t v, const float *xc, size_t i, size_t pixels, float count) {
  const float32x2_t h = vadd_f32(vget_low_f32(v), vget_high_f32(v));
  float sum = vget_lane_f32(h, 0) + vget_lane_f32(h, 1);
  for (; i < pixels; i++) sum += xc[i];
  return sum / count;
}

void q8rt_f32_gavgpool_cw_ukernel_c4__neon(size_t pixels, size_t channels, const float *x, float count, float *y) {
  size_t c = 0;
  for (; c + 4 <= channels; c += 4) {
    const float *x0 = x + c * pixels, *x1 = x0 + pixels, *x2 = x1 + pixels, *x3 = x2 + pixels;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      a0 = vaddq_f32(a0, vld1q_f32(x0 + i));
      a1 = vaddq_f32(a1, vld1q_f32(x1 + i));
      a2 = vaddq_f32(a2, vld1q_f32(x2 + i));
      a3 = vaddq_f32(a3, vld1q_f32(x3 + i));
    }
    y[c] = finish(a0, x0, i, pixels, count);
    y[c + 1] = finish(a1, x1, i, pixels, count);
    y[c + 2] = finish(a2, x2, i, pixels, count);
    y[c + 3] = finish(a3, x3, i, pixels, count);
  }
  for (; c < channels; c++) {
    const float *xc = x + c * pixels;
    float32x4_t a = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) a = vaddq_f32(a, vld1q_f32(xc + i));
    y[c] = finish(a, xc, i, pixels, count);
  }
}
