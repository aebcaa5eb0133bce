/* Deterministic exp/log/log1p/erf/tanh of float (see fmath.h): double arithmetic with + - * /
 * only, one rounding to float at the end. Constants written as quotients (1.0 / 720.0) are folded
 * by the compiler with the same IEEE division the CPU would do. ldexp and frexp are exact. */
#include "fmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LN2_HI Q8RT_FMATH_LN2_HI
#define LN2_LO Q8RT_FMATH_LN2_LO
#define INV_LN2 Q8RT_FMATH_INV_LN2
#define ROUND_MAGIC Q8RT_FMATH_ROUND_MAGIC

/* p(x) = c[0] + c[1] x + ... + c[deg] x^deg by Horner's rule, highest coefficient first. */
static double horner(const double *c, int deg, double x) {
  double p = c[deg];
  for (int k = deg - 1; k >= 0; k--) p = p * x + c[k];
  return p;
}

/* 1 / n! for n = 0..20 */
const double q8rt_fmath_rfact[21] = {
    1.0,
    1.0,
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362880.0,
    1.0 / 3628800.0,
    1.0 / 39916800.0,
    1.0 / 479001600.0,
    1.0 / 6227020800.0,
    1.0 / 87178291200.0,
    1.0 / 1307674368000.0,
    1.0 / 20922789888000.0,
    1.0 / 355687428096000.0,
    1.0 / 6402373705728000.0,
    1.0 / 121645100408832000.0,
    1.0 / 2432902008176640000.0,
};

/* 1 / (2k + 3) for k = 0..9: the atanh series of log */
const double q8rt_fmath_rodd[10] = {1.0 / 3.0,  1.0 / 5.0,  1.0 / 7.0,  1.0 / 9.0,  1.0 / 11.0,
                                    1.0 / 13.0, 1.0 / 15.0, 1.0 / 17.0, 1.0 / 19.0, 1.0 / 21.0};

/* (-1)^n / (n! (2n + 1)) for n = 0..17: the Taylor series of erf(a) / (2 a / sqrt(pi)) */
const double q8rt_fmath_erf_taylor[18] = {
    1.0,
    -1.0 / 3.0,
    1.0 / (2.0 * 5.0),
    -1.0 / (6.0 * 7.0),
    1.0 / (24.0 * 9.0),
    -1.0 / (120.0 * 11.0),
    1.0 / (720.0 * 13.0),
    -1.0 / (5040.0 * 15.0),
    1.0 / (40320.0 * 17.0),
    -1.0 / (362880.0 * 19.0),
    1.0 / (3628800.0 * 21.0),
    -1.0 / (39916800.0 * 23.0),
    1.0 / (479001600.0 * 25.0),
    -1.0 / (6227020800.0 * 27.0),
    1.0 / (87178291200.0 * 29.0),
    -1.0 / (1307674368000.0 * 31.0),
    1.0 / (20922789888000.0 * 33.0),
    -1.0 / (355687428096000.0 * 35.0),
};

double q8rt_exp_d(double x) {
  if (x != x) return x;
  if (x > 710.0) return INFINITY; /* also +inf */
  if (x < -746.0) return 0.0;     /* also -inf */
  /* x = k ln2 + r, |r| <= ln2 / 2 (plus rounding): exp(x) = 2^k exp(r) */
  double k = x * INV_LN2 + ROUND_MAGIC;
  k -= ROUND_MAGIC;
  const double r = (x - k * LN2_HI) - k * LN2_LO;
  /* Taylor to r^13: the next term is below 4e-18 for |r| <= 0.347 */
  const double p = horner(q8rt_fmath_rfact, 13, r);
  const int ki = (int)k;
  if (ki >= -1022 && ki <= 1023) { /* 2^k built in the exponent bits: the product is exact, as ldexp's */
    const uint64_t bits = (uint64_t)(ki + 1023) << 52;
    double s;
    memcpy(&s, &bits, sizeof(s));
    return p * s;
  }
  return ldexp(p, ki);
}

/* log(x) for a finite x > 0. */
static double log_pos(double x) {
  int e;
  double m = frexp(x, &e); /* x = m 2^e, m in [0.5, 1) */
  if (m < Q8RT_FMATH_SQRT_HALF) {
    m *= 2.0;
    e -= 1;
  }
  /* m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(s) = 2s (1 + s^2/3 + s^4/5 + ...), s = f / (2 + f),
   * |s| <= 0.172; f = m - 1 is exact. The series stops at s^20 (next term < 1e-18). */
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double s2 = s * s;
  const double t = horner(q8rt_fmath_rodd, 9, s2);
  const double logm = 2.0 * s + 2.0 * s * (s2 * t);
  const double de = (double)e;
  return de * LN2_HI + (de * LN2_LO + logm);
}

double q8rt_log1p_d(double x) {
  if (x == INFINITY) return x;
  if (x == -1.0) return -INFINITY;
  if (!(x > -1.0)) return NAN;
  /* log1p(x) = log(u) * x / (u - 1) with u = 1 + x rounded: the factor corrects u's rounding
   * error (Goldberg, "What every computer scientist should know about floating-point arithmetic",
   * theorem 4); u == 1 means |x| is below half an ulp of 1, where log1p(x) = x to double precision. */
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  return log_pos(u) * (x / (u - 1.0));
}

float q8rt_expf(float x) {
  if (x != x) return x;
  return (float)q8rt_exp_d((double)x);
}

float q8rt_logf(float x) {
  if (x != x) return x;
  if (x < 0.0f) return NAN;
  if (x == 0.0f) return -INFINITY;
  if (x == INFINITY) return x;
  return (float)log_pos((double)x);
}

