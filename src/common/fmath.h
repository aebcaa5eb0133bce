/* Transcendental functions of float that give the same bits on every CPU q8rt runs on.
 *
 * libm's float functions differ between platforms: glibc's erff, tanhf and log1pf give different
 * results on x86-64 and aarch64 for the same input (its aarch64 build fuses multiply-adds), and
 * other C libraries have their own approximations. q8rt's ops that follow the ONNX formulas with
 * exp, log, log1p, erf or tanh (Exp, Log, Erf, Gelu, Elu, Selu, Softplus, the recurrent ops'
 * ScaledTanh/Elu/Softplus activations, and every 8-bit table built from them) call these instead.
 *
 * Each one evaluates in double with + - * / only (IEEE 754 rounds those the same everywhere, and
 * q8rt is built with -ffp-contract=off), about 1e-14 relative accuracy, then rounds once to
 * float: almost always the correctly rounded result, and always the same bits. Special values
 * follow C99 Annex F (NaN in, NaN out; exp(-inf) = 0, log(0) = -inf, erf(+-inf) = +-1, ...).
 * Scalar here; the f32-vtranscend kernels evaluate expf, logf and erff on SIMD lanes of doubles with
 * the same bits (hot float paths such as Sigmoid, Tanh and Softmax have their own approximations). */
#ifndef Q8RT_FMATH_H
#define Q8RT_FMATH_H

float q8rt_expf(float x);
float q8rt_logf(float x);
float q8rt_log1pf(float x);
float q8rt_erff(float x);
float q8rt_tanhf(float x);

/* The same in double, for formulas that keep an intermediate result in double before the one
 * rounding to float (Softplus: log1p(exp(x))). */
double q8rt_exp_d(double x);
double q8rt_log1p_d(double x);

/* The constants of the algorithms above, for the f32-vtranscend kernels (kernels/f32-vtranscend),
 * which evaluate q8rt_expf, q8rt_logf and q8rt_erff operation for operation on SIMD lanes of
 * doubles. ln 2 split in two (fdlibm's values): the high part has 32 significant bits, so
 * k * LN2_HI is exact for |k| < 2^21 and x - k * LN2_HI loses nothing. */
#define Q8RT_FMATH_LN2_HI 6.93147180369123816490e-01
#define Q8RT_FMATH_LN2_LO 1.90821492927058770002e-10
#define Q8RT_FMATH_INV_LN2 1.44269504088896338700e+00
#define Q8RT_FMATH_ROUND_MAGIC 6755399441055744.0 /* 1.5 * 2^52: adding and subtracting it rounds to an integer */
#define Q8RT_FMATH_SQRT_HALF 0.70710678118654752440
#define Q8RT_FMATH_2_SQRTPI 1.12837916709551257390
extern const double q8rt_fmath_rfact[21];      /* 1 / n!: exp's Taylor series to r^13 */
extern const double q8rt_fmath_rodd[10];       /* 1 / (2k + 3): log's atanh series in s^2, degree 9 */
extern const double q8rt_fmath_erf_taylor[18]; /* erf's Taylor series in a^2 for a < 1, degree 17 */
extern const double q8rt_fmath_rdfact[60];     /* 1 / (2n+1)!!: erf for a >= 1, degree 31/45/59 */

/* The kernels' fast paths (kernels/f32-vtranscend/f32-vtranscend.h has the argument): a cheap
 * double approximation r_f within a relative 2^-37 of the algorithm's own double result r_c; where
 * r_f is more than Q8RT_FMATH_FAST_MARGIN double ulps from every rounding boundary of float (the
 * midpoints between adjacent floats), r_c rounds to the same float and r_f's rounding is taken;
 * elsewhere the lane takes the scalar function. */
#define Q8RT_FMATH_FAST_MARGIN 65536
/* erf(a) for a in [0, 3.92): 16 pieces, piece i = min(round(4a), 15) (ties to even) a polynomial
 * of degree 8 in t = a - i/4, coefficient k of piece i at [k][i]. Piece 0 ([0, 1/8]) is odd
 * (t (c1 + c3 t^2 + c5 t^4 + c7 t^6), relative error below 2^-38.5); pieces 1-15 within a relative
 * 2^-41.5 of erf (weighted least squares at Chebyshev nodes). */
extern const double q8rt_fmath_erf_fast[9][16];
/* 2^(j/16) for j = 0..15, correctly rounded: exp's fast path */
extern const double q8rt_fmath_exp2_16[16];

#endif
