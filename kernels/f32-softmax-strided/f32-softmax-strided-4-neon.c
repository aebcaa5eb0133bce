/* f32-softmax-strided, AArch64 NEON: 4 columns per pass, one per lane; the last pass (n % 4
 * columns) goes through 4-float buffers so nothing outside the n columns is read or written. The
 * twin's 16 row lanes are 16 registers (the loops over them unrolled, so no lane is indexed at run
 * time): the maximum as a compare and a bit select (x > m ? x : m:
 * fmax/fmaxnm would treat NaN differently), folded in the twin's order; the exp of q8rt-math.h
 * (q8rt_exp4_neon); the sums the same way; a NaN sum gives the quiet NaN in that lane; then the
 * products with 1 / sum. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "f32-softmax-strided/f32-softmax-strided.h"
#include "q8rt-exp-simd.h"

static inline __attribute__((always_inline)) float32x4_t max4(float32x4_t v, float32x4_t m) {
  return vbslq_f32(vcgtq_f32(v, m), v, m);
}

static inline __attribute__((always_inline)) float32x4_t load4(const float *p, size_t c) {
  if (c == 4) return vld1q_f32(p);
  float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  memcpy(t, p, c * sizeof(float));
  return vld1q_f32(t);
}

static inline __attribute__((always_inline)) void store4(float *p, float32x4_t v, size_t c) {
  if (c == 4) {
    vst1q_f32(p, v);
    return;
  }
  float t[4];
  vst1q_f32(t, v);
  memcpy(p, t, c * sizeof(float));
}

void q8rt_f32_softmax_strided_ukernel_4__neon(size_t d, size_t n, size_t stride, const float *x, float *y) {
  const float32x4_t qnan = vreinterpretq_f32_u32(vdupq_n_u32(0x7fc00000u));
  for (size_t j = 0; j < n; j += 4) {
    const size_t c = n - j < 4 ? n - j : 4;
    const float *xc = x + j;
    float *yc = y + j;
    float32x4_t m[16], a[16];
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++) m[l] = vdupq_n_f32(-INFINITY), a[l] = vdupq_n_f32(0.0f);
    for (size_t k0 = 0; k0 < d; k0 += 16) {
#pragma GCC unroll 16
      for (size_t l = 0; l < 16; l++) {
        if (k0 + l < d) m[l] = max4(load4(xc + (k0 + l) * stride, c), m[l]);
      }
    }
#pragma GCC unroll 4
    for (int w = 8; w >= 1; w /= 2) {
#pragma GCC unroll 8
      for (int l = 0; l < w; l++) m[l] = max4(m[l + w], m[l]);
    }
    const float32x4_t mx = m[0];
    for (size_t k0 = 0; k0 < d; k0 += 16) {
#pragma GCC unroll 16
      for (size_t l = 0; l < 16; l++) {
        if (k0 + l < d) {
          const size_t o = (k0 + l) * stride;
          const float32x4_t e = q8rt_exp4_neon(vsubq_f32(load4(xc + o, c), mx));
          store4(yc + o, e, c);
          a[l] = vaddq_f32(a[l], e);
        }
      }
    }
#pragma GCC unroll 4
    for (int w = 8; w >= 1; w /= 2) {
#pragma GCC unroll 8
      for (int l = 0; l < w; l++) a[l] = vaddq_f32(a[l], a[l + w]);
    }
    const uint32x4_t nan = vmvnq_u32(vceqq_f32(a[0], a[0]));
    const float32x4_t r = vdivq_f32(vdupq_n_f32(1.0f), a[0]);
    for (size_t k = 0; k < d; k++) {
      const float32x4_t v = vmulq_f32(load4(yc + k * stride, c), r);
      store4(yc + k * stride, vbslq_f32(nan, qnan, v), c);
    }
  }
}
