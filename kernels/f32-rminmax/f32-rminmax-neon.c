/* f32-rminmax for NEON: 4 x 4 lanes of minima and maxima, the tail on the scalar twin. Compare and
 * select (fcmgt + bsl), as the twin's comparison: a NaN, quiet or signalling, fails the compare
 * and keeps the bound. fminnm/fmaxnm would not do: a signalling NaN makes them return NaN. */
#include <arm_neon.h>

#include "f32-rminmax/f32-rminmax.h"

#define MIN4(v, m) vbslq_f32(vcltq_f32(v, m), v, m)
#define MAX4(v, m) vbslq_f32(vcgtq_f32(v, m), v, m)

void q8rt_f32_rminmax_ukernel__neon(size_t n, const float *x, float *lo, float *hi) {
  float32x4_t l0 = vdupq_n_f32(*lo), l1 = l0, l2 = l0, l3 = l0;
  float32x4_t h0 = vdupq_n_f32(*hi), h1 = h0, h2 = h0, h3 = h0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float32x4_t v0 = vld1q_f32(x + i), v1 = vld1q_f32(x + i + 4);
    const float32x4_t v2 = vld1q_f32(x + i + 8), v3 = vld1q_f32(x + i + 12);
    l0 = MIN4(v0, l0);
    l1 = MIN4(v1, l1);
    l2 = MIN4(v2, l2);
    l3 = MIN4(v3, l3);
    h0 = MAX4(v0, h0);
    h1 = MAX4(v1, h1);
    h2 = MAX4(v2, h2);
    h3 = MAX4(v3, h3);
  }
  l0 = MIN4(MIN4(l0, l1), MIN4(l2, l3));
  h0 = MAX4(MAX4(h0, h1), MAX4(h2, h3));
  float ls[4], hs[4];
  vst1q_f32(ls, l0);
  vst1q_f32(hs, h0);
  float l = ls[0], h = hs[0];
  for (int j = 1; j < 4; j++) {
    l = ls[j] < l ? ls[j] : l;
    h = hs[j] > h ? hs[j] : h;
  }
  q8rt_f32_rminmax_ukernel__scalar(n - i, x + i, &l, &h);
  *lo = l;
  *hi = h;
}
