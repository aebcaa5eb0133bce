/* f32-vtranscend: float32 exp, log and erf over one span, q8rt_expf, q8rt_logf and q8rt_erff
 * (src/common/fmath.c) to the bit; every variant gives the scalar twin's bytes; y may be x.
 *
 * exp and erf: a fast path, and the scalar twin where it cannot decide. The twin computes a
 * double r_c (relative error about 1e-14) and rounds it once to float. The SIMD variants compute a
 * cheaper double r_f with fused multiply-adds (the same operations in the same order on every
 * ISA, so the same r_f everywhere):
 *   erf  a = |x| < 3.92: piece i = min(round(4a), 15) (ties to even), t = a - i/4 (exact),
 *        r_f = the piece's degree-8 polynomial in t by Horner (q8rt_fmath_erf_fast, fmath.h);
 *        |r_f - erf(a)| <= 2^-38.5 erf(a) (fit) + Horner's rounding (t <= 0.17: ~2^-52).
 *   exp  x in [-87.33, 89]: k = round(16 x / ln 2), r = x - k ln2/16 (two fmas, |r| <= 0.0218),
 *        p = Taylor of degree 5 (remainder < r^6/720 < 2^-42.6), r_f = (2^((k mod 16)/16) p)
 *        2^floor(k/16) (q8rt_fmath_exp2_16, correctly rounded; the power of two exact).
 * Both bounds plus the twin's (1e-14) give |r_f - r_c| <= 2^-37 r_f, i.e. at most
 * 2^-37 * 2^53 = 2^16 = Q8RT_FMATH_FAST_MARGIN ulps of r_f's double (r_f < 2^53 of its ulps).
 * In a binade of normal floats the rounding boundaries (midpoints between adjacent floats) are
 * the doubles whose low 29 bits are exactly 2^28 (float keeps 24 of double's 53 bits); the next
 * boundary across a power of two is 2^28 double ulps away. So where r_f's low 29 bits differ from
 * 2^28 by more than the margin, no boundary lies between r_f and r_c, and r_f rounds to the twin's
 * float (to-nearest on both; a tie of r_c is within the margin). exp below 2^-125 (x in
 * [-104, -87.33)): the boundaries are the odd multiples of 2^-150 (subnormal spacing 2^-149 up to
 * 2^-125), so with v = r_f 2^149 (exact) the test is |1/2 - |v - round(v)|| > 2^-36 v. The other
 * lanes (about 2^-12 of them), and erf's of 0 < a < 2^-125 (a subnormal result), take the twin.
 * Measured, not only argued: over every float the largest |r_f - r_c| is 1289 double ulps for exp
 * and 18601 for erf (tests/exhaustive/fmath_fast_margin.c; 0.006% and 0.024% of the lanes take the
 * twin), and make check-f32-vtranscend compares every float's output with the twin's (the proof).
 * Specials: NaN passes through with its bits, erf(+-0) = +-0, erf = +-1 from a = 3.92 on (as the
 * twin), exp = 0 for x <= -104 (exp(-104) < 2^-150, so the twin's rounding gives +0), exp of
 * x > 89 clamped to 89 (r_f > 2^128: inf either way).
 *
 * log: the same double algorithm on lanes of doubles operation for operation (the constants in
 * fmath.h, the same Horner order, + - * / only, no fusion; IEEE division is correctly rounded in
 * SIMD too), so every output is the twin's: x = m 2^e, m in [sqrt(1/2), sqrt(2)) (frexp by the
 * exponent bits: a float's double is never subnormal), log m by the atanh series in
 * s = f / (2 + f), degree 9 in s^2. Specials as q8rt_logf (log of a negative is NAN,
 * log(+-0) = -inf).
 *
 * Elu and Selu (ONNX Runtime's functors, the exp being q8rt_expf to the bit, as above):
 *   velu   y = x >= 0 ? x : alpha * (exp(x) - 1)
 *   vselu  y = x > 0 ? gamma * x : gamma * (alpha * (exp(x) - 1))
 * float operations, each rounded (no fusion); NaN takes the exp side (its payload kept). The SIMD
 * variants select by lane masks (a branch per element mispredicts on a conv's output, half its
 * signs negative); AVX-512 packs the lanes that need exp together first (vcompressps), so a block
 * with half its inputs positive computes half the exps. */
#ifndef Q8RT_F32_VTRANSCEND_H
#define Q8RT_F32_VTRANSCEND_H

#include <stddef.h>

typedef void (*q8rt_f32_vtranscend_ukernel_fn)(size_t n, const float *x, float *y);

typedef struct q8rt_f32_velu_params {
  float alpha, gamma; /* velu: alpha; vselu: alpha, gamma */
} q8rt_f32_velu_params;

typedef void (*q8rt_f32_velu_ukernel_fn)(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p);

/* exp's fast path: 16 / ln 2, and ln 2 / 16 split (the high part's 37 bits times k of 12 exact),
 * the lower end of its normal results (exp(-87.33) > 2^-126). */
#define Q8RT_F32_VEXP_FAST_INV 0x1.71547652b82fep+4
#define Q8RT_F32_VEXP_FAST_HI 0x1.62e42fefa0000p-5
#define Q8RT_F32_VEXP_FAST_LO 0x1.cf79abc9e3b3ap-44
#define Q8RT_F32_VEXP_FAST_MIN -87.33

/* The functions in the order of the kernel tables (Elu and Selu in a table of their own). */
enum q8rt_f32_vtranscend_op { Q8RT_F32_VEXP, Q8RT_F32_VLOG, Q8RT_F32_VERF, Q8RT_F32_VTRANSCEND_OP_COUNT };

enum q8rt_f32_velu_op { Q8RT_F32_VELU, Q8RT_F32_VSELU, Q8RT_F32_VELU_OP_COUNT };

#define Q8RT_F32_VTRANSCEND_PROTO_(op, isa) void q8rt_f32_v##op##_ukernel__##isa(size_t n, const float *x, float *y);
#define Q8RT_F32_VELU_PROTO_(op, isa) \
  void q8rt_f32_v##op##_ukernel__##isa(size_t n, const float *x, float *y, const q8rt_f32_velu_params *p);
/* clang-format off */
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) \
  Q8RT_F32_VTRANSCEND_PROTO_(exp, isa)              \
  Q8RT_F32_VTRANSCEND_PROTO_(log, isa)              \
  Q8RT_F32_VTRANSCEND_PROTO_(erf, isa)              \
  Q8RT_F32_VELU_PROTO_(elu, isa)                    \
  Q8RT_F32_VELU_PROTO_(selu, isa)
/* clang-format on */
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS

/* One ISA's functions indexed by enum q8rt_f32_vtranscend_op: Q8RT_F32_VTRANSCEND_TABLE(isa). */
#define Q8RT_F32_VTRANSCEND_TABLE(isa) \
  { q8rt_f32_vexp_ukernel__##isa, q8rt_f32_vlog_ukernel__##isa, q8rt_f32_verf_ukernel__##isa }
/* Its Elu and Selu, indexed by enum q8rt_f32_velu_op: Q8RT_F32_VELU_TABLE(isa). */
#define Q8RT_F32_VELU_TABLE(isa) \
  { q8rt_f32_velu_ukernel__##isa, q8rt_f32_vselu_ukernel__##isa }

#endif
