/* 8x8c4 NCHW GEMM tile shared by the dot-product variants (included once per variant file): the
 * roles of the NHWC kernel swapped, as in the AVX-512 variant. A 16-byte panel load holds 4 pixels
 * x 4 k (x8-zip-x4, already in the uint8 domain), a 16-byte weight load 4 channels x 4 k, and
 * `dot acc, x, w.4b[lane]` adds channel `lane`'s 4-k dot product with each pixel into its int32
 * lane: a channel's 8 outputs land side by side in two accumulators, a row of the NCHW output.
 * Per 4 k: 2 panel loads, 2 weight loads, 16 dot products into 16 accumulators. A block always
 * holds MR = 8 packed channels (the packing pads with zero ones): all are computed, the first mr
 * stored. The file that includes this defines
 *   Q8RT_CHW_DOT(acc, x, w, lane)  the dot instruction (x: uint8x16_t, w: int8x16_t)
 *   Q8RT_CHW_X_FLIP                0x80 when the dot product wants s8 activations (sdot: x - 128,
 *                                  each channel's bias then gains 128 * sum_k w, summed once per
 *                                  call from the packed weights), 0 for u8
 *   Q8RT_CHW_FN                    the function name
 * All int32 arithmetic wraps like the twin's accumulator. */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-neon.h"

#define Q8RT_CHW_FOR8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* The requantized 8 outputs of one channel, the first n of them stored. */
static __attribute__((noinline)) void chw_store(uint8_t *y, int32x4_t lo, int32x4_t hi, float scale, size_t n,
                                                const q8rt_neon_requant *rq) {
  const float32x4_t s = vdupq_n_f32(scale);
  const uint8x8_t v = q8rt_neon_requant8(lo, hi, s, s, rq);
  if (n >= 8)
    vst1_u8(y, v);
  else
    q8rt_neon_store_partial8(y, v, n);
}

void Q8RT_CHW_FN(size_t mr, size_t nc, size_t kc, const uint8_t *x, size_t x_stride, const void *w, uint8_t *y,
                 size_t y_stride, const q8rt_qu8_requant_params *p) {
  const size_t k4 = (kc + 3) / 4;
  const uint8_t *wb = (const uint8_t *)w;
  const int8_t *wp = (const int8_t *)(wb + 8 * sizeof(int32_t));
  const uint8_t *sp = wb + 8 * (sizeof(int32_t) + 4 * k4);
  q8rt_neon_requant rq;
  rq.lo = vdupq_n_f32(p->y_lo);
  rq.hi = vdupq_n_f32(p->y_hi);
  rq.zp = vdupq_n_s16((int16_t)p->y_zero_point);
  int32x4_t b_lo = vld1q_s32((const int32_t *)(const void *)wb);
  int32x4_t b_hi = vld1q_s32((const int32_t *)(const void *)(wb + 16));
#if Q8RT_CHW_X_FLIP
  {
    const int8x16_t ones = vdupq_n_s8(1);
    int32x4_t s_lo = vdupq_n_s32(0), s_hi = s_lo;
    for (size_t g = 0; g < k4; g++) {
      s_lo = vdotq_s32(s_lo, vld1q_s8(wp + 32 * g), ones);
      s_hi = vdotq_s32(s_hi, vld1q_s8(wp + 32 * g + 16), ones);
    }
    b_lo = q8rt_vaddq_s32_wrap(b_lo, vshlq_n_s32(s_lo, 7));
    b_hi = q8rt_vaddq_s32_wrap(b_hi, vshlq_n_s32(s_hi, 7));
  }
  const uint8x16_t vflip = vdupq_n_u8(0x80);
#endif
  float scale[8];
  memcpy(scale, sp, sizeof(scale));
  for (size_t n0 = 0; n0 < nc; n0 += 8) {
#define DECL_ACC(m) int32x4_t acc##m##a = vdupq_laneq_s32(m < 4 ? b_lo : b_hi, m % 4), acc##m##b = acc##m##a;
    Q8RT_CHW_FOR8(DECL_ACC)
#undef DECL_ACC
    const uint8_t *xp = x + 4 * n0;
    const int8_t *wk = wp;
    for (size_t g = 0; g < k4; g++) {
      uint8x16_t x0 = vld1q_u8(xp), x1 = vld1q_u8(xp + 16);
      xp += x_stride;
#if Q8RT_CHW_X_FLIP
      x0 = veorq_u8(x0, vflip);
      x1 = veorq_u8(x1, vflip);
#endif
      const int8x16_t w0 = vld1q_s8(wk), w1 = vld1q_s8(wk + 16);
      wk += 32;
#define DOT(m)                                                     \
  acc##m##a = Q8RT_CHW_DOT(acc##m##a, x0, m < 4 ? w0 : w1, m % 4); \
  acc##m##b = Q8RT_CHW_DOT(acc##m##b, x1, m < 4 ? w0 : w1, m % 4);
      Q8RT_CHW_FOR8(DOT)
#undef DOT
    }
    const size_t left = nc - n0;
#define STORE(m) \
  if (m < mr) chw_store(y + m * y_stride + n0, acc##m##a, acc##m##b, scale[m], left, &rq);
    Q8RT_CHW_FOR8(STORE)
#undef STORE
  }
}
