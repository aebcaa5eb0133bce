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
 * Scalar and slower than a SIMD approximation: hot float paths (Sigmoid, Tanh, Softmax) have their
 * own kernels. */
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

#endif
