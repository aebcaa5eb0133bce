/* QuantizeLinear, AArch64 NEON: byte-identical to the scalar variants. 16 floats per iteration:
 *   v = x / scale            (fdiv: the same IEEE division as the scalar x[i] / scale)
 *   v = min(max(v, lo), hi)  (fmaxnm returns the number when the other operand is a quiet NaN, so a
 *                             NaN quotient becomes lo, as q8rt_round_clamp does; after that v is a
 *                             number in [lo, hi])
 *   q = fcvtns(v) + zp       (round half to even, independent of FPCR's rounding mode)
 * then narrowed with saturating moves (exact: every value is already inside the type's range). A
 * tail of n % 16 elements goes through a zero-padded stack copy, so nothing is read or written
 * past n. */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"

typedef struct vq {
  float32x4_t scale, lo, hi;
  int32x4_t zp;
} vq;

static inline __attribute__((always_inline)) int32x4_t quant4(const float *x, const vq *q) {
  float32x4_t v = vdivq_f32(vld1q_f32(x), q->scale);
  v = vminnmq_f32(vmaxnmq_f32(v, q->lo), q->hi);
  return vaddq_s32(vcvtnq_s32_f32(v), q->zp);
}

static inline __attribute__((always_inline)) int16x8_t quant8_s16(const float *x, const vq *q) {
  return vcombine_s16(vqmovn_s32(quant4(x, q)), vqmovn_s32(quant4(x + 4, q)));
}

static inline __attribute__((always_inline)) uint16x8_t quant8_u16(const float *x, const vq *q) {
  return vcombine_u16(vqmovun_s32(quant4(x, q)), vqmovun_s32(quant4(x + 4, q)));
}

static inline vq vq_init(const q8rt_f32_qint_vcvt_params *p) {
  vq q = {vdupq_n_f32(p->scale), vdupq_n_f32(p->lo), vdupq_n_f32(p->hi), vdupq_n_s32(p->zero_point)};
  return q;
}

/* One block of 16: kind 0 qu8, 1 qs8, 2 qu16, 3 qs16 (y as bytes). */
static inline __attribute__((always_inline)) void block16(const float *x, uint8_t *y, const vq *q, int kind) {
  switch (kind) {
    case 0: {
      const uint8x16_t b = vcombine_u8(vqmovun_s16(quant8_s16(x, q)), vqmovun_s16(quant8_s16(x + 8, q)));
      vst1q_u8(y, b);
      break;
    }
    case 1: {
      const int8x16_t b = vcombine_s8(vqmovn_s16(quant8_s16(x, q)), vqmovn_s16(quant8_s16(x + 8, q)));
      vst1q_s8((int8_t *)(void *)y, b);
      break;
    }
    case 2: {
      const uint16x8_t h0 = quant8_u16(x, q), h1 = quant8_u16(x + 8, q);
      memcpy(y, &h0, 16);
      memcpy(y + 16, &h1, 16);
      break;
    }
    default: {
      const int16x8_t h0 = quant8_s16(x, q), h1 = quant8_s16(x + 8, q);
      memcpy(y, &h0, 16);
      memcpy(y + 16, &h1, 16);
      break;
    }
  }
}

static inline __attribute__((always_inline)) void f32_qx(size_t n, const float *x, uint8_t *y,
                                                         const q8rt_f32_qint_vcvt_params *p, int kind) {
  const vq q = vq_init(p);
  const size_t es = kind < 2 ? 1 : 2;
  for (; n >= 16; n -= 16, x += 16, y += 16 * es) block16(x, y, &q, kind);
  if (n != 0) {
    float buf[16] = {0};
    uint8_t out[32];
    memcpy(buf, x, n * sizeof(float));
    block16(buf, out, &q, kind);
    memcpy(y, out, n * es);
  }
}

void q8rt_f32_qu8_vcvt_ukernel__neon(size_t n, const float *x, uint8_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_qx(n, x, y, p, 0);
}

void q8rt_f32_qs8_vcvt_ukernel__neon(size_t n, const float *x, int8_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_qx(n, x, (uint8_t *)y, p, 1);
}

void q8rt_f32_qu16_vcvt_ukernel__neon(size_t n, const float *x, uint16_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_qx(n, x, (uint8_t *)y, p, 2);
}

void q8rt_f32_qs16_vcvt_ukernel__neon(size_t n, const float *x, int16_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_qx(n, x, (uint8_t *)y, p, 3);
}
