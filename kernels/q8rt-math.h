/* Float -> int32 rounding shared by every kernel's epilogue and by the op front-ends (one
 * round-half-even core and its two policies, independent of the caller's floating-point
 * environment: no rint/nearbyint, which follow the rounding mode), and MLAS's logistic/tanh. */
#ifndef Q8RT_MATH_H
#define Q8RT_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* round_half_even(v) for a v that is not NaN and lies in [-2^31, 2^31). Floats of magnitude
 * >= 2^23 are integral already; below, truncation and the fraction are exact. */
static inline int32_t q8rt_round_half_even_core(float v) {
  if (v >= 8388608.0f || v <= -8388608.0f) return (int32_t)v;
  const int32_t i = (int32_t)v;    /* truncation toward zero */
  const float frac = v - (float)i; /* exact */
  const int32_t odd = i & 1;
  /* comparisons as 0/1 rather than branches: the fraction of real data is random, and a
   * mispredicted branch per value cost more than the arithmetic (|i| < 2^23: no overflow) */
  return i + (int32_t)(frac > 0.5f) - (int32_t)(frac < -0.5f) + (odd & (int32_t)(frac == 0.5f)) -
         (odd & (int32_t)(frac == -0.5f));
}

/* round_half_even(clamp(v, lo, hi)) for integral lo <= hi with |lo|, |hi| < 2^24; NaN gives lo
 * (what ONNX Runtime's max/min sequence does). Clamping first is exact: both bounds are integers,
 * so clamp and rounding commute. NaN is tested on its own before the clamps: written as
 * `!(v >= lo)`, a compiler may turn the clamps into fmaxnm/fminnm-style instructions that let NaN
 * through to the conversion (clang 14 for aarch64 does). Differs on purpose from q8rt_cvt_rne. */
static inline int32_t q8rt_round_clamp(float v, float lo, float hi) {
  if (v != v) return (int32_t)lo;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return q8rt_round_half_even_core(v);
}

/* round_half_even to int32 as x86's cvtps2dq does (what ONNX Runtime's MLAS kernels end with): NaN
 * or a value outside [-2^31, 2^31) gives INT32_MIN; no clamp. Differs on purpose from
 * q8rt_round_clamp. */
static inline int32_t q8rt_cvt_rne(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
  return q8rt_round_half_even_core(v);
}

/* ONNX Runtime's MLAS logistic and tanh (onnxruntime/core/mlas/lib/logistic.cpp, tanh.cpp; Eigen's
 * rational approximations): x clamped, p(x)/q(x) with Horner steps as fused multiply-adds, which is
 * what ORT's FMA3 kernels compute lane by lane. Shared by the Sigmoid/Tanh ops and the recurrent ops'
 * gates (ORT's LSTM/GRU call the same MLAS routines). */
/* The coefficients, named so the SIMD kernels (f32-vunary) use the very same values. */
#define Q8RT_MLAS_LOGISTIC_P0 4.37031012579801e-11f
#define Q8RT_MLAS_LOGISTIC_P1 1.15627324459942e-07f
#define Q8RT_MLAS_LOGISTIC_P2 6.08574864600143e-05f
#define Q8RT_MLAS_LOGISTIC_P3 8.51377133304701e-03f
#define Q8RT_MLAS_LOGISTIC_P4 2.48287947061529e-01f
#define Q8RT_MLAS_LOGISTIC_Q0 6.10247389755681e-13f
#define Q8RT_MLAS_LOGISTIC_Q1 5.76102136993427e-09f
#define Q8RT_MLAS_LOGISTIC_Q2 6.29106785017040e-06f
#define Q8RT_MLAS_LOGISTIC_Q3 1.70198817374094e-03f
#define Q8RT_MLAS_LOGISTIC_Q4 1.16817656904453e-01f
#define Q8RT_MLAS_LOGISTIC_Q5 9.93151921023180e-01f
#define Q8RT_MLAS_TANH_P0 -2.76076847742355e-16f
#define Q8RT_MLAS_TANH_P1 2.00018790482477e-13f
#define Q8RT_MLAS_TANH_P2 -8.60467152213735e-11f
#define Q8RT_MLAS_TANH_P3 5.12229709037114e-08f
#define Q8RT_MLAS_TANH_P4 1.48572235717979e-05f
#define Q8RT_MLAS_TANH_P5 6.37261928875436e-04f
#define Q8RT_MLAS_TANH_P6 4.89352455891786e-03f
#define Q8RT_MLAS_TANH_Q0 1.19825839466702e-06f
#define Q8RT_MLAS_TANH_Q1 1.18534705686654e-04f
#define Q8RT_MLAS_TANH_Q2 2.26843463243900e-03f
#define Q8RT_MLAS_TANH_Q3 4.89352518554385e-03f

