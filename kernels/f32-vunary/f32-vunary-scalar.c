/* The scalar twin of f32-vunary: the definition every variant is tested against. */
#include <math.h>

#include "f32-vunary/f32-vunary.h"
#include "q8rt-math.h"

#define DEF(op, EXPR)                                                                                          \
  void q8rt_f32_v##op##_ukernel__scalar(size_t n, const float *x, float *y, const q8rt_f32_vunary_params *p) { \
    const float lo = p->lo, hi = p->hi, alpha = p->alpha, beta = p->beta;                                      \
    (void)lo;                                                                                                  \
    (void)hi;                                                                                                  \
    (void)alpha;                                                                                               \
    (void)beta;                                                                                                \
    for (size_t i = 0; i < n; i++) {                                                                           \
      const float v = x[i];                                                                                    \
      y[i] = (EXPR);                                                                                           \
    }                                                                                                          \
  }

static inline float clamp1(float v, float lo, float hi) {
  const float t = v < lo ? lo : v;
  return hi < t ? hi : t;
}

static inline float hsigmoid1(float v, float alpha, float beta) {
  float t = alpha * v;
  t = t + beta;
  t = 1.0f < t ? 1.0f : t;
  return t < 0.0f ? 0.0f : t;
}

DEF(clamp, clamp1(v, lo, hi))
DEF(neg, -v)
DEF(abs, fabsf(v))
DEF(sqrt, sqrtf(v))
DEF(lrelu, v >= 0.0f ? v : alpha * v)
DEF(hsigmoid, hsigmoid1(v, alpha, beta))
DEF(hswish, v *hsigmoid1(v, alpha, beta))
DEF(sigmoid, q8rt_mlas_logistic(v))
DEF(tanh, q8rt_mlas_tanh(v))
