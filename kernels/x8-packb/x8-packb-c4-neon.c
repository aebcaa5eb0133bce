/* x8-packb for NEON, 8 columns at a time: the 8 bytes of each of 4 rows (a zero-padded copy past
 * n, zero rows past k) are xored into the int8 domain, zeroed in padded columns and stored
 * interleaved by one st4 (the 8 columns x 4 k of a group). Column sums add the int8 bytes per
 * group (two saddl, one add: |sum| <= 512 in int16) into int32 lanes, and 128 per row after the
 * loop. nr must be a multiple of 8 (the NEON GEMM variants have 8); otherwise the scalar twin
 * runs. Integer arithmetic only: the twin's bytes and wrapping sums. */
#include <arm_neon.h>
#include <string.h>

#include "x8-packb/x8-packb.h"

static inline uint8x8_t packb_row(const uint8_t *p, size_t nv, uint8x8_t vflip, uint8x8_t vmask) {
  if (nv == 8) return veor_u8(vld1_u8(p), vflip);
  uint8_t t[8] = {0};
  memcpy(t, p, nv);
  return vand_u8(veor_u8(vld1_u8(t), vflip), vmask);
}

void q8rt_x8_packb_ukernel_c4__neon(size_t k, size_t n, const uint8_t *x, size_t x_stride, uint8_t x_xor, size_t nr,
                                    uint32_t bias_base, uint32_t bias_mul, void *packed, uint32_t *colsum) {
  if (nr % 8 != 0) {
    q8rt_x8_packb_ukernel_c4__scalar(k, n, x, x_stride, x_xor, nr, bias_base, bias_mul, packed, colsum);
    return;
  }
  static const uint8_t lanes[16] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
  const size_t k4 = (k + 3) / 4;
  const size_t block = q8rt_x8_packb_block_bytes(k, nr);
  const uint8x8_t vflip = vdup_n_u8((uint8_t)(x_xor ^ 0x80)), vzero = vdup_n_u8(0);
  const uint32x4_t vk128 = vdupq_n_u32(128u * (uint32_t)k);
  const uint32x4_t vbase = vdupq_n_u32(bias_base), vmul = vdupq_n_u32(bias_mul);
  const uint32x4_t idx_lo = {0, 1, 2, 3}, idx_hi = {4, 5, 6, 7};
  uint8_t *out = packed;
  for (size_t n0 = 0; n0 < n; n0 += nr, out += block) {
    for (size_t h = 0; h < nr; h += 8) {
      const size_t c0 = n0 + h;
      const size_t nv = c0 >= n ? 0 : n - c0 < 8 ? n - c0 : 8;
      const uint8x8_t vmask = vclt_u8(vld1_u8(lanes), vdup_n_u8((uint8_t)nv));
      int32x4_t s_lo = vdupq_n_s32(0), s_hi = s_lo;
      uint8_t *b = out + nr * sizeof(int32_t) + h * 4;
      const uint8_t *xp = x + c0;
      for (size_t g = 0; g < k4; g++, b += nr * 4) {
        uint8x8x4_t r;
        r.val[0] = r.val[1] = r.val[2] = r.val[3] = vzero;
        if (nv > 0) {
          const size_t kk = 4 * g;
          r.val[0] = packb_row(xp + kk * x_stride, nv, vflip, vmask);
          if (kk + 1 < k) r.val[1] = packb_row(xp + (kk + 1) * x_stride, nv, vflip, vmask);
          if (kk + 2 < k) r.val[2] = packb_row(xp + (kk + 2) * x_stride, nv, vflip, vmask);
          if (kk + 3 < k) r.val[3] = packb_row(xp + (kk + 3) * x_stride, nv, vflip, vmask);
        }
        vst4_u8(b, r);
        const int16x8_t s = vaddq_s16(vaddl_s8(vreinterpret_s8_u8(r.val[0]), vreinterpret_s8_u8(r.val[1])),
                                      vaddl_s8(vreinterpret_s8_u8(r.val[2]), vreinterpret_s8_u8(r.val[3])));
        s_lo = vaddw_s16(s_lo, vget_low_s16(s));
        s_hi = vaddw_high_s16(s_hi, s);
      }
      /* int8 sums + 128 per row: the uint8-domain sums */
      const uint32x4_t sum_lo = vaddq_u32(vreinterpretq_u32_s32(s_lo), vk128);
      const uint32x4_t sum_hi = vaddq_u32(vreinterpretq_u32_s32(s_hi), vk128);
      const uint32x4_t vn = vdupq_n_u32((uint32_t)nv);
      const uint32x4_t b_lo = vandq_u32(vcltq_u32(idx_lo, vn), vmlsq_u32(vbase, vmul, sum_lo));
      const uint32x4_t b_hi = vandq_u32(vcltq_u32(idx_hi, vn), vmlsq_u32(vbase, vmul, sum_hi));
      vst1q_u32((uint32_t *)(void *)(out + h * sizeof(int32_t)), b_lo);
      vst1q_u32((uint32_t *)(void *)(out + h * sizeof(int32_t) + 16), b_hi);
      if (colsum != NULL && nv > 0) {
        uint32_t t[8];
        vst1q_u32(t, sum_lo);
        vst1q_u32(t + 4, sum_hi);
        memcpy(colsum + c0, t, nv * sizeof(uint32_t));
      }
    }
    memset(out + nr * sizeof(int32_t) + k4 * nr * 4, 0, nr * sizeof(float));
  }
}
