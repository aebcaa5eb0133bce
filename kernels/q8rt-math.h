/* Rounding and clamping shared by every kernel's epilogue, written so that they do not depend on
 * the caller's floating-point environment (no rint/nearbyint, which follow the rounding mode). */
#ifndef Q8RT_MATH_H
#define Q8RT_MATH_H

#include <stdint.h>

/* round_half_even(clamp(v, lo, hi)) for integral lo <= hi with |lo|, |hi| < 2^24.
 * Clamping first is exact: both bounds are integers, so clamp and rounding commute. NaN maps to lo
 * (what ONNX Runtime's max/min sequence does).
 * Differs on purpose from qk_cvt_rne (qlinear_common.h): clamps first and maps NaN to lo; that one mirrors cvtps2dq. */
static inline int32_t q8rt_round_clamp(float v, float lo, float hi) {
  if (!(v >= lo)) v = lo;
  if (v > hi) v = hi;
  int32_t i = (int32_t)v;    /* truncation toward zero */
  float frac = v - (float)i; /* exact: |v| < 2^24 */
  if (frac > 0.5f) {
    i += 1;
  } else if (frac < -0.5f) {
    i -= 1;
  } else if (frac == 0.5f) {
    i += i & 1;
  } else if (frac == -0.5f) {
    i -= i & 1;
  }
  return i;
}

#endif
