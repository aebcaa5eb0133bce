/* q8-softmax: `rows` contiguous QLinearSoftmax rows of d 8-bit values each (uint8, or int8 with
 * is_signed; row r at x + r * d, its outputs at y + r * d), each row by ONNX Runtime's formula
 * (src/ops/qlinear_softmax.c has the derivation):
 *   adj = (is_signed ? 127 : 255) - max(x);  e_i = table[(uint8)(adj + x_i)]
 *   sum = e_0 + e_1 + ... (float, in index order: the one sequential part)
 *   y_i = min(cvt_rne(e_i * y_factor / sum) + y_zp, qmax), stored as its low 8 bits
 * cvt_rne rounds half to even and gives INT32_MIN out of range or for NaN (cvtps2dq's result),
 * independently of the floating-point environment. */
#ifndef Q8RT_Q8_SOFTMAX_H
#define Q8RT_Q8_SOFTMAX_H

#include <stddef.h>
#include <stdint.h>

typedef struct q8rt_q8_softmax_params {
  float y_factor;
  int32_t y_zp;
  int32_t qmax; /* 255 (uint8) or 127 (int8) */
  int is_signed;
} q8rt_q8_softmax_params;

typedef void (*q8rt_q8_softmax_ukernel_fn)(size_t rows, size_t d, const uint8_t *x, uint8_t *y, const float table[256],
                                           const q8rt_q8_softmax_params *p);

void q8rt_q8_softmax_ukernel__scalar(size_t rows, size_t d, const uint8_t *x, uint8_t *y, const float table[256],
                                     const q8rt_q8_softmax_params *p);

#define Q8RT_Q8_SOFTMAX_UKERNEL(isa, fn) \
  void fn(size_t rows, size_t d, const uint8_t *x, uint8_t *y, const float table[256], const q8rt_q8_softmax_params *p);
#include "q8-softmax/q8-softmax.inc"
#undef Q8RT_Q8_SOFTMAX_UKERNEL

#endif
