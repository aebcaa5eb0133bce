/* f32-vtranscend: float32 exp, log and erf over one span, q8rt_expf, q8rt_logf and q8rt_erff
 * (src/common/fmath.c) to the bit: the SIMD variants evaluate the same double-precision algorithm
 * on lanes of doubles operation for operation (the same constants in fmath.h, the same Horner
 * order, + - * / only, no fusion; IEEE division is correctly rounded in SIMD too) and round once
 * to float, so every output equals the scalar function's on every CPU:
 *   vexp  exp(x) = 2^k exp(r), r = x - k ln2 by Taylor to r^13; 2^k built in the exponent bits.
 *         The scalar's ldexp branch (k outside [-1022, 1023]) only meets x whose float result is
 *         0 or +inf, which p * 2^clamp(k) rounds to as well.
 *   vlog  x = m 2^e, m in [sqrt(1/2), sqrt(2)) (frexp by the exponent bits: a float's double is
 *         never subnormal), log m by the atanh series in s = f / (2 + f), degree 9 in s^2.
 *   verf  a < 1: the Taylor series in a^2 to degree 17; a in [1, 3.92): exp(-a^2) a times the
 *         series in 2a^2 of degree 31 (a < 2), 45 (a < 3) or 59, one Horner run from the highest
 *         degree of the vector's lanes, a lane of a lower degree restarted at its top coefficient.
 * Specials as the scalar functions (NaN passes through with its bits, log of a negative is NAN,
 * log(+-0) = -inf, erf(+-0) = +-0, ...). Every variant gives the scalar twin's bytes; y may be x. */
#ifndef Q8RT_F32_VTRANSCEND_H
#define Q8RT_F32_VTRANSCEND_H

#include <stddef.h>

typedef void (*q8rt_f32_vtranscend_ukernel_fn)(size_t n, const float *x, float *y);

/* The functions in the order of the kernel tables. */
enum q8rt_f32_vtranscend_op { Q8RT_F32_VEXP, Q8RT_F32_VLOG, Q8RT_F32_VERF, Q8RT_F32_VTRANSCEND_OP_COUNT };

#define Q8RT_F32_VTRANSCEND_PROTO_(op, isa) void q8rt_f32_v##op##_ukernel__##isa(size_t n, const float *x, float *y);
/* clang-format off */
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) \
  Q8RT_F32_VTRANSCEND_PROTO_(exp, isa)              \
  Q8RT_F32_VTRANSCEND_PROTO_(log, isa)              \
  Q8RT_F32_VTRANSCEND_PROTO_(erf, isa)
/* clang-format on */
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS

/* One ISA's functions indexed by enum q8rt_f32_vtranscend_op: Q8RT_F32_VTRANSCEND_TABLE(isa). */
#define Q8RT_F32_VTRANSCEND_TABLE(isa) \
  { q8rt_f32_vexp_ukernel__##isa, q8rt_f32_vlog_ukernel__##isa, q8rt_f32_verf_ukernel__##isa }

#endif
