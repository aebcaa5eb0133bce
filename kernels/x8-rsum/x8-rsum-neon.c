/* x8-rsum, NEON. Signed input is biased to unsigned (x ^ 0x80 = x + 128) and the bias removed at
 * the end (128 per element), so both types take the unsigned route; integer arithmetic only, so
 * the sums equal the scalar twin's exactly (uint32 wraparound included).
 *   rsum: uaddlp then uadalp add 16 bytes into 4 uint32 lanes per step (all modulo 2^32, as the
 *         twin's total).
 *   csum: 16 channels at a time, bytes added into 16-bit lanes for up to 256 pixels (at most
 *         256 * 255 = 65280 < 2^16), then widened into 32-bit totals. */
#include <arm_neon.h>

#include "x8-rsum/x8-rsum.h"

void q8rt_x8_rsum_ukernel__neon(size_t rows, size_t n, const uint8_t *x, size_t stride, int is_signed, int32_t *out) {
  const uint8_t xor8 = is_signed ? 0x80 : 0;
  const uint8x16_t flip = vdupq_n_u8(xor8);
  for (size_t r = 0; r < rows; r++) {
    const uint8_t *p = x + r * stride;
    uint32x4_t acc = vdupq_n_u32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) acc = vpadalq_u16(acc, vpaddlq_u8(veorq_u8(vld1q_u8(p + i), flip)));
    uint32_t s = vaddvq_u32(acc);
    for (; i < n; i++) s += (uint8_t)(p[i] ^ xor8);
    if (is_signed) s -= 128u * (uint32_t)n;
    out[r] = (int32_t)s;
  }
}

void q8rt_x8_csum_ukernel__neon(size_t pixels, size_t channels, const uint8_t *x, size_t stride, int is_signed,
                                int32_t *out) {
  const uint8x16_t flip = vdupq_n_u8(is_signed ? 0x80 : 0);
  const uint32x4_t bias = vdupq_n_u32(is_signed ? 128u * (uint32_t)pixels : 0u);
  size_t c = 0;
  for (; c + 16 <= channels; c += 16) {
    uint32x4_t t0 = vdupq_n_u32(0), t1 = t0, t2 = t0, t3 = t0; /* 32-bit totals, 4 channels each */
    for (size_t p0 = 0; p0 < pixels; p0 += 256) {
      const size_t p1 = pixels - p0 < 256 ? pixels : p0 + 256;
      uint16x8_t lo = vdupq_n_u16(0), hi = lo; /* 16-bit partial sums, channels 0-7 and 8-15 */
      for (size_t p = p0; p < p1; p++) {
        const uint8x16_t v = veorq_u8(vld1q_u8(x + p * stride + c), flip);
        lo = vaddw_u8(lo, vget_low_u8(v));
        hi = vaddw_high_u8(hi, v);
      }
      t0 = vaddw_u16(t0, vget_low_u16(lo));
      t1 = vaddw_high_u16(t1, lo);
      t2 = vaddw_u16(t2, vget_low_u16(hi));
      t3 = vaddw_high_u16(t3, hi);
    }
    vst1q_s32(out + c, vreinterpretq_s32_u32(vsubq_u32(t0, bias)));
    vst1q_s32(out + c + 4, vreinterpretq_s32_u32(vsubq_u32(t1, bias)));
    vst1q_s32(out + c + 8, vreinterpretq_s32_u32(vsubq_u32(t2, bias)));
    vst1q_s32(out + c + 12, vreinterpretq_s32_u32(vsubq_u32(t3, bias)));
  }
  if (c < channels) q8rt_x8_csum_ukernel__scalar(pixels, channels - c, x + c, stride, is_signed, out + c);
}
