/* qu8-dwconv2d-chw for NEON: 16 (then 8) outputs per step, kept in int32 registers over all taps.
 * Each tap's bytes (stride 1: one load; stride 2: ld2, whose even bytes are the outputs') are
 * widened to 16 bits (0..255, so exact as int16) and smlal by the tap's weight (|w| <= 255) adds
 * x * w exactly into int32 lanes, wrapping like the twin. The tail (fewer than 8 outputs, and the
 * last group of stride 2, whose 16-byte load would pass the row's last byte) and other strides run
 * the scalar twin. */
#include <arm_neon.h>

#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.h"

static inline uint8x8_t dw_load8(const uint8_t *p, size_t sw, uint8x8_t vxor) {
  return veor_u8(sw == 1 ? vld1_u8(p) : vld2_u8(p).val[0], vxor);
}

static inline uint8x16_t dw_load16(const uint8_t *p, size_t sw, uint8x16_t vxor) {
  return veorq_u8(sw == 1 ? vld1q_u8(p) : vld2q_u8(p).val[0], vxor);
}

void q8rt_qu8_dwconv2d_chw_i32_ukernel__neon(size_t ow, size_t kh, size_t kw, const uint8_t *x, size_t row_stride,
                                             size_t sw, size_t dw, uint8_t x_xor, const int32_t *w, int32_t bias,
                                             int32_t *y) {
  if (sw != 1 && sw != 2) {
    q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(ow, kh, kw, x, row_stride, sw, dw, x_xor, w, bias, y);
    return;
  }
  const uint8x16_t vxor = vdupq_n_u8(x_xor);
  const int32x4_t vbias = vdupq_n_s32(bias);
  /* stride 2 reads 2 * outputs bytes per step: the group must not be the row's last */
  const size_t vec_end = sw == 1 ? ow : ow > 0 ? ow - 1 : 0;
  size_t ox = 0;
  for (; ox + 16 <= vec_end; ox += 16) {
    int32x4_t a0 = vbias, a1 = vbias, a2 = vbias, a3 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) {
        const int16_t wv = (int16_t)w[ky * kw + kx];
        const uint8x16_t v = dw_load16(r + kx * dw, sw, vxor);
        const int16x8_t lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(v)));
        const int16x8_t hi = vreinterpretq_s16_u16(vmovl_high_u8(v));
        a0 = vmlal_n_s16(a0, vget_low_s16(lo), wv);
        a1 = vmlal_high_n_s16(a1, lo, wv);
        a2 = vmlal_n_s16(a2, vget_low_s16(hi), wv);
        a3 = vmlal_high_n_s16(a3, hi, wv);
      }
    }
    vst1q_s32(y + ox, a0);
    vst1q_s32(y + ox + 4, a1);
    vst1q_s32(y + ox + 8, a2);
    vst1q_s32(y + ox + 12, a3);
  }
  for (; ox + 8 <= vec_end; ox += 8) {
    int32x4_t a0 = vbias, a1 = vbias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) {
        const int16_t wv = (int16_t)w[ky * kw + kx];
        const int16x8_t v = vreinterpretq_s16_u16(vmovl_u8(dw_load8(r + kx * dw, sw, vget_low_u8(vxor))));
        a0 = vmlal_n_s16(a0, vget_low_s16(v), wv);
        a1 = vmlal_high_n_s16(a1, v, wv);
      }
    }
    vst1q_s32(y + ox, a0);
    vst1q_s32(y + ox + 4, a1);
  }
  if (ox < ow) {
    q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(ow - ox, kh, kw, x + ox * sw, row_stride, sw, dw, x_xor, w, bias, y + ox);
  }
}
