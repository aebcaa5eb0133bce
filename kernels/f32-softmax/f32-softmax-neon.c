/* f32-softmax, AArch64 NEON: the twin's 16 lanes are four registers (lanes 0-3, 4-7, 8-11,
 * 12-15), blocks of 16 in order; the last n % 16 elements go through the twin's own scalar steps on
 * the lanes stored to memory (element i into lane i % 16). The maximum as a compare and a bit
 * select (x > m ? x : m: fmax/fmaxnm would treat NaN differently), the exp of q8rt-math.h with its
 * fmaf as fmla, the folds in the twin's order (done on the stored lanes). */
#include <arm_neon.h>
#include <math.h>

#include "f32-softmax/f32-softmax.h"
#include "q8rt-exp-simd.h"
#include "q8rt-math.h"

static inline __attribute__((always_inline)) float32x4_t max4(float32x4_t v, float32x4_t m) {
  return vbslq_f32(vcgtq_f32(v, m), v, m);
}

void q8rt_f32_softmax_ukernel__neon(size_t n, const float *x, float *y) {
  float lanes[16];
  float32x4_t m0 = vdupq_n_f32(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = max4(vld1q_f32(x + i), m0);
    m1 = max4(vld1q_f32(x + i + 4), m1);
    m2 = max4(vld1q_f32(x + i + 8), m2);
    m3 = max4(vld1q_f32(x + i + 12), m3);
  }
  vst1q_f32(lanes, m0);
  vst1q_f32(lanes + 4, m1);
  vst1q_f32(lanes + 8, m2);
  vst1q_f32(lanes + 12, m3);
  for (size_t k = i; k < n; k++) lanes[k - i] = x[k] > lanes[k - i] ? x[k] : lanes[k - i];
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) lanes[j] = lanes[j + w] > lanes[j] ? lanes[j + w] : lanes[j];
  }
  const float mx = lanes[0];
  const float32x4_t vmx = vdupq_n_f32(mx);

  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  for (i = 0; i + 16 <= n; i += 16) {
    const float32x4_t e0 = q8rt_exp4_neon(vsubq_f32(vld1q_f32(x + i), vmx));
    const float32x4_t e1 = q8rt_exp4_neon(vsubq_f32(vld1q_f32(x + i + 4), vmx));
    const float32x4_t e2 = q8rt_exp4_neon(vsubq_f32(vld1q_f32(x + i + 8), vmx));
    const float32x4_t e3 = q8rt_exp4_neon(vsubq_f32(vld1q_f32(x + i + 12), vmx));
    vst1q_f32(y + i, e0);
    vst1q_f32(y + i + 4, e1);
    vst1q_f32(y + i + 8, e2);
    vst1q_f32(y + i + 12, e3);
    a0 = vaddq_f32(a0, e0);
    a1 = vaddq_f32(a1, e1);
    a2 = vaddq_f32(a2, e2);
    a3 = vaddq_f32(a3, e3);
  }
  vst1q_f32(lanes, a0);
  vst1q_f32(lanes + 4, a1);
  vst1q_f32(lanes + 8, a2);
  vst1q_f32(lanes + 12, a3);
  for (size_t k = i; k < n; k++) {
    const float e = q8rt_exp_nonpositive(x[k] - mx);
    y[k] = e;
    lanes[k - i] += e;
  }
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) lanes[j] = lanes[j] + lanes[j + w];
  }

  if (lanes[0] != lanes[0]) {
    q8rt_fill_nan(n, y);
    return;
  }
  const float r = 1.0f / lanes[0];
  const float32x4_t vr = vdupq_n_f32(r);
  for (i = 0; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(y + i), vr));
  for (; i < n; i++) y[i] = y[i] * r;
}
