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

/* Printed by tests/exhaustive/fit_fmath_fast.py; make check-f32-vtranscend is what proves the
 * fast paths exact (f32-vtranscend.h). */
const double q8rt_fmath_erf_fast[9][16] = {
    {0.0, 0x1.1af54e232d313p-2, 0x1.0a7ef5c18ee1ep-1, 0x1.6c1c9759d0eb7p-1, 0x1.af767a74108b6p-1, 0x1.d8865d98abe0bp-1,
     0x1.eea5557137aeep-1, 0x1.f92d077f8d574p-1, 0x1.fd9ae142795d9p-1, 0x1.ff404760319b6p-1, 0x1.ffcaa8f4c9be6p-1,
     0x1.fff2cfb0453dcp-1, 0x1.fffd1ac4135fbp-1, 0x1.ffff6f9f67e63p-1, 0x1.ffffe710d5661p-1, 0x1.fffffc2f171e4p-1},
    {0x1.20dd7504286d7p+0, 0x1.0f5d1602f1ef4p+0, 0x1.c1efca49af42fp-1, 0x1.492e42d7a0040p-1, 0x1.a911f0970db53p-2,
     0x1.e4652fadbae4ep-3, 0x1.e723726b41874p-4, 0x1.b0553031dcea8p-5, 0x1.529b9e8d00dccp-6, 0x1.d4143a9edd128p-8,
     0x1.1d831710ef197p-9, 0x1.3360ccd39bb3ap-11, 0x1.2408e9b90ed74p-13, 0x1.e9b5e8bf80248p-16, 0x1.6a5971f103091p-18,
     0x1.d9371d9ff255fp-21},
    {0.0, -0x1.0f5d160176cc2p-2, -0x1.c1efca49de230p-2, -0x1.edc56443a3061p-2, -0x1.a911f09724da4p-2,
     -0x1.2ebf3dccb6de7p-2, -0x1.6d5a95d0b7bd9p-3, -0x1.7a4a8a2bd2ecfp-4, -0x1.529b9e8cbbdd7p-5, -0x1.074b60f89695cp-6,
     -0x1.64e3dcd37361bp-8, -0x1.a6a519a1b0079p-10, -0x1.b60d5e9a22209p-12, -0x1.8de3cd2f76ef9p-14,
     -0x1.3d0e43d6d1bbap-16, -0x1.bba3ac9898a28p-19},
    {-0x1.8127466966d63p-2, -0x1.3c974408c2115p-2, -0x1.2bf5320e1c1f7p-3, 0x1.b6e8515794de5p-6, 0x1.1b614a98c2924p-3,
     0x1.571d01fc6be13p-3, 0x1.1c2a0329c7230p-3, 0x1.7148c445ebb39p-4, 0x1.8b0ae3989969dp-5, 0x1.63ef612f9027ep-6,
     0x1.119d9fc90f81fp-7, 0x1.69cf454be51e4p-9, 0x1.9db74bf6d8e27p-11, 0x1.9aa4907c13170p-13, 0x1.62ccf9c535b87p-15,
     0x1.0b6a94a4bd337p-17},
    {0.0, 0x1.040e867b380bbp-3, 0x1.76f27e2b309c8p-3, 0x1.349b5f5e1671dp-3, 0x1.1b614c24c0352p-4, -0x1.93a99bceaa588p-8,
     -0x1.6d5a9548c97bdp-5, -0x1.8a0da58ac43f9p-5, -0x1.1a2c59ea43cdcp-5, -0x1.38a98397ae242p-6, -0x1.1a89b983009a2p-7,
     -0x1.ab0c2664c9652p-9, -0x1.11c859eb035f1p-10, -0x1.2c7d5bfa0a457p-12, -0x1.1c0771d61feb3p-14,
     -0x1.d06f5112c4bcfp-17},
    {0x1.ce2d97a642521p-4, 0x1.47e4af39ba428p-4, 0x1.dffdda7a5de4dp-8, -0x1.b4269fc1be2c1p-5, -0x1.1b60776a17f5fp-4,
     -0x1.828291479859fp-5, -0x1.e7296c634dae5p-7, 0x1.b21c1180d7ae9p-8, 0x1.ace76ab3ea845p-7, 0x1.5d3c61baf8442p-7,
     0x1.90e9d3a0d878ep-8, 0x1.6936976296656p-9, 0x1.0a7af36d166c2p-10, 0x1.49075ca26fb85p-12, 0x1.5864ccd4273dfp-14,
     0x1.342b8bee148a6p-16},
    {0.0, -0x1.4c0415f42f1fep-5, -0x1.99f0cda4b1bbdp-5, -0x1.b849974e388a4p-6, 0x1.2e3a8fa64fdf2p-8,
     0x1.5cfdfe8ce1346p-6, 0x1.3ca3617e7b449p-6, 0x1.25b4a4e9337b8p-7, 0x1.e1bb4950665cfp-12, -0x1.7cac5ac7ee138p-9,
     -0x1.6ece2bc8f0b8fp-9, -0x1.b276d0a3ac322p-10, -0x1.82f3b273e6001p-11, -0x1.1455b1cc96d1fp-12,
     -0x1.4614777946689p-14, -0x1.4357eafdcd387p-16},
    {-0x1.b5960240c1c06p-6, -0x1.0758c2653038bp-6, 0x1.5d3958850aad1p-8, 0x1.2bbeee6a9d303p-6, 0x1.ee6717255a429p-7,
     0x1.df4ef05fc4d9fp-9, -0x1.32e245ebb1619p-8, -0x1.8afd9db305229p-8, -0x1.bb197f970fc55p-9, -0x1.6658086a3efefp-11,
     0x1.17bc19d01986bp-11, 0x1.516223d6697cep-11, 0x1.9a0d3e752fe7ap-12, 0x1.666e46d22f2cep-13, 0x1.ecb501e0fdf74p-15,
     0x1.14b9c1643122cp-16},
    {0.0, 0x1.38ec2f43e65abp-7, 0x1.47d9be4534368p-7, 0x1.300b7bff129f9p-9, -0x1.35fcd6d403198p-8,
     -0x1.733821c27bc49p-8, -0x1.355dbf89247b6p-9, 0x1.7792f0e9c436dp-11, 0x1.9e4f8fdf707bdp-10, 0x1.0577c94d53b08p-10,
     0x1.137193f5019ccp-12, -0x1.6d8a90ef6097fp-14, -0x1.192867422b9a9p-13, -0x1.55f6dc6aa8874p-14,
     -0x1.207085f169ff5p-15, -0x1.77054450a6bbep-17},
};

const double q8rt_fmath_exp2_16[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};

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
