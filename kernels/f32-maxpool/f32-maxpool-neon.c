/* f32-maxpool, AArch64 NEON: 8 outputs per step at stride 1 (other strides and the tail: the scalar
 * twin). Each tap is the twin's `if (v > m) m = v` lane by lane: a compare-greater mask selects v,
 * so equal values (±0 included) and NaNs keep what the twin keeps. (fmax would not: it returns NaN
 * for a NaN tap and orders -0 < +0.) */
#include <arm_neon.h>
#include <float.h>

#include "f32-maxpool/f32-maxpool.h"

static inline float32x4_t keep_greater(float32x4_t v, float32x4_t m) { return vbslq_f32(vcgtq_f32(v, m), v, m); }

static void row(size_t n, size_t r, size_t k, size_t s, size_t d, size_t rs, const float *x, float *y, int acc) {
  size_t o = 0;
  if (s == 1) {
    for (; o + 8 <= n; o += 8) {
      float32x4_t m0 = acc ? vld1q_f32(y + o) : vdupq_n_f32(-FLT_MAX), m1 = acc ? vld1q_f32(y + o + 4) : m0;
      for (size_t i = 0; i < r; i++) {
        const float *xo = x + i * rs + o;
        for (size_t t = 0; t < k; t++) {
          m0 = keep_greater(vld1q_f32(xo + t * d), m0);
          m1 = keep_greater(vld1q_f32(xo + 4 + t * d), m1);
        }
      }
      vst1q_f32(y + o, m0);
      vst1q_f32(y + o + 4, m1);
    }
  }
  if (o < n) q8rt_f32_maxpool_ukernel__scalar(n - o, 1, r, k, s, d, 0, rs, 0, x + o * s, y + o, acc);
}

void q8rt_f32_maxpool_ukernel__neon(size_t n, size_t q, size_t r, size_t k, size_t s, size_t d, size_t xq, size_t rs,
                                    size_t yq, const float *x, float *y, int acc) {
  for (size_t j = 0; j < q; j++) row(n, r, k, s, d, rs, x + j * xq, y + j * yq, acc);
}
