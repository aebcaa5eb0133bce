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

/* x ^ flip as the element type, and a result's byte ^ flip */
#define VB_IN(T, x, fl) ((T)((uint8_t)(x) ^ (fl)))
#define VB_OUT(T, v, fl) ((T)((uint8_t)(T)(v) ^ (fl)))

#define VB_SCALAR(T, LO, HI, SUF)                                                                                      \
  void q8rt_##SUF##_vadd_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) {  \
    const uint8_t fl = p->flip;                                                                                        \
    for (size_t i = 0; i < n; i++)                                                                                     \
      y[i] = VB_OUT(T, vb_cvt_sat(vb_add((float)VB_IN(T, x1[i], fl), (float)VB_IN(T, x2[i], fl), p), LO, HI), fl);     \
  }                                                                                                                    \
  void q8rt_##SUF##_vaddc_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) { \
    const uint8_t fl = p->flip;                                                                                        \
    const float c = (float)VB_IN(T, x2[0], fl);                                                                        \
    for (size_t i = 0; i < n; i++) y[i] = VB_OUT(T, vb_cvt_sat(vb_add((float)VB_IN(T, x1[i], fl), c, p), LO, HI), fl); \
  }                                                                                                                    \
  void q8rt_##SUF##_vmul_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) {  \
    const uint8_t fl = p->flip;                                                                                        \
    for (size_t i = 0; i < n; i++)                                                                                     \
      y[i] = VB_OUT(T, vb_cvt_sat(vb_mul(VB_IN(T, x1[i], fl), VB_IN(T, x2[i], fl), p), LO, HI), fl);                   \
  }                                                                                                                    \
  void q8rt_##SUF##_vmulc_ukernel__scalar(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) { \
    const uint8_t fl = p->flip;                                                                                        \
    const int32_t c = VB_IN(T, x2[0], fl);                                                                             \
    for (size_t i = 0; i < n; i++) y[i] = VB_OUT(T, vb_cvt_sat(vb_mul(VB_IN(T, x1[i], fl), c, p), LO, HI), fl);        \
  }

VB_SCALAR(uint8_t, 0, 255, qu8)
VB_SCALAR(int8_t, -128, 127, qs8)
