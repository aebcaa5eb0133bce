#include "q8rt-kernels.h"
#include "q8rt-math.h"

#define DEFINE_F32_QX(name, T)                                                              \
  void name(size_t n, const float *x, T *y, const q8rt_f32_qint_vcvt_params *p) {           \
    const float scale = p->scale, lo = p->lo, hi = p->hi;                                   \
    const int32_t zp = p->zero_point;                                                       \
    for (size_t i = 0; i < n; i++) y[i] = (T)(q8rt_round_clamp(x[i] / scale, lo, hi) + zp); \
  }

DEFINE_F32_QX(q8rt_f32_qu8_vcvt_ukernel__scalar, uint8_t)
DEFINE_F32_QX(q8rt_f32_qs8_vcvt_ukernel__scalar, int8_t)
DEFINE_F32_QX(q8rt_f32_qu16_vcvt_ukernel__scalar, uint16_t)
DEFINE_F32_QX(q8rt_f32_qs16_vcvt_ukernel__scalar, int16_t)
