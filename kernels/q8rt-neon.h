/* NEON epilogue shared by the aarch64 kernels: the numerics contract of q8rt-kernels.h,
 *   y = clamp(round_half_even((float)acc * scale), y_lo, y_hi) + y_zero_point,
 * for 8 int32 accumulators at a time, bit for bit what q8rt_round_clamp gives.
 *
 * - scvtf and fmul round to nearest like the scalar (float)acc * scale (no fused multiply-add).
 * - The clamp is fmaxnm then fminnm, written as intrinsics so no compiler can choose another
 *   instruction: fmaxnm returns the number when the other operand is a quiet NaN, so a NaN
 *   product (scale NaN, or 0 * inf) becomes y_lo as in the scalar twin (a product is never a
 *   signalling NaN). After that v is a number in [y_lo, y_hi].
 * - fcvtns rounds half to even, independent of FPCR's rounding mode.
 * - |y_lo|, |y_hi| <= 255, so the int16 narrowing and the zero-point add are exact, and the sum lies
 *   in the output type's range: truncating to 8 bits gives the right byte for u8 and s8 outputs. */
#ifndef Q8RT_NEON_H
#define Q8RT_NEON_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

typedef struct q8rt_neon_requant {
  float32x4_t lo, hi;
  int16x8_t zp;
} q8rt_neon_requant;

/* int32 lanes added / subtracted modulo 2^32, as the contract's accumulator and the scalar twins
 * (uint32 arithmetic) do. GCC's arm_neon.h writes vaddq_s32/vsubq_s32 as `a + b` on a signed
 * vector type, which UBSan reports when it wraps (a hostile bias near INT32_MAX, ConvInteger's
 * row-sum correction); the unsigned forms are the same instruction. */
static inline __attribute__((always_inline)) int32x4_t q8rt_vaddq_s32_wrap(int32x4_t a, int32x4_t b) {
  return vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(a), vreinterpretq_u32_s32(b)));
}
static inline __attribute__((always_inline)) int32x4_t q8rt_vsubq_s32_wrap(int32x4_t a, int32x4_t b) {
  return vreinterpretq_s32_u32(vsubq_u32(vreinterpretq_u32_s32(a), vreinterpretq_u32_s32(b)));
}

static inline __attribute__((always_inline)) int32x4_t q8rt_neon_round_clamp(int32x4_t acc, float32x4_t scale,
                                                                             const q8rt_neon_requant *r) {
  float32x4_t v = vmulq_f32(vcvtq_f32_s32(acc), scale);
  v = vminnmq_f32(vmaxnmq_f32(v, r->lo), r->hi);
  return vcvtnq_s32_f32(v);
}

static inline __attribute__((always_inline)) uint8x8_t q8rt_neon_requant8(int32x4_t acc_lo, int32x4_t acc_hi,
                                                                          float32x4_t s_lo, float32x4_t s_hi,
                                                                          const q8rt_neon_requant *r) {
  const int32x4_t q_lo = q8rt_neon_round_clamp(acc_lo, s_lo, r);
  const int32x4_t q_hi = q8rt_neon_round_clamp(acc_hi, s_hi, r);
  const int16x8_t q = vaddq_s16(vcombine_s16(vmovn_s32(q_lo), vmovn_s32(q_hi)), r->zp);
  return vreinterpret_u8_s8(vmovn_s16(q));
}

/* Round half to even with x86's cvtps2dq result out of range: INT32_MIN where v is not in
 * [-2^31, 2^31) or is NaN (fcvtns saturates instead), as q8rt_cvt_rne. fcvtns's rounding is in the
 * instruction, independent of FPCR. */
static inline __attribute__((always_inline)) int32x4_t q8rt_neon_cvt_rne(float32x4_t v) {
  const uint32x4_t in = vandq_u32(vcgeq_f32(v, vdupq_n_f32(-2147483648.0f)), vcltq_f32(v, vdupq_n_f32(2147483648.0f)));
  return vbslq_s32(in, vcvtnq_s32_f32(v), vdupq_n_s32(INT32_MIN));
}

/* Stores the first n (< 8) bytes of v. */
static inline __attribute__((always_inline)) void q8rt_neon_store_partial8(uint8_t *p, uint8x8_t v, size_t n) {
  if (n & 4) {
    const uint32_t t = vget_lane_u32(vreinterpret_u32_u8(v), 0);
    memcpy(p, &t, 4);
    p += 4;
    v = vext_u8(v, v, 4);
  }
  if (n & 2) {
    const uint16_t t = vget_lane_u16(vreinterpret_u16_u8(v), 0);
    memcpy(p, &t, 2);
    p += 2;
    v = vext_u8(v, v, 2);
  }
  if (n & 1) *p = vget_lane_u8(v, 0);
}

static inline __attribute__((always_inline)) uint32_t q8rt_load_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

#endif
