/* The scalar twin of f32-vbinary: the definition every variant is tested against. */
#include "f32-vbinary/f32-vbinary.h"

#define DEF_FORMS(op, EXPR)                                                                     \
  void q8rt_f32_v##op##_ukernel__scalar(size_t n, const float *a, const float *b, float *y) {   \
    for (size_t i = 0; i < n; i++) {                                                            \
      const float x = a[i], w = b[i];                                                           \
      y[i] = (EXPR);                                                                            \
    }                                                                                           \
  }                                                                                             \
  void q8rt_f32_v##op##c_ukernel__scalar(size_t n, const float *a, const float *b, float *y) {  \
    const float w = b[0];                                                                       \
    for (size_t i = 0; i < n; i++) {                                                            \
      const float x = a[i];                                                                     \
      y[i] = (EXPR);                                                                            \
    }                                                                                           \
  }                                                                                             \
  void q8rt_f32_vr##op##c_ukernel__scalar(size_t n, const float *a, const float *b, float *y) { \
    const float x = b[0];                                                                       \
    for (size_t i = 0; i < n; i++) {                                                            \
      const float w = a[i];                                                                     \
      y[i] = (EXPR);                                                                            \
    }                                                                                           \
  }

DEF_FORMS(add, x + w)
DEF_FORMS(sub, x - w)
DEF_FORMS(mul, x *w)
DEF_FORMS(div, x / w)
DEF_FORMS(max, x < w ? w : x)
DEF_FORMS(min, w < x ? w : x)
DEF_FORMS(prelu, x < 0.0f ? x * w : x)
