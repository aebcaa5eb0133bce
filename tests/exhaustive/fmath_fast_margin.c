/* The margin of f32-vtranscend's fast paths (f32-vtranscend.h), measured over every float: the
 * largest distance in double ulps between the fast r_f (modelled here with C99 fma, the
 * operations of the SIMD variants in their order) and the twin's double r_c before its rounding
 * (fmath.c's algorithm, erf's copied here as it keeps r_c to itself), and how many r_f lie within
 * Q8RT_FMATH_FAST_MARGIN of a float rounding boundary (the lanes that take the twin). Not built by
 * make (minutes):
 *   cc -O2 -ffp-contract=off -Isrc -o /tmp/margin tests/exhaustive/fmath_fast_margin.c src/common/fmath.c -lm
 *   /tmp/margin erf; /tmp/margin exp
 * Measured: erf 18601 ulps (at 0x1.c79e7cp-4, piece 0), 0.024% near; exp 1289, 0.006% near. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "common/fmath.h"
#include "f32-vtranscend/f32-vtranscend.h"
static double horner(const double *c, int deg, double x) {
  double p = c[deg];
  for (int k = deg - 1; k >= 0; k--) p = p * x + c[k];
  return p;
}
static double erf_c(double a) { /* fmath.c's q8rt_erff before the rounding, a in (0, 3.92) */
  const double a2 = a * a;
  if (a < 1.0) return Q8RT_FMATH_2_SQRTPI * a * horner(q8rt_fmath_erf_taylor, 17, a2);
  const int deg = a < 2.0 ? 31 : a < 3.0 ? 45 : 59;
  const double sum = a * horner(q8rt_fmath_rdfact, deg, 2.0 * a2);
  return Q8RT_FMATH_2_SQRTPI * q8rt_exp_d(-a2) * sum;
}
static double erf_f(double a) {
  const double kd = nearbyint(fmin(a * 4.0, 15.0));
  const int i = (int)kd;
  const double t = fma(kd, -0.25, a);
  double p = q8rt_fmath_erf_fast[8][i];
  for (int k = 7; k >= 0; k--) p = fma(p, t, q8rt_fmath_erf_fast[k][i]);
  return p;
}
#define EXP_INV Q8RT_F32_VEXP_FAST_INV
#define EXP_HI Q8RT_F32_VEXP_FAST_HI
#define EXP_LO Q8RT_F32_VEXP_FAST_LO
static double exp_f(double x) {
  const double kd = nearbyint(x * EXP_INV);
  double r = fma(kd, -EXP_HI, x);
  r = fma(kd, -EXP_LO, r);
  double p = 1.0 / 120.0;
  p = fma(p, r, 1.0 / 24.0);
  p = fma(p, r, 1.0 / 6.0);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  const int64_t k = (int64_t)kd;
  return q8rt_fmath_exp2_16[k & 15] * p * ldexp(1.0, (int)(k >> 4));
}
static int64_t dist(double f, double c) {
  int64_t bf, bc;
  memcpy(&bf, &f, 8);
  memcpy(&bc, &c, 8);
  return llabs(bf - bc);
}
int main(int argc, char **argv) {
  int64_t worst = 0;
  float wx = 0;
  uint64_t near = 0, cnt = 0;
  const int which = argc > 1 && strcmp(argv[1], "exp") == 0;
  uint32_t lo = which ? 0 : 0x0d000000u; /* 2^-101 */
  for (uint64_t b = 0; b < (1ull << 32); b++) {
    float x;
    uint32_t u = (uint32_t)b;
    memcpy(&x, &u, 4);
    double rf, rc;
    if (!which) {
      if (u < lo || u >= 0x80000000u || !(x < 3.92f)) continue;
      rf = erf_f(x);
      rc = erf_c(x);
    } else {
      if (!(x >= Q8RT_F32_VEXP_FAST_MIN && x <= 89.0f)) continue;
      rf = exp_f(x);
      rc = q8rt_exp_d(x);
    }
    const int64_t d = dist(rf, rc);
    cnt++;
    if (d > worst) worst = d, wx = x;
    uint64_t bits;
    memcpy(&bits, &rf, 8);
    int64_t m = (int64_t)(bits & 0x1fffffff) - (1 << 28);
    if (llabs(m) <= Q8RT_FMATH_FAST_MARGIN) near++;
  }
  printf("%s: %llu inputs, worst %lld double ulps at %a, %llu near a boundary (%.3g%%)\n", which ? "exp" : "erf",
         (unsigned long long)cnt, (long long)worst, (double)wx, (unsigned long long)near, 100.0 * near / cnt);
}
