/* q8-softmax, AArch64 NEON: the row maximum 16 bytes at a time (umax / smax, then across the
 * vector), the sum in index order exactly as the scalar twin (a sequential float chain: the order
 * is part of the result), then the outputs 8 at a time: the table entries loaded one by one (NEON
 * has no gather), multiply, divide (IEEE per lane, the same operations as the twin), round half to
 * even with fcvtns (its rounding is in the instruction, independent of FPCR), INT32_MIN where the
 * value is out of int32 range or NaN (fcvtns saturates instead: the twin follows x86's cvtps2dq),
 * + y_zp with wraparound (unsigned lanes), min qmax. */
#include <arm_neon.h>

#include "q8-softmax/q8-softmax.h"
#include "q8rt-neon.h"

static void sm_row(size_t d, const uint8_t *x, uint8_t *y, const float table[256], const q8rt_q8_softmax_params *p) {
  const int s = p->is_signed;
  int32_t xmax = -1000;
  size_t k = 0;
  if (d >= 16) {
    if (s) {
      int8x16_t m = vld1q_s8((const int8_t *)x);
      for (k = 16; k + 16 <= d; k += 16) m = vmaxq_s8(m, vld1q_s8((const int8_t *)(x + k)));
      xmax = vmaxvq_s8(m);
    } else {
      uint8x16_t m = vld1q_u8(x);
      for (k = 16; k + 16 <= d; k += 16) m = vmaxq_u8(m, vld1q_u8(x + k));
      xmax = vmaxvq_u8(m);
    }
  }
  for (; k < d; k++) {
    const int32_t v = s ? (int32_t)(int8_t)x[k] : (int32_t)x[k];
    if (v > xmax) xmax = v;
  }
  const int32_t adj = (s ? 127 : 255) - xmax;
  float sum = 0.0f;
  for (k = 0; k < d; k++) sum += table[(uint8_t)(adj + (s ? (int32_t)(int8_t)x[k] : (int32_t)x[k]))];
  const float32x4_t vf = vdupq_n_f32(p->y_factor), vsum = vdupq_n_f32(sum);
  const uint32x4_t vzp = vdupq_n_u32((uint32_t)p->y_zp);
  const int32x4_t vmax = vdupq_n_s32(p->qmax);
  float e[8];
  for (k = 0; k + 8 <= d; k += 8) {
    for (int i = 0; i < 8; i++) {
      const int32_t xi = s ? (int32_t)(int8_t)x[k + (size_t)i] : (int32_t)x[k + (size_t)i];
      e[i] = table[(uint8_t)(adj + xi)];
    }
    const float32x4_t v0 = vdivq_f32(vmulq_f32(vld1q_f32(e), vf), vsum);
    const float32x4_t v1 = vdivq_f32(vmulq_f32(vld1q_f32(e + 4), vf), vsum);
    const int32x4_t q0 = vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(q8rt_neon_cvt_rne(v0)), vzp));
    const int32x4_t q1 = vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(q8rt_neon_cvt_rne(v1)), vzp));
    const int16x8_t r16 = vcombine_s16(vmovn_s32(vminq_s32(q0, vmax)), vmovn_s32(vminq_s32(q1, vmax)));
    vst1_u8(y + k, vmovn_u16(vreinterpretq_u16_s16(r16))); /* the low 8 bits, as the twin stores */
  }
  for (; k < d; k++) { /* the last d % 8 outputs: the same operations one lane at a time */
    const int32_t xi = s ? (int32_t)(int8_t)x[k] : (int32_t)x[k];
    const float v = table[(uint8_t)(adj + xi)] * p->y_factor / sum;
    int32_t r = (int32_t)((uint32_t)vgetq_lane_s32(q8rt_neon_cvt_rne(vdupq_n_f32(v)), 0) + (uint32_t)p->y_zp);
    if (r > p->qmax) r = p->qmax;
    y[k] = (uint8_t)r;
  }
}

void q8rt_q8_softmax_ukernel__neon(size_t rows, size_t d, const uint8_t *x, uint8_t *y, const float table[256],
                                   const q8rt_q8_softmax_params *p) {
  for (size_t r = 0; r < rows; r++) sm_row(d, x + r * d, y + r * d, table, p);
}
