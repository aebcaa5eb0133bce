/* QLinearAdd / QLinearMul rows, scalar: the numerics reference of the q8-vbinary family (see
 * q8rt-kernels.h). Every float operation is one IEEE operation (fmaf is exactly rounded; the
 * build forbids contraction), so the SIMD variants reproduce these bytes exactly. */
#include <math.h>

#include "q8rt-kernels.h"
#include "q8rt-math.h"

/* cvtps2dq (q8rt_cvt_rne: NaN and |v| >= 2^31 give INT32_MIN), then saturation to the 8-bit
 * range (what MLAS' packs do). */
static inline int32_t vb_cvt_sat(float v, int32_t lo, int32_t hi) {
  const int32_t i = q8rt_cvt_rne(v);
  return i < lo ? lo : i > hi ? hi : i;
}

static inline float vb_add(float x1, float x2, const q8rt_q8_vbinary_params *p) {
  return fmaf(x1, p->r1, fmaf(x2, p->r2, p->f));
}

static inline float vb_mul(int32_t x1, int32_t x2, const q8rt_q8_vbinary_params *p) {
  return (float)((x1 - p->z1) * (x2 - p->z2)) * p->ratio + p->zc;
}

#define VB_SCALAR(T, LO, HI, SUF)                                                                                      \
  void q8rt_##SUF##_vadd_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) {  \
    for (size_t i = 0; i < n; i++) y[i] = (T)vb_cvt_sat(vb_add((float)x1[i], (float)x2[i], p), LO, HI);                \
  }                                                                                                                    \
  void q8rt_##SUF##_vaddc_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) { \
    const float c = (float)x2[0];                                                                                      \
    for (size_t i = 0; i < n; i++) y[i] = (T)vb_cvt_sat(vb_add((float)x1[i], c, p), LO, HI);                           \
  }                                                                                                                    \
  void q8rt_##SUF##_vmul_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) {  \
    for (size_t i = 0; i < n; i++) y[i] = (T)vb_cvt_sat(vb_mul(x1[i], x2[i], p), LO, HI);                              \
  }                                                                                                                    \
  void q8rt_##SUF##_vmulc_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) { \
    const int32_t c = x2[0];                                                                                           \
    for (size_t i = 0; i < n; i++) y[i] = (T)vb_cvt_sat(vb_mul(x1[i], c, p), LO, HI);                                  \
  }

VB_SCALAR(uint8_t, 0, 255, qu8)
VB_SCALAR(int8_t, -128, 127, qs8)