float q8rt_log1pf(float x) {
  if (x != x) return x;
  return (float)q8rt_log1p_d((double)x);
}

/* 1 / (2n+1)!! for n = 0..59, each the one before divided by 2n+1 in double (printed exactly, as
 * hexadecimal floating constants). */
const double q8rt_fmath_rdfact[60] = {
    0x1.0000000000000p+0,   0x1.5555555555555p-2,   0x1.1111111111111p-4,   0x1.3813813813813p-7,
    0x1.1566abc011566p-10,  0x1.937e11175f094p-14,  0x1.f09b28ba4d954p-18,  0x1.08db48ebe51c6p-21,
    0x1.f28db670be538p-26,  0x1.a3d5a71b92cd1p-30,  0x1.3fdfbc45c52e8p-34,  0x1.bd0ac3296b621p-39,
    0x1.1cd3b01a822a4p-43,  0x1.519297d390c9cp-48,  0x1.747e72912d01fp-53,  0x1.808286c768441p-58,
    0x1.74dba97b8be4fp-63,  0x1.54e6174c62a57p-68,  0x1.26d4d5e132b8ap-73,  0x1.e3d36c1c38fa7p-79,
    0x1.799ec4c4db4cdp-84,  0x1.19050980a3333p-89,  0x1.8fac24452c5f9p-95,  0x1.101e0dcd0ddf0p-100,
    0x1.636b2c25f2c54p-106, 0x1.be03fb2a9a10ap-112, 0x1.0d4adb45318c7p-117, 0x1.395bc2a44c465p-123,
    0x1.5fd74f512d388p-129, 0x1.7da878c0310d9p-135, 0x1.906d9c10fce87p-141, 0x1.96c8bf0d31af3p-147,
    0x1.9086a47b449ccp-153, 0x1.7e978a031f26fp-159, 0x1.62de2e635bf7ap-165, 0x1.3fe183f49b034p-171,
    0x1.18718c3c25b5bp-177, 0x1.de9fa7a781361p-184, 0x1.8dd12aeef7086p-190, 0x1.42483cb4a13dep-196,
    0x1.fd4910eadf326p-203, 0x1.88b3b6aeeff58p-209, 0x1.27ae777aaea6cp-215, 0x1.b306925c38dddp-222,
    0x1.38d3d3acbe774p-228, 0x1.b80562010be87p-235, 0x1.2ecf673a86d18p-241, 0x1.97ff322921708p-248,
    0x1.0d319d230e254p-254, 0x1.5c0c6e1377234p-261, 0x1.b9175b58090bcp-268, 0x1.12137bdd39d0ap-274,
    0x1.4e1ca0bfaa70fp-281, 0x1.8faf67c62dfc5p-288, 0x1.d55ae5e66046dp-295, 0x1.0e9e7ff139d13p-301,
    0x1.328ac2c4386e1p-308, 0x1.5531d21af5592p-315, 0x1.7545d22a9f037p-322, 0x1.9180e20fba193p-329,
};

float q8rt_erff(float x) {
  if (x != x) return x;
  const double a = fabs((double)x);
  /* 1 - erf(3.92) < 2^-25: from there on erf rounds to +-1 in float */
  if (a >= 3.92) return x > 0.0f ? 1.0f : -1.0f;
  if (a == 0.0) return x;  /* keeps the sign of zero */
  const double a2 = a * a; /* exact: 24-bit mantissa squared */
  double r;
  if (a < 1.0) {
    /* erf(a) = 2/sqrt(pi) sum_n (-1)^n a^(2n+1) / (n! (2n+1)), to n = 17 (next term < 1e-17) */
    const double p = horner(q8rt_fmath_erf_taylor, 17, a2);
    r = Q8RT_FMATH_2_SQRTPI * a * p;
  } else {
    /* erf(a) = 2/sqrt(pi) exp(-a^2) a sum_n (2a^2)^n / (2n+1)!!: every term positive, so no
     * cancellation; Horner to the degree where the next term is below 1e-17 of the sum at the
     * interval's end (31 at a = 2, 45 at 3, 59 at 3.92). Fixed degrees, no division: the loop
     * overlaps across elements. */
    const int deg = a < 2.0 ? 31 : a < 3.0 ? 45 : 59; /* f32-vtranscend starts at these */
    const double sum = a * horner(q8rt_fmath_rdfact, deg, 2.0 * a2);
    r = Q8RT_FMATH_2_SQRTPI * q8rt_exp_d(-a2) * sum;
  }
  const float f = (float)r;
  return x < 0.0f ? -f : f;
}

float q8rt_tanhf(float x) {
  if (x != x) return x;
  const double a = fabs((double)x);
  /* 1 - tanh(9.02) < 2^-25: from there on tanh rounds to +-1 in float */
  if (a >= 9.02) return x > 0.0f ? 1.0f : -1.0f;
  if (a == 0.0) return x;
  double r;
  if (a < 0.55) {
    /* tanh(a) = e / (e + 2) with e = expm1(2a), by Taylor to y^20 (y = 2a <= 1.1; next < 1e-19) */
    const double y = 2.0 * a;
    const double p = horner(q8rt_fmath_rfact + 1, 19, y);
    const double e = y * p;
    r = e / (e + 2.0);
  } else {
    r = 1.0 - 2.0 / (q8rt_exp_d(2.0 * a) + 1.0);
  }
  const float f = (float)r;
  return x < 0.0f ? -f : f;
}
