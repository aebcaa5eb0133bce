/* f32-vunary, AArch64 NEON: 4 elements per step, the last n % 4 by the scalar twin of the same
 * function. fmax/fmin/fmaxnm/fminnm treat NaN and ±0 differently from the twin's compare-and-
 * selects, so those are a compare and a bit select with the twin's exact condition (fcmgt/fcmge
 * are false for NaN). fmaf is fmla (one rounding); no other fusion; fneg/fabs flip/clear the sign
 * bit as the twin's -x and fabsf compile to. */
#include <arm_neon.h>

#include "f32-vunary/f32-vunary.h"
#include "q8rt-math.h"

typedef struct consts {
  float32x4_t lo, hi, alpha, beta;
} consts;

/* a < b ? a : b  and  a > b ? a : b, the twin's selects */
static inline __attribute__((always_inline)) float32x4_t sel_lt(float32x4_t a, float32x4_t b) {
  return vbslq_f32(vcltq_f32(a, b), a, b);
}
static inline __attribute__((always_inline)) float32x4_t sel_gt(float32x4_t a, float32x4_t b) {
  return vbslq_f32(vcgtq_f32(a, b), a, b);
}

static inline __attribute__((always_inline)) float32x4_t hsigmoid4(float32x4_t v, const consts *k) {
  float32x4_t t = vaddq_f32(vmulq_f32(k->alpha, v), k->beta);
  t = sel_lt(vdupq_n_f32(1.0f), t);    /* 1 < t ? 1 : t */
  return sel_gt(vdupq_n_f32(0.0f), t); /* t < 0 ? 0 : t */
}

#define FMA(p, x2, c) vfmaq_f32(vdupq_n_f32(c), p, x2)

static inline __attribute__((always_inline)) float32x4_t op4(int op, float32x4_t x, const consts *k) {
  switch (op) {
    case Q8RT_F32_VCLAMP: return sel_lt(k->hi, sel_gt(k->lo, x));
    case Q8RT_F32_VNEG: return vnegq_f32(x);
    case Q8RT_F32_VABS: return vabsq_f32(x);
    case Q8RT_F32_VSQRT: return vsqrtq_f32(x);
    case Q8RT_F32_VLRELU: return vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.0f)), x, vmulq_f32(k->alpha, x));
    case Q8RT_F32_VHSIGMOID: return hsigmoid4(x, k);
    case Q8RT_F32_VHSWISH: return vmulq_f32(x, hsigmoid4(x, k));
    case Q8RT_F32_VSIGMOID: {
      float32x4_t v = sel_gt(vdupq_n_f32(-18.0f), x);
      v = sel_lt(vdupq_n_f32(18.0f), v);
      const float32x4_t x2 = vmulq_f32(v, v);
      float32x4_t p = vdupq_n_f32(Q8RT_MLAS_LOGISTIC_P0);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P1);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P2);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P3);
      p = FMA(p, x2, Q8RT_MLAS_LOGISTIC_P4);
      p = vmulq_f32(p, v);
      float32x4_t q = vdupq_n_f32(Q8RT_MLAS_LOGISTIC_Q0);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q1);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q2);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q3);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q4);
      q = FMA(q, x2, Q8RT_MLAS_LOGISTIC_Q5);
      float32x4_t r = vaddq_f32(vdivq_f32(p, q), vdupq_n_f32(0.5f));
      r = sel_gt(vdupq_n_f32(0.0f), r);
      return sel_lt(vdupq_n_f32(1.0f), r);
    }
    default: { /* Q8RT_F32_VTANH */
      float32x4_t v = sel_gt(vdupq_n_f32(-9.0f), x);
      v = sel_lt(vdupq_n_f32(9.0f), v);
      const float32x4_t x2 = vmulq_f32(v, v);
      float32x4_t p = vdupq_n_f32(Q8RT_MLAS_TANH_P0);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P1);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P2);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P3);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P4);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P5);
      p = FMA(p, x2, Q8RT_MLAS_TANH_P6);
      p = vmulq_f32(p, v);
      float32x4_t q = vdupq_n_f32(Q8RT_MLAS_TANH_Q0);
      q = FMA(q, x2, Q8RT_MLAS_TANH_Q1);
      q = FMA(q, x2, Q8RT_MLAS_TANH_Q2);
      q = FMA(q, x2, Q8RT_MLAS_TANH_Q3);
      return vdivq_f32(p, q);
    }
  }
}

static inline __attribute__((always_inline)) void vun(int op, size_t n, const float *x, float *y,
                                                      const q8rt_f32_vunary_params *p,
                                                      q8rt_f32_vunary_ukernel_fn twin) {
  const consts k = {vdupq_n_f32(p->lo), vdupq_n_f32(p->hi), vdupq_n_f32(p->alpha), vdupq_n_f32(p->beta)};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, op4(op, vld1q_f32(x + i), &k));
  if (i < n) twin(n - i, x + i, y + i, p);
}

#define DEF(op, id)                                                                                          \
  void q8rt_f32_v##op##_ukernel__neon(size_t n, const float *x, float *y, const q8rt_f32_vunary_params *p) { \
    vun(id, n, x, y, p, q8rt_f32_v##op##_ukernel__scalar);                                                   \
  }

DEF(clamp, Q8RT_F32_VCLAMP)
DEF(neg, Q8RT_F32_VNEG)
DEF(abs, Q8RT_F32_VABS)
DEF(sqrt, Q8RT_F32_VSQRT)
DEF(lrelu, Q8RT_F32_VLRELU)
DEF(hsigmoid, Q8RT_F32_VHSIGMOID)
DEF(hswish, Q8RT_F32_VHSWISH)
DEF(sigmoid, Q8RT_F32_VSIGMOID)
DEF(tanh, Q8RT_F32_VTANH)