static inline float q8rt_mlas_logistic(float x) {
  float v = x < -18.0f ? -18.0f : x;
  v = v > 18.0f ? 18.0f : v;
  const float x2 = v * v;
  float p = Q8RT_MLAS_LOGISTIC_P0;
  p = fmaf(p, x2, Q8RT_MLAS_LOGISTIC_P1);
  p = fmaf(p, x2, Q8RT_MLAS_LOGISTIC_P2);
  p = fmaf(p, x2, Q8RT_MLAS_LOGISTIC_P3);
  p = fmaf(p, x2, Q8RT_MLAS_LOGISTIC_P4);
  p = p * v;
  float q = Q8RT_MLAS_LOGISTIC_Q0;
  q = fmaf(q, x2, Q8RT_MLAS_LOGISTIC_Q1);
  q = fmaf(q, x2, Q8RT_MLAS_LOGISTIC_Q2);
  q = fmaf(q, x2, Q8RT_MLAS_LOGISTIC_Q3);
  q = fmaf(q, x2, Q8RT_MLAS_LOGISTIC_Q4);
  q = fmaf(q, x2, Q8RT_MLAS_LOGISTIC_Q5);
  float r = p / q + 0.5f;
  r = r < 0.0f ? 0.0f : r;
  return r > 1.0f ? 1.0f : r;
}

static inline float q8rt_mlas_tanh(float x) {
  float v = x < -9.0f ? -9.0f : x;
  v = v > 9.0f ? 9.0f : v;
  const float x2 = v * v;
  float p = Q8RT_MLAS_TANH_P0;
  p = fmaf(p, x2, Q8RT_MLAS_TANH_P1);
  p = fmaf(p, x2, Q8RT_MLAS_TANH_P2);
  p = fmaf(p, x2, Q8RT_MLAS_TANH_P3);
  p = fmaf(p, x2, Q8RT_MLAS_TANH_P4);
  p = fmaf(p, x2, Q8RT_MLAS_TANH_P5);
  p = fmaf(p, x2, Q8RT_MLAS_TANH_P6);
  p = p * v;
  float q = Q8RT_MLAS_TANH_Q0;
  q = fmaf(q, x2, Q8RT_MLAS_TANH_Q1);
  q = fmaf(q, x2, Q8RT_MLAS_TANH_Q2);
  q = fmaf(q, x2, Q8RT_MLAS_TANH_Q3);
  return p / q;
}

/* exp(x) for x <= 0 (Softmax's exp(x - max)), q8rt's own so every ISA computes the same bits:
 * x = n ln2 + t with n = round(x log2e) (a magic-bias add, valid for |x| < 2^22), t reduced with
 * ln2 split in two (Cody-Waite), exp(t) ~ 1 + t p(t) with a degree-5 minimax polynomial
 * (XNNPACK's f32 rr2-p5 coefficients), scaled by s = 2^n built in the exponent bits; below
 * ln(FLT_MIN) the result is 0 (no subnormal outputs). Every multiply-add is an fmaf (one
 * rounding), which the SIMD kernels issue as vfmadd/fmla: the same bits everywhere. Within ~2 ulp
 * of the true exp on [ln(FLT_MIN), 0]; NaN in, NaN out. */
#define Q8RT_EXP_LOG2E 0x1.715476p+0f
#define Q8RT_EXP_MAGIC_BIAS 0x1.8000FEp23f /* 1.5 * 2^23 + 127: n + 127 lands in the low bits */
#define Q8RT_EXP_MINUS_LN2_HI -0x1.62E400p-1f
#define Q8RT_EXP_MINUS_LN2_LO -0x1.7F7D1Cp-20f
#define Q8RT_EXP_C5 0x1.0F9F9Cp-7f
#define Q8RT_EXP_C4 0x1.573A1Ap-5f
#define Q8RT_EXP_C3 0x1.555A80p-3f
#define Q8RT_EXP_C2 0x1.FFFDC6p-2f
#define Q8RT_EXP_C1 0x1.FFFFF6p-1f
#define Q8RT_EXP_CUTOFF -0x1.5D589Ep6f /* ln(FLT_MIN): below, exp(x) is 0 */

static inline float q8rt_exp_nonpositive(float x) {
  float n = fmaf(x, Q8RT_EXP_LOG2E, Q8RT_EXP_MAGIC_BIAS);
  uint32_t bits;
  memcpy(&bits, &n, sizeof(bits));
  bits <<= 23;
  float s;
  memcpy(&s, &bits, sizeof(s));
  n = n - Q8RT_EXP_MAGIC_BIAS;
  float t = fmaf(n, Q8RT_EXP_MINUS_LN2_HI, x);
  t = fmaf(n, Q8RT_EXP_MINUS_LN2_LO, t);
  float p = fmaf(Q8RT_EXP_C5, t, Q8RT_EXP_C4);
  p = fmaf(p, t, Q8RT_EXP_C3);
  p = fmaf(p, t, Q8RT_EXP_C2);
  p = fmaf(p, t, Q8RT_EXP_C1);
  t = t * s;
  const float f = fmaf(t, p, s);
  return x < Q8RT_EXP_CUTOFF ? 0.0f : f;
}

#endif
