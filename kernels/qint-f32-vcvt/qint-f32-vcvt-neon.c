/* DequantizeLinear, AArch64 NEON: y = (float)(x - zp) * scale, byte-identical to the scalar
 * variants: the widening and the int32 subtraction are exact, scvtf rounds to nearest as the
 * scalar int32 -> float conversion does (exact below 2^24, i.e. for every 8/16-bit type), and fmul
 * is the same IEEE product (no fused multiply-add). 16 elements per iteration; the tail goes
 * through a stack copy, so nothing is read or written past n. */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"

static inline __attribute__((always_inline)) void dq4(int32x4_t v, int32x4_t zp, float32x4_t scale, float *y) {
  vst1q_f32(y, vmulq_f32(vcvtq_f32_s32(vsubq_s32(v, zp)), scale));
}

static inline __attribute__((always_inline)) void dq8_s16(int16x8_t h, int32x4_t zp, float32x4_t scale, float *y) {
  dq4(vmovl_s16(vget_low_s16(h)), zp, scale, y);
  dq4(vmovl_s16(vget_high_s16(h)), zp, scale, y + 4);
}

static inline __attribute__((always_inline)) void dq8_u16(uint16x8_t h, int32x4_t zp, float32x4_t scale, float *y) {
  dq4(vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h))), zp, scale, y);
  dq4(vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(h))), zp, scale, y + 4);
}

/* 16 elements of kind 0 qu8, 1 qs8, 2 qu16, 3 qs16, 4 qs32 from x (bytes). */
static inline __attribute__((always_inline)) void block16(const uint8_t *x, float *y, int32x4_t zp, float32x4_t scale,
                                                          int kind) {
  switch (kind) {
    case 0: {
      const uint8x16_t b = vld1q_u8(x);
      dq8_u16(vmovl_u8(vget_low_u8(b)), zp, scale, y);
      dq8_u16(vmovl_u8(vget_high_u8(b)), zp, scale, y + 8);
      break;
    }
    case 1: {
      const int8x16_t b = vld1q_s8((const int8_t *)(const void *)x);
      dq8_s16(vmovl_s8(vget_low_s8(b)), zp, scale, y);
      dq8_s16(vmovl_s8(vget_high_s8(b)), zp, scale, y + 8);
      break;
    }
    case 2: {
      uint16x8_t h0, h1;
      memcpy(&h0, x, 16);
      memcpy(&h1, x + 16, 16);
      dq8_u16(h0, zp, scale, y);
      dq8_u16(h1, zp, scale, y + 8);
      break;
    }
    case 3: {
      int16x8_t h0, h1;
      memcpy(&h0, x, 16);
      memcpy(&h1, x + 16, 16);
      dq8_s16(h0, zp, scale, y);
      dq8_s16(h1, zp, scale, y + 8);
      break;
    }
    default:
      for (int i = 0; i < 4; i++) {
        int32x4_t v;
        memcpy(&v, x + 16 * i, 16);
        dq4(v, zp, scale, y + 4 * i);
      }
      break;
  }
}

static inline __attribute__((always_inline)) void qx_f32(size_t n, const uint8_t *x, float *y,
                                                         const q8rt_qint_f32_vcvt_params *p, int kind) {
  const int32x4_t zp = vdupq_n_s32(p->zero_point);
  const float32x4_t scale = vdupq_n_f32(p->scale);
  const size_t es = kind < 2 ? 1 : kind < 4 ? 2 : 4;
  for (; n >= 16; n -= 16, x += 16 * es, y += 16) block16(x, y, zp, scale, kind);
  if (n != 0) {
    uint8_t buf[64] = {0};
    float out[16];
    memcpy(buf, x, n * es);
    block16(buf, out, zp, scale, kind);
    memcpy(y, out, n * sizeof(float));
  }
}

void q8rt_qu8_f32_vcvt_ukernel__neon(size_t n, const uint8_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  qx_f32(n, x, y, p, 0);
}

void q8rt_qs8_f32_vcvt_ukernel__neon(size_t n, const int8_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  qx_f32(n, (const uint8_t *)x, y, p, 1);
}

void q8rt_qu16_f32_vcvt_ukernel__neon(size_t n, const uint16_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  qx_f32(n, (const uint8_t *)x, y, p, 2);
}

void q8rt_qs16_f32_vcvt_ukernel__neon(size_t n, const int16_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  qx_f32(n, (const uint8_t *)x, y, p, 3);
}

void q8rt_qs32_f32_vcvt_ukernel__neon(size_t n, const int32_t *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  qx_f32(n, (const uint8_t *)x, y, p, 4);
}
