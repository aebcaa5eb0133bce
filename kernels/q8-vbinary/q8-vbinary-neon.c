/* QLinearAdd / QLinearMul rows, AArch64 NEON: byte-identical to the scalar twin, 16 elements per
 * step. The 8-bit inputs widen exactly to int32 and float; vadd is fmla(fmla(f, x2, r2), x1, r1)
 * (the twin's two exactly rounded fmaf, same order); vmul's int32 product is exact (|.| <= 255^2)
 * and converts exactly, then one fmul and one fadd (no fusion). cvt is cvtps2dq's: fcvtns rounds
 * half to even; a NaN or a value outside [-2^31, 2^31) becomes INT32_MIN on x86, which the
 * saturation then takes to the low end, so it is selected as lo directly; then the clamp. Values
 * in the 8-bit range narrow exactly. The tail goes through stack copies (nothing read or written
 * past n; in place works as each block is read before it is written). */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"

typedef struct vb4 {
  int32x4_t v[4];
} vb4;

typedef struct vb_consts {
  float32x4_t r1, r2, f, ratio, zc, min31, max31;
  int32x4_t z1, z2, lo, hi;
  uint8x16_t flip;
} vb_consts;

static inline __attribute__((always_inline)) vb4 widen(const uint8_t *x, uint8x16_t flip, int is_signed) {
  vb4 r;
  if (is_signed) {
    const int8x16_t b = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(x), flip));
    const int16x8_t h0 = vmovl_s8(vget_low_s8(b)), h1 = vmovl_s8(vget_high_s8(b));
    r.v[0] = vmovl_s16(vget_low_s16(h0));
    r.v[1] = vmovl_s16(vget_high_s16(h0));
    r.v[2] = vmovl_s16(vget_low_s16(h1));
    r.v[3] = vmovl_s16(vget_high_s16(h1));
  } else {
    const uint8x16_t b = veorq_u8(vld1q_u8(x), flip);
    const uint16x8_t h0 = vmovl_u8(vget_low_u8(b)), h1 = vmovl_u8(vget_high_u8(b));
    r.v[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h0)));
    r.v[1] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(h0)));
    r.v[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h1)));
    r.v[3] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(h1)));
  }
  return r;
}

static inline __attribute__((always_inline)) int32x4_t cvt_sat(float32x4_t v, const vb_consts *k) {
  const uint32x4_t ok = vandq_u32(vcgeq_f32(v, k->min31), vcltq_f32(v, k->max31));
  const int32x4_t i = vbslq_s32(ok, vcvtnq_s32_f32(v), k->lo);
  return vminq_s32(vmaxq_s32(i, k->lo), k->hi);
}

/* op: 0 add, 1 mul; c: x2 is the one element x2c (the *c variants) */
static inline __attribute__((always_inline)) void block16(const uint8_t *x1, const uint8_t *x2, int32x4_t x2c,
                                                          uint8_t *y, const vb_consts *k, int is_signed, int op,
                                                          int c) {
  const vb4 a = widen(x1, k->flip, is_signed);
  vb4 b;
  if (c) {
    b.v[0] = b.v[1] = b.v[2] = b.v[3] = x2c;
  } else {
    b = widen(x2, k->flip, is_signed);
  }
  int32x4_t q[4];
  for (int i = 0; i < 4; i++) {
    float32x4_t v;
    if (op == 0) {
      const float32x4_t t = vfmaq_f32(k->f, vcvtq_f32_s32(b.v[i]), k->r2);
      v = vfmaq_f32(t, vcvtq_f32_s32(a.v[i]), k->r1);
    } else {
      const int32x4_t prod = vmulq_s32(vsubq_s32(a.v[i], k->z1), vsubq_s32(b.v[i], k->z2));
      v = vaddq_f32(vmulq_f32(vcvtq_f32_s32(prod), k->ratio), k->zc);
    }
    q[i] = cvt_sat(v, k);
  }
  const int16x8_t h0 = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
  const int16x8_t h1 = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
  vst1q_u8(y, veorq_u8(vreinterpretq_u8_s8(vcombine_s8(vmovn_s16(h0), vmovn_s16(h1))), k->flip));
}

static inline __attribute__((always_inline)) void vbinary(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y,
                                                          const q8rt_q8_vbinary_params *p, int is_signed, int op,
                                                          int c) {
  vb_consts k;
  k.r1 = vdupq_n_f32(p->r1);
  k.r2 = vdupq_n_f32(p->r2);
  k.f = vdupq_n_f32(p->f);
  k.ratio = vdupq_n_f32(p->ratio);
  k.zc = vdupq_n_f32(p->zc);
  k.min31 = vdupq_n_f32(-2147483648.0f);
  k.max31 = vdupq_n_f32(2147483648.0f);
  k.z1 = vdupq_n_s32(p->z1);
  k.z2 = vdupq_n_s32(p->z2);
  k.lo = vdupq_n_s32(is_signed ? -128 : 0);
  k.hi = vdupq_n_s32(is_signed ? 127 : 255);
  k.flip = vdupq_n_u8(p->flip);
  const uint8_t x2f = c ? (uint8_t)(x2[0] ^ p->flip) : 0;
  const int32x4_t x2c = vdupq_n_s32(!c ? 0 : is_signed ? (int32_t)(int8_t)x2f : (int32_t)x2f);
  for (; n >= 16; n -= 16, x1 += 16, x2 += c ? 0 : 16, y += 16) block16(x1, x2, x2c, y, &k, is_signed, op, c);
  if (n != 0) {
    uint8_t b1[16] = {0}, b2[16] = {0}, out[16];
    memcpy(b1, x1, n);
    if (!c) memcpy(b2, x2, n);
    block16(b1, b2, x2c, out, &k, is_signed, op, c);
    memcpy(y, out, n);
  }
}

#define VB_NEON(T, SUF, SIGNED)                                                                                      \
  void q8rt_##SUF##_vadd_ukernel__neon(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) {  \
    vbinary(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, SIGNED, 0, 0);                             \
  }                                                                                                                  \
  void q8rt_##SUF##_vaddc_ukernel__neon(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) { \
    vbinary(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, SIGNED, 0, 1);                             \
  }                                                                                                                  \
  void q8rt_##SUF##_vmul_ukernel__neon(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) {  \
    vbinary(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, SIGNED, 1, 0);                             \
  }                                                                                                                  \
  void q8rt_##SUF##_vmulc_ukernel__neon(size_t n, const T *x1, const T *x2, T *y, const q8rt_q8_vbinary_params *p) { \
    vbinary(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, SIGNED, 1, 1);                             \
  }

VB_NEON(uint8_t, qu8, 0)
VB_NEON(int8_t, qs8, 1)
