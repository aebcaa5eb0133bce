/* Depthwise convolution, 16 channels per block, ARMv8.0 NEON, packed layout of q8rt-kernels.h:
 * int32 bias'[16] | int16 w[taps][16] | float scale[16]; any number of taps (kernel size, stride
 * and dilation live in the indirection buffer).
 *
 * Per tap: the 16 activation bytes (^ x_xor, so u8) are widened to u16 with uxtl, which as s16 are
 * 0..255, and smlal/smlal2 multiply them by the int16 weights into the four int32 accumulators:
 * every product is exact (255 * 32768 < 2^31) and the sum wraps like the contract's int32. No
 * product pair ever shares an int16 (XNNPACK's mla8 route does, and overflows for two
 * (-128) * (-128)). Two output pixels per pass share each weight load.
 *
 * Reads only the `channels` bytes of each input row: a partial last block copies its bytes to a
 * stack buffer. The packed weights are read whole (the last block is padded). */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-neon.h"

#define CB 16

static inline __attribute__((always_inline)) uint8x16_t dw_load16(const uint8_t *p, size_t n, int partial) {
  if (partial) {
    uint8_t buf[CB] = {0};
    memcpy(buf, p, n);
    return vld1q_u8(buf);
  }
  return vld1q_u8(p);
}

static inline __attribute__((always_inline)) void dw_mac(int32x4_t acc[4], uint8x16_t x, int16x8_t w_lo,
                                                         int16x8_t w_hi) {
  const int16x8_t x_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x)));
  const int16x8_t x_hi = vreinterpretq_s16_u16(vmovl_high_u8(x));
  acc[0] = vmlal_s16(acc[0], vget_low_s16(x_lo), vget_low_s16(w_lo));
  acc[1] = vmlal_high_s16(acc[1], x_lo, w_lo);
  acc[2] = vmlal_s16(acc[2], vget_low_s16(x_hi), vget_low_s16(w_hi));
  acc[3] = vmlal_high_s16(acc[3], x_hi, w_hi);
}

static inline __attribute__((always_inline)) void dw_store(uint8_t *out, const int32x4_t acc[4], const float *ps,
                                                           const q8rt_neon_requant *rq, size_t n, int partial) {
  const uint8x8_t y_lo = q8rt_neon_requant8(acc[0], acc[1], vld1q_f32(ps), vld1q_f32(ps + 4), rq);
  const uint8x8_t y_hi = q8rt_neon_requant8(acc[2], acc[3], vld1q_f32(ps + 8), vld1q_f32(ps + 12), rq);
  if (!partial) {
    vst1q_u8(out, vcombine_u8(y_lo, y_hi));
  } else if (n >= 8) {
    vst1_u8(out, y_lo);
    q8rt_neon_store_partial8(out + 8, y_hi, n - 8);
  } else {
    q8rt_neon_store_partial8(out, y_lo, n);
  }
}

/* np (1 or 2) output pixels of one channel block. */
static inline __attribute__((always_inline)) void dw_block(const int np, const int partial, const uint8_t *const *in0,
                                                           const uint8_t *const *in1, size_t taps, size_t c0, size_t n,
                                                           const uint8_t *blk, uint8_t *out0, uint8_t *out1,
                                                           const uint8x16_t vxor, const q8rt_neon_requant *rq) {
  const int32_t *pb = (const int32_t *)(const void *)blk;
  const int16_t *pw = (const int16_t *)(const void *)(blk + CB * sizeof(int32_t));
  const float *ps = (const float *)(const void *)(blk + CB * (sizeof(int32_t) + taps * sizeof(int16_t)));
  int32x4_t a0[4], a1[4];
  for (int i = 0; i < 4; i++) a0[i] = a1[i] = vld1q_s32(pb + 4 * i);
  for (size_t t = 0; t < taps; t++) {
    const int16x8_t w_lo = vld1q_s16(pw + t * CB), w_hi = vld1q_s16(pw + t * CB + 8);
    dw_mac(a0, veorq_u8(dw_load16(in0[t] + c0, n, partial), vxor), w_lo, w_hi);
    if (np == 2) dw_mac(a1, veorq_u8(dw_load16(in1[t] + c0, n, partial), vxor), w_lo, w_hi);
  }
  dw_store(out0 + c0, a0, ps, rq, n, partial);
  if (np == 2) dw_store(out1 + c0, a1, ps, rq, n, partial);
}

static inline __attribute__((always_inline)) void dw_pixels(const int np, size_t channels, const uint8_t *const *in0,
                                                            size_t taps, const uint8_t *w, uint8_t *out0,
                                                            size_t y_stride, const uint8x16_t vxor,
                                                            const q8rt_neon_requant *rq) {
  const uint8_t *const *in1 = in0 + taps;
  uint8_t *out1 = out0 + y_stride;
  const size_t block_bytes = CB * (sizeof(int32_t) + taps * sizeof(int16_t) + sizeof(float));
  size_t c0 = 0;
  for (; c0 + CB <= channels; c0 += CB, w += block_bytes)
    dw_block(np, 0, in0, in1, taps, c0, CB, w, out0, out1, vxor, rq);
  if (c0 < channels) dw_block(np, 1, in0, in1, taps, c0, channels - c0, w, out0, out1, vxor, rq);
}

void q8rt_qu8_dwconv_minmax_fp32_ukernel_16c__neon(size_t channels, size_t pixels, const uint8_t *const *indirection,
                                                   size_t taps, const void *w, void *y, size_t y_stride,
                                                   const q8rt_qu8_requant_params *p) {
  q8rt_neon_requant rq;
  rq.lo = vdupq_n_f32(p->y_lo);
  rq.hi = vdupq_n_f32(p->y_hi);
  rq.zp = vdupq_n_s16((int16_t)p->y_zero_point);
  const uint8x16_t vxor = vdupq_n_u8(p->x_xor);
  uint8_t *out = (uint8_t *)y;
  size_t px = 0;
  for (; px + 2 <= pixels; px += 2)
    dw_pixels(2, channels, indirection + px * taps, taps, (const uint8_t *)w, out + px * y_stride, y_stride, vxor, &rq);
  if (px < pixels)
    dw_pixels(1, channels, indirection + px * taps, taps, (const uint8_t *)w, out + px * y_stride, y_stride, vxor, &rq);
}
