#include "q8rt-kernels.h"

/* (x - zp) is exact in int32 for every 8/16-bit type; int32 inputs have zp == 0 (checked at
 * load), so the subtraction cannot overflow there either. */
#define DEFINE_QX_F32(name, T)                                                    \
  void name(size_t n, const T *x, float *y, const q8rt_qint_f32_vcvt_params *p) { \
    const float scale = p->scale;                                                 \
    const int32_t zp = p->zero_point;                                             \
    for (size_t i = 0; i < n; i++) y[i] = (float)((int32_t)x[i] - zp) * scale;    \
  }

DEFINE_QX_F32(q8rt_qu8_f32_vcvt_ukernel__scalar, uint8_t)
DEFINE_QX_F32(q8rt_qs8_f32_vcvt_ukernel__scalar, int8_t)
DEFINE_QX_F32(q8rt_qu16_f32_vcvt_ukernel__scalar, uint16_t)
DEFINE_QX_F32(q8rt_qs16_f32_vcvt_ukernel__scalar, int16_t)
DEFINE_QX_F32(q8rt_qs32_f32_vcvt_ukernel__scalar, int32_t)
